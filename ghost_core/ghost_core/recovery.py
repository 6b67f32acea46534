"""RECOVERY-v1 (liveness): a belief KNOWN and confirmed for R is published KNOWN.

The pure judgement of "Ghost comes back" (docs/properties.md, RECOVERY-v1). The precondition
is read from the recorded inputs alone (beliefs and fixes, in the order the recorder received
them), judged with the configuration in force at each belief's stamp; the postcondition is the
level the self-assessor published for that belief. ``RecoveryJudge`` takes the published
levels first (``PublishedLevels``), then the inputs one by one. The verifier
(``ghost_verify.recovery``) reads a bag into it.

R is the reference self-assessor's own bound (``recovery_time_ns``): its hysteresis publishes
a block at KNOWN once the block's instantaneous level has been KNOWN, without interruption,
for ``recovery_bound_ns``, margin, dwell and minimum interval notwithstanding
(``ghost_core.assessment.SelfAssessor``). So the reference assessor satisfies RECOVERY-v1 by
construction, and an assessor that holds a recovered belief down longer does not.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Callable, MutableSequence, Sequence
from dataclasses import dataclass
from enum import StrEnum
from itertools import pairwise
import math

from ghost_core.assessment import assess_belief_sample, ThresholdsConfig
from ghost_core.levels import SelfAssessmentLevel
from ghost_core.pipeline import PipelineConfig
from ghost_core.properties import JsonValue
from ghost_core.samples import BeliefSample, Observation

__all__ = [
    'NO_LEVEL',
    'RECOVERY_VERSION',
    'VIOLATIONS_LISTED',
    'PublishedLevels',
    'RecoveryJudge',
    'RecoveryVerdict',
    'RecoveryViolation',
    'RunBreak',
    'recovery_time_ns',
]

RECOVERY_VERSION = 'RECOVERY-v1'
#: The level of a cycle the agent published for (some Ghost message carries its stamp)
#: without a raw assessment, inline or not, in the bag.
NO_LEVEL = -1
#: How many violations a verdict lists (all are counted).
VIOLATIONS_LISTED = 64


def recovery_time_ns(thresholds: ThresholdsConfig) -> int:
    """R: how long a belief must have been KNOWN and confirmed before KNOWN is due.

    The reference self-assessor's worst case for returning to KNOWN: its hysteresis bound,
    ``recovery_bound_ns``. The dwell, the margin and the minimum interval only ever make it
    return sooner (docs/properties.md, RECOVERY-v1, derives it).
    """
    return thresholds.hysteresis.recovery_bound_ns


class RunBreak(StrEnum):
    """Why a run of recovered beliefs ended (the precondition restarts after it)."""

    #: A recorded belief judged, with the thresholds in force, other than KNOWN.
    NOT_KNOWN = 'not_known'
    #: A KNOWN belief no fix confirmed within the unconfirmed horizon.
    UNCONFIRMED = 'unconfirmed'
    #: The agent published for a cycle whose belief the bag does not hold.
    UNRECORDED_BELIEF = 'unrecorded_belief'
    #: A belief recorded after a newer one (the assessor drops it; which one it saw is moot).
    OUT_OF_ORDER = 'out_of_order'
    #: A recorded belief the agent published nothing for: it never reached the assessor
    #: (best-effort input: the recorder got it, the agent did not), so it is no part of the
    #: agent's run.
    NOT_RECEIVED = 'not_received'


@dataclass(frozen=True, slots=True)
class RecoveryViolation:
    """A cycle under the precondition whose published raw level is not KNOWN."""

    cycle_stamp_ns: int
    published_level: int
    #: The stamp of the first belief of the run of KNOWN, confirmed beliefs.
    recovered_since_ns: int
    recovery_time_ns: int

    @property
    def kind(self) -> str:
        """The catalogue name of the violation."""
        return 'level_not_known'

    def level_name(self) -> str:
        """The published level's catalogue name (``invalid(n)`` outside it)."""
        try:
            return SelfAssessmentLevel(self.published_level).name
        except ValueError:
            return f'invalid({self.published_level})'

    def to_json(self) -> dict[str, JsonValue]:
        """Return the violation as a JSON object."""
        return {'cycle_stamp_ns': self.cycle_stamp_ns, 'kind': self.kind,
                'postcondition': 'R1', 'observed': {
                    'published_level': self.level_name(),
                    'recovered_since_ns': self.recovered_since_ns,
                    'recovered_for_ns': self.cycle_stamp_ns - self.recovered_since_ns,
                    'recovery_time_ns': self.recovery_time_ns}}


class PublishedLevels:
    """The raw level the agent published for each cycle stamp it published anything for.

    Several levels at one stamp count as their worst (a larger value; any value outside the
    catalogue is not KNOWN either); ``NO_LEVEL`` only when the cycle has none.
    """

    def __init__(self, stamps: Sequence[int], levels: Sequence[int]) -> None:
        if len(stamps) != len(levels):
            raise ValueError(f'PublishedLevels: {len(stamps)} stamps but {len(levels)} levels')
        self._stamps: MutableSequence[int]
        self._levels: MutableSequence[int]
        if all(a < b for a, b in pairwise(stamps)):
            # One level per stamp, in order (a pass over a bag): kept as given (an array of a
            # million cycles is 16 MB; lists of them would be several times that).
            self._stamps = array('q', stamps)
            self._levels = array('q', levels)
            return
        merged: dict[int, int] = {}
        for stamp, level in zip(stamps, levels, strict=True):
            merged[stamp] = max(merged.get(stamp, NO_LEVEL), level)
        self._stamps = array('q', sorted(merged))
        self._levels = array('q', (merged[stamp] for stamp in self._stamps))

    def add(self, stamp_ns: int, level: int) -> None:
        """Take one more published level (in stamp order, as a pass over a bag gives them)."""
        stamps = self._stamps
        if not stamps or stamp_ns > stamps[-1]:
            stamps.append(stamp_ns)
            self._levels.append(level)
            return
        index = bisect_left(stamps, stamp_ns)
        if stamps[index] == stamp_ns:
            self._levels[index] = max(self._levels[index], level)
        else:
            stamps.insert(index, stamp_ns)
            self._levels.insert(index, level)

    def forget_before(self, stamp_ns: int) -> None:
        """Drop the levels of stamps before `stamp_ns` (a judge past them never reads them)."""
        index = bisect_left(self._stamps, stamp_ns)
        if index:
            del self._stamps[:index]
            del self._levels[:index]

    def __len__(self) -> int:
        """How many cycle stamps the agent published for."""
        return len(self._stamps)

    def level_at(self, stamp_ns: int) -> int | None:
        """The level published for `stamp_ns`; None when nothing was published for it."""
        index = bisect_left(self._stamps, stamp_ns)
        if index < len(self._stamps) and self._stamps[index] == stamp_ns:
            return self._levels[index]
        return None

    def any_between(self, after_ns: int, before_ns: int) -> bool:
        """Whether the agent published for a stamp strictly between the two."""
        return bisect_left(self._stamps, before_ns) > bisect_right(self._stamps, after_ns)


@dataclass(frozen=True, slots=True)
class RecoveryVerdict:
    """What RECOVERY-v1 found over a stream of inputs."""

    beliefs: int
    fixes: int
    #: Beliefs under the precondition whose cycle has a published level (judged).
    cycles_evaluated: int
    #: Beliefs under the precondition for which the bag holds no published level.
    cycles_not_published: int
    first_evaluated_stamp_ns: int | None
    violations_total: int
    #: The first VIOLATIONS_LISTED violations, in input order.
    violations: tuple[RecoveryViolation, ...]
    #: How often a run of recovered beliefs was ended, per reason.
    breaks: tuple[tuple[RunBreak, int], ...]

    @property
    def holds(self) -> bool:
        """True when no judged cycle was published other than KNOWN."""
        return self.violations_total == 0


class RecoveryJudge:
    """RECOVERY-v1 over one input stream, fed in the order the recorder received it.

    `published` holds the agent's levels; `config_at` gives the configuration in force at a
    stamp (thresholds, hysteresis, period, lag). A belief is **recovered** when, judged with
    those thresholds, every block is KNOWN (``assess_belief_sample``: finite values, a valid
    covariance declaring its uncertainty, within the KNOWN threshold), and, when the
    unconfirmed horizon H is not 0, a finite fix stamped no earlier than H before it was
    received at least ``max_observation_lag_ns`` of log time before it. A run of recovered
    beliefs is broken by anything in ``RunBreak``. A belief whose run began R or more before
    it is under the precondition: its published level must be KNOWN.
    """

    def __init__(self, published: PublishedLevels,
                 config_at: Callable[[int], PipelineConfig]) -> None:
        self._published = published
        self._config_at = config_at
        self._pending_fixes: deque[tuple[int, int]] = deque()
        self._confirmed_ns: int | None = None
        self._last_ns: int | None = None
        self._run_start_ns: int | None = None
        self._beliefs = 0
        self._fixes = 0
        self._evaluated = 0
        self._not_published = 0
        self._first_evaluated: int | None = None
        self._violations: list[RecoveryViolation] = []
        self._violations_total = 0
        self._breaks = {reason: 0 for reason in RunBreak}

    @property
    def latest_belief_ns(self) -> int | None:
        """The latest belief stamp taken: no later judgement reads a level before it."""
        return self._last_ns

    def fix(self, log_time_ns: int, observation: Observation) -> None:
        """Take one recorded fix (a non-finite one confirms nothing, as for the assessor)."""
        self._fixes += 1
        if all(math.isfinite(x) for x in observation.position):
            self._pending_fixes.append((log_time_ns, observation.stamp_ns))

    def belief(self, log_time_ns: int, belief: BeliefSample) -> None:
        """Take one recorded belief and judge its cycle if it is under the precondition."""
        self._beliefs += 1
        stamp = belief.stamp_ns
        config = self._config_at(stamp)
        self._receive_fixes(log_time_ns - config.evaluator.max_observation_lag_ns)
        previous, self._last_ns = self._last_ns, max(stamp, self._last_ns or stamp)
        interruption = None
        if previous is not None:
            if stamp <= previous:
                self._break(RunBreak.OUT_OF_ORDER)
                return
            # A gap alone does not: the hysteresis runs on belief stamps, and a belief nobody
            # received interrupted nothing. One the agent received and the bag lacks did, maybe.
            if self._published.any_between(previous, stamp):
                interruption = RunBreak.UNRECORDED_BELIEF
        if self._published.level_at(stamp) is None:
            self._break(RunBreak.NOT_RECEIVED)
            return
        thresholds = config.thresholds
        if assess_belief_sample(belief, thresholds).overall_level != SelfAssessmentLevel.KNOWN:
            self._break(RunBreak.NOT_KNOWN)
            return
        horizon = thresholds.unconfirmed_horizon_ns
        if horizon and (self._confirmed_ns is None or stamp - self._confirmed_ns > horizon):
            self._break(RunBreak.UNCONFIRMED)
            return
        if interruption is not None:
            self._break(interruption)
        if self._run_start_ns is None:
            self._run_start_ns = stamp
        if stamp - self._run_start_ns >= recovery_time_ns(thresholds):
            self._judge(stamp, self._run_start_ns, recovery_time_ns(thresholds))

    def _receive_fixes(self, until_log_ns: int) -> None:
        """Fixes recorded at or before `until_log_ns` surely reached the assessor by now."""
        pending = self._pending_fixes
        while pending and pending[0][0] <= until_log_ns:
            _, fix_stamp = pending.popleft()
            if self._confirmed_ns is None or fix_stamp > self._confirmed_ns:
                self._confirmed_ns = fix_stamp

    def _break(self, reason: RunBreak) -> None:
        if self._run_start_ns is not None:
            self._breaks[reason] += 1
        self._run_start_ns = None

    def _judge(self, stamp: int, since: int, recovery_ns: int) -> None:
        level = self._published.level_at(stamp)
        if level is None or level == NO_LEVEL:
            self._not_published += 1
            return
        self._evaluated += 1
        if self._first_evaluated is None:
            self._first_evaluated = stamp
        if level != SelfAssessmentLevel.KNOWN:
            self._violations_total += 1
            if len(self._violations) < VIOLATIONS_LISTED:
                self._violations.append(RecoveryViolation(stamp, level, since, recovery_ns))

    def verdict(self) -> RecoveryVerdict:
        """The verdict over every input taken so far."""
        return RecoveryVerdict(
            beliefs=self._beliefs, fixes=self._fixes, cycles_evaluated=self._evaluated,
            cycles_not_published=self._not_published,
            first_evaluated_stamp_ns=self._first_evaluated,
            violations_total=self._violations_total, violations=tuple(self._violations),
            breaks=tuple((reason, count) for reason, count in self._breaks.items() if count))
