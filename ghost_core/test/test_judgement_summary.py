"""The run summary's lines: a rate per minute only for a run of at least a minute."""

from __future__ import annotations

import pytest

from ghost_core.levels import DecisionKind, SelfAssessmentLevel
from ghost_core.summary import CycleJudgement, RATE_MIN_DURATION_NS, summarize_judgement

pytestmark = pytest.mark.unit

_PROCEED, _HOLD = DecisionKind.PROCEED, DecisionKind.HOLD


def _run(duration_ns: int, decisions: list[DecisionKind]) -> list[CycleJudgement]:
    step = duration_ns // (len(decisions) - 1)
    return [CycleJudgement(i * step, SelfAssessmentLevel.KNOWN, SelfAssessmentLevel.KNOWN, kind)
            for i, kind in enumerate(decisions)]


def test_a_short_run_gives_counts_not_rates() -> None:
    """2.9 s with two decision changes: no '41.38/min'."""
    summary = summarize_judgement(_run(2_900_000_000, [_PROCEED, _HOLD, _HOLD, _PROCEED]))
    line = summary.lines()[1]
    assert line == 'judgement: level changes: raw 0, adjusted 0, decision 2', line
    assert '/min' not in ' '.join(summary.lines())


def test_a_run_of_a_minute_or_more_gives_rates() -> None:
    summary = summarize_judgement(_run(RATE_MIN_DURATION_NS * 2,
                                       [_PROCEED, _HOLD, _HOLD, _PROCEED]))
    assert summary.lines()[1] == ('judgement: level changes: raw 0 (0.00/min), adjusted 0, '
                                  'decision 2 (1.00/min)')
