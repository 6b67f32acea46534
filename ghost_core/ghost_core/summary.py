"""What a run of the agent did, in the numbers a drone engineer reads first (pure)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ghost_core.levels import DecisionKind, SelfAssessmentLevel
from ghost_core.pipeline import CycleTrace

__all__ = ['CHATTER_WINDOW_NS', 'CycleJudgement', 'JudgementSummary', 'judgement_of',
           'RATE_MIN_DURATION_NS', 'summarize_judgement']

#: The shortest run whose summary gives changes per minute: a shorter one gives the counts.
RATE_MIN_DURATION_NS = 60_000_000_000
#: Two level changes closer than this are chattering (a failsafe that flips that fast is
#: switched off by its users).
CHATTER_WINDOW_NS = 5_000_000_000


@dataclass(frozen=True, slots=True)
class CycleJudgement:
    """One cycle reduced to what the summary counts."""

    stamp_ns: int
    raw_level: SelfAssessmentLevel
    adjusted_level: SelfAssessmentLevel
    decision: DecisionKind


def judgement_of(trace: CycleTrace) -> CycleJudgement:
    """Return the judgement of one pipeline cycle."""
    return CycleJudgement(trace.stamp_ns, trace.raw.overall_level,
                          trace.calibrated.adjusted_overall_level,
                          trace.rationale.decision.kind)


@dataclass(frozen=True, slots=True)
class JudgementSummary:
    """Counts over a run: decisions, level changes, chattering, first non-PROCEED.

    `*_changes` count cycles whose value differs from the previous cycle's; `*_chatter`
    count changes that come less than CHATTER_WINDOW_NS after the previous change of the same
    series; `decision_changes` is what the vehicle feels (PROCEED <-> HOLD flips).
    """

    cycles: int
    duration_ns: int
    decisions: tuple[tuple[str, int], ...]
    raw_level_changes: int
    adjusted_level_changes: int
    decision_changes: int
    raw_level_chatter: int
    decision_chatter: int
    first_non_proceed_ns: int | None

    def fraction(self, kind: DecisionKind) -> float:
        """Return the fraction of cycles decided `kind` (0.0 on an empty run)."""
        count = dict(self.decisions).get(kind.name, 0)
        return count / self.cycles if self.cycles else 0.0

    def per_minute(self, count: int) -> float:
        """Return `count` per minute of the run's duration (0.0 when it lasts no time)."""
        return count * 60e9 / self.duration_ns if self.duration_ns > 0 else 0.0

    def _rate(self, count: int) -> str:
        """`` (R/min)`` after a count, for a run of at least RATE_MIN_DURATION_NS; else ''.

        Over a few seconds a rate per minute says nothing (one change in 3 s is "20/min").
        """
        if self.duration_ns < RATE_MIN_DURATION_NS:
            return ''
        return f' ({self.per_minute(count):.2f}/min)'

    def lines(self) -> tuple[str, ...]:
        """Return the human summary, one line per measure."""
        shares = ', '.join(f'{name} {100.0 * count / self.cycles:.1f} %'
                           for name, count in self.decisions if count) if self.cycles else '-'
        first = ('none' if self.first_non_proceed_ns is None
                 else f'{self.first_non_proceed_ns / 1e9:.3f} s')
        return (
            f'judgement: {self.cycles} cycles over {self.duration_ns / 1e9:.1f} s: {shares}',
            f'judgement: level changes: raw {self.raw_level_changes}'
            f'{self._rate(self.raw_level_changes)}, adjusted '
            f'{self.adjusted_level_changes}, decision {self.decision_changes}'
            f'{self._rate(self.decision_changes)}',
            f'judgement: changes within {CHATTER_WINDOW_NS / 1e9:.0f} s of the previous one: '
            f'raw {self.raw_level_chatter}, decision {self.decision_chatter}',
            f'judgement: first non-PROCEED at stamp {first}',
        )

    def to_json(self) -> dict[str, object]:
        """Return the summary as a JSON object."""
        return {
            'cycles': self.cycles, 'duration_ns': self.duration_ns,
            'decisions': dict(self.decisions),
            'raw_level_changes': self.raw_level_changes,
            'adjusted_level_changes': self.adjusted_level_changes,
            'decision_changes': self.decision_changes,
            'raw_level_chatter': self.raw_level_chatter,
            'decision_chatter': self.decision_chatter,
            'first_non_proceed_ns': self.first_non_proceed_ns,
        }


def _changes(stamps: list[int], values: list[int]) -> tuple[int, int]:
    changes = chatter = 0
    last_change: int | None = None
    for index in range(1, len(values)):
        if values[index] != values[index - 1]:
            changes += 1
            if last_change is not None and stamps[index] - last_change < CHATTER_WINDOW_NS:
                chatter += 1
            last_change = stamps[index]
    return changes, chatter


def summarize_judgement(cycles: Iterable[CycleJudgement]) -> JudgementSummary:
    """Return the summary of cycles given in stamp order."""
    items = list(cycles)
    stamps = [c.stamp_ns for c in items]
    counts = {kind.name: 0 for kind in DecisionKind}
    for cycle in items:
        counts[cycle.decision.name] += 1
    raw_changes, raw_chatter = _changes(stamps, [int(c.raw_level) for c in items])
    adjusted_changes, _ = _changes(stamps, [int(c.adjusted_level) for c in items])
    decision_changes, decision_chatter = _changes(stamps, [int(c.decision) for c in items])
    first = next((c.stamp_ns for c in items if c.decision != DecisionKind.PROCEED), None)
    return JudgementSummary(
        cycles=len(items),
        duration_ns=stamps[-1] - stamps[0] if items else 0,
        decisions=tuple(counts.items()),
        raw_level_changes=raw_changes,
        adjusted_level_changes=adjusted_changes,
        decision_changes=decision_changes,
        raw_level_chatter=raw_chatter,
        decision_chatter=decision_chatter,
        first_non_proceed_ns=first,
    )
