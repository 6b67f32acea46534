"""RECOVERY-v1 over a bag: the published levels from verify_all's pass, then the inputs.

``RecoveryChecker.update`` takes each cycle's published raw level during verify_all's one
pass (a split run merges the parts with ``absorb``). The bag's recorded inputs (``/state/nav``
beliefs and ``/observations`` fixes, in record order) go into
``ghost_core.recovery.RecoveryJudge``, with the configuration in force at each stamp
(``RunParameters.timeline``): as the re-derivation reads them in the same pass (``follow``),
or, without one (``--no-replay``, a split run, other input topics), read by ``result``. A
bag without a recorded configuration or without its inputs cannot be judged: the report says
so, and why, and is not a HOLDS.
"""

from __future__ import annotations

from array import array
from collections import deque
from dataclasses import dataclass
import os
from typing import ClassVar

from ghost_bag.errors import BagError
from ghost_bag.recorded_inputs import read_file_inputs
from ghost_core.properties import JsonValue
from ghost_core.recovery import (
    NO_LEVEL,
    PublishedLevels,
    recovery_time_ns,
    RECOVERY_VERSION,
    RecoveryJudge,
    RecoveryVerdict,
    VIOLATIONS_LISTED,
)
from ghost_core.run_configuration import ConfigurationTimeline
from ghost_core.samples import BeliefSample, Observation

from .bag import resolve_bag
from .events import BagInfo, CycleEvent
from .rederive import InputTap
from .run_parameters import RunParameters
from .schema import quiet_parser

__all__ = ['RecoveryChecker', 'RecoveryReport']

#: The input topics when the recorded configuration does not name them.
DEFAULT_INPUT_TOPICS = {'state': '/state/nav', 'observations': '/observations'}


def _seconds(ns: int) -> str:
    return f'{ns / 1e9:g} s'


@dataclass(frozen=True, slots=True)
class RecoveryReport:
    """The RECOVERY-v1 verdict of one bag, or why it could not be judged."""

    #: Why the property could not be judged (no configuration, no inputs, …); '' when judged.
    not_applicable_reason: str
    verdict: RecoveryVerdict | None = None
    #: R, from the start configuration.
    recovery_time_ns: int | None = None
    input_topics: tuple[tuple[str, str], ...] = ()
    #: Each recorded change of R: (the cycle stamp after which it is in force, the new R).
    recovery_changes: tuple[tuple[int, int], ...] = ()

    property_version: ClassVar[str] = RECOVERY_VERSION

    @property
    def applicable(self) -> bool:
        """True when the bag held what the property needs (configuration and inputs)."""
        return self.verdict is not None

    @property
    def holds(self) -> bool:
        """True when judged and no cycle under the precondition was published otherwise."""
        return self.verdict is not None and self.verdict.holds

    @property
    def violated(self) -> bool:
        """True when judged and violated (not applicable violates nothing)."""
        return self.verdict is not None and not self.verdict.holds

    @property
    def vacuous(self) -> bool:
        """True when it holds and the precondition never held on a published cycle."""
        return self.holds and self.verdict is not None and self.verdict.cycles_evaluated == 0

    def summary(self) -> str:
        """The one-line verdict, e.g. ``RECOVERY-v1: HOLDS (120 cycles evaluated; R = 5 s)``."""
        name = self.property_version
        verdict = self.verdict
        if verdict is None:
            return f'{name}: not applicable ({self.not_applicable_reason})'
        r = '' if self.recovery_time_ns is None else f'; R = {_seconds(self.recovery_time_ns)}'
        r += ''.join(f', then {_seconds(value)} after {after} ns'
                     for after, value in self.recovery_changes)
        if verdict.violations_total:
            first = verdict.violations[0]
            return (f'{name}: VIOLATED ({verdict.violations_total} of '
                    f'{verdict.cycles_evaluated} cycles evaluated; the first at '
                    f'{first.cycle_stamp_ns} ns: published {first.level_name()}, the belief '
                    f'KNOWN and confirmed since {first.recovered_since_ns} ns{r})')
        if verdict.cycles_evaluated == 0:
            return f'{name}: HOLDS vacuously (0 cycles{r})'
        return f'{name}: HOLDS ({verdict.cycles_evaluated} cycles evaluated{r})'

    def notes(self) -> tuple[str, ...]:
        """Cycles under the precondition that the bag holds no published level for."""
        verdict = self.verdict
        if verdict is None or not verdict.cycles_not_published:
            return ()
        return (f'{self.property_version}: {verdict.cycles_not_published} beliefs under the '
                'precondition have no published level in the bag (not judged: the assessor '
                'may not have received them)',)

    def to_json(self) -> dict[str, JsonValue]:
        """Return the report as a JSON object (see docs/properties.md for the fields)."""
        verdict = self.verdict
        return {
            'property_version': self.property_version,
            'applicable': self.applicable,
            'not_applicable_reason': self.not_applicable_reason or None,
            'holds': self.holds,
            'vacuous': self.vacuous,
            'recovery_time_ns': self.recovery_time_ns,
            'recovery_changes': [{'after_stamp_ns': after, 'recovery_time_ns': value}
                                 for after, value in self.recovery_changes],
            'input_topics': dict(self.input_topics),
            'beliefs': None if verdict is None else verdict.beliefs,
            'fixes': None if verdict is None else verdict.fixes,
            'cycles_precondition_held': None if verdict is None else verdict.cycles_evaluated,
            'cycles_not_published': None if verdict is None else verdict.cycles_not_published,
            'first_precondition_cycle_stamp_ns': (None if verdict is None
                                                  else verdict.first_evaluated_stamp_ns),
            'run_breaks': {} if verdict is None else {
                reason.value: count for reason, count in verdict.breaks},
            'violations_total': 0 if verdict is None else verdict.violations_total,
            'violations_listed_limit': VIOLATIONS_LISTED,
            'violations': [] if verdict is None else [
                violation.to_json() for violation in verdict.violations],
        }


class _Following:
    """RECOVERY-v1 judged during the pass, on the inputs another reader of it gives."""

    def __init__(self, judge: RecoveryJudge, published: PublishedLevels) -> None:
        self.judge = judge
        self.published = published
        self.waiting: deque[tuple[int, BeliefSample | Observation]] = deque()
        self.last_stamp: int | None = None

    def take(self, log_time_ns: int, sample: BeliefSample | Observation) -> None:
        self.waiting.append((log_time_ns, sample))
        self.release()

    def level(self, stamp_ns: int, level: int) -> None:
        self.published.add(stamp_ns, level)
        self.last_stamp = stamp_ns
        if self.waiting:
            self.release()

    def release(self, everything: bool = False) -> None:
        """Judge the inputs, in their order, as far as their cycles' levels are known."""
        judge, waiting, last = self.judge, self.waiting, self.last_stamp
        while waiting:
            log_time_ns, sample = waiting[0]
            if isinstance(sample, BeliefSample):
                if not everything and (last is None or sample.stamp_ns >= last):
                    return  # a later cycle of the pass has not come yet
                judge.belief(log_time_ns, sample)
                # The judge reads no level before its latest belief again: memory stays flat.
                self.published.forget_before(judge.latest_belief_ns or sample.stamp_ns)
            else:
                judge.fix(log_time_ns, sample)
            waiting.popleft()


class RecoveryChecker:
    """Collect each cycle's published raw level; judge RECOVERY-v1 at the end (``result``).

    Memory: one stamp and one level per cycle (16 bytes), the only per-cycle state verify_all
    keeps: the precondition is read from the inputs afterwards, and a cycle's level must be
    at hand when its belief is judged. Or, when the re-derivation reads the same inputs in
    the same pass (``follow``), each of them is judged as it is read, once the pass has
    given its cycle's level (the inputs waiting are those the re-run read ahead: a window).
    """

    def __init__(self) -> None:
        self._stamps = array('q')
        self._levels = array('q')
        self._following: _Following | None = None

    @staticmethod
    def input_topics(parameters: RunParameters) -> dict[str, str]:
        """The topics whose beliefs and fixes RECOVERY-v1 judges."""
        return {**DEFAULT_INPUT_TOPICS, **parameters.input_topics}

    def follow(self, parameters: RunParameters) -> InputTap | None:
        """Judge the inputs another reader of the same pass gives (the returned tap).

        None when nothing can be judged (no recorded configuration): ``result`` says why.
        Only for a single pass from the bag's start, before its first cycle.
        """
        timeline = parameters.timeline
        if timeline is None or self._stamps:
            return None
        published = PublishedLevels((), ())
        self._following = _Following(RecoveryJudge(published, timeline.config_at), published)
        return self._following.take

    def update(self, cycle: CycleEvent) -> None:
        """Take the level(s) published for one cycle (any Ghost message marks the cycle)."""
        levels = [raw.overall_level for raw in cycle.raw_assessments]
        if not levels:  # the raw message was not recorded: its copy inside C_t
            levels = [calibrated.raw_overall_level for calibrated in cycle.calibrated]
        level = max(levels) if levels else NO_LEVEL
        self._stamps.append(cycle.stamp_ns)
        self._levels.append(level)
        if self._following is not None:
            self._following.level(cycle.stamp_ns, level)

    def result(self, bag: str | os.PathLike[str], parameters: RunParameters,
               info: BagInfo, *, followed_every_input: bool = False) -> RecoveryReport:
        """Judge the bag's recorded inputs against the levels taken (ends the checker).

        With `followed_every_input`, the inputs ``follow``'s tap took are every input of the
        bag, and are judged; otherwise the inputs are read here.
        """
        timeline = parameters.timeline
        if timeline is None:
            return RecoveryReport(parameters.problem or parameters.missing)
        if info.read_errors:
            return RecoveryReport('part of the bag could not be read (see read_errors): the '
                                  'precondition needs every recorded input')
        topics = self.input_topics(parameters)
        named = tuple(sorted(topics.items()))
        following = self._following
        if following is not None and followed_every_input:
            following.release(everything=True)
            judge = following.judge
        else:
            judge = RecoveryJudge(PublishedLevels(self._stamps, self._levels),
                                  timeline.config_at)
            try:
                for path in resolve_bag(bag).files:
                    with quiet_parser():
                        for message in read_file_inputs(path, topics['state'],
                                                        topics['observations'],
                                                        log_time_order=False):
                            if isinstance(message.sample, BeliefSample):
                                judge.belief(message.log_time_ns, message.sample)
                            elif isinstance(message.sample, Observation):
                                judge.fix(message.log_time_ns, message.sample)
            except BagError as err:
                return RecoveryReport(f'the recorded inputs cannot be read ({err})',
                                      input_topics=named)
        verdict = judge.verdict()
        if not verdict.beliefs:
            return RecoveryReport(f'the bag holds no belief on {topics["state"]}: the inputs '
                                  'were not recorded', input_topics=named)
        return RecoveryReport('', verdict, recovery_time_ns(timeline.start.thresholds), named,
                              _recovery_changes(timeline))


def _recovery_changes(timeline: ConfigurationTimeline) -> tuple[tuple[int, int], ...]:
    """Every change of R the timeline holds, in force order: (after stamp, R)."""
    found = []
    current = recovery_time_ns(timeline.start.thresholds)
    for change in timeline.changes:
        value = recovery_time_ns(timeline.config_at(change.in_force_after_stamp_ns + 1)
                                 .thresholds)
        if value != current:
            found.append((change.in_force_after_stamp_ns, value))
            current = value
    return tuple(found)
