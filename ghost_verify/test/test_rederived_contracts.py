"""The checks of verify_all's pass take the messages the re-derivation matched as contracts.

A recorded message that is exactly the agent's re-derived one is not parsed again by the
conformance and history checks (``Rederivation.matched``): the reports must be the ones a
pass without the re-derivation gives, on honest runs and on runs whose messages differ from
the re-run (those are parsed, and judged, as before).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from run_bags import LyingEvaluator, run_bag, scenario_inputs, TrappedAssessor

from ghost_core.pipeline import Pipeline, PipelineConfig
from ghost_core.scenarios import generate_scenario
from ghost_core.wire import parse_calibrated, parse_prediction_outcome
from ghost_verify.verify import verify_all

PIPELINES: dict[str, Callable[[PipelineConfig], Pipeline] | None] = {
    'honest': None, 'trapped_assessor': TrappedAssessor, 'lying_evaluator': LyingEvaluator}


@pytest.mark.parametrize('name', sorted(PIPELINES))
def test_reports_are_those_of_a_pass_that_parses_everything(
        tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    scenario = generate_scenario('gnss_outage')
    config = scenario.parameters.pipeline_config()
    make = PIPELINES[name]
    bag, _ = run_bag(tmp_path / name, scenario_inputs(scenario), config,
                     None if make is None else make(config))
    parsing = verify_all(bag, replay=False)

    parsed: list[str] = []

    def counted(parse: Callable[..., Any], kind: str) -> Callable[..., Any]:
        def parse_counted(*args: Any, **kwargs: Any) -> Any:
            parsed.append(kind)
            return parse(*args, **kwargs)
        return parse_counted

    monkeypatch.setattr('ghost_verify.conformance.parse_calibrated',
                        counted(parse_calibrated, 'calibrated'))
    monkeypatch.setattr('ghost_verify.history.parse_prediction_outcome',
                        counted(parse_prediction_outcome, 'outcome'))
    rederiving = verify_all(bag)
    assert rederiving.replay is not None and rederiving.replay.replayed
    assert rederiving.conformance == parsing.conformance
    assert rederiving.history == parsing.history
    cycles = rederiving.conformance.cycles_total
    if name == 'honest':
        assert rederiving.replay.holds and parsed == []  # every message was matched
    else:
        # What differs from the re-run is parsed: the assessor's levels reach the calibrated
        # assessments; the evaluator's lie is in the outcomes.
        assert not rederiving.replay.holds
        kind = 'calibrated' if name == 'trapped_assessor' else 'outcome'
        assert 0 < parsed.count(kind) < cycles
