"""EVIDENCE-v1: every Ghost message's named inputs, judged on the recorder's log times.

SPEC section 5, amendments v1.3 (docs/properties.md, "Evidence"). Each message names what it
was computed from; this check finds each named input in the bag and compares the recorder's
log times, the only clock it trusts (``ghost_core.evidence``):

- ``named_input_missing``: the bag does not hold the named input, inside the span the bag
  records of that input's topic (a name before the topic's first recorded message is a cycle
  cut by the recording's start: unverifiable, counted, not a violation);
- ``named_input_from_the_future``: the recorder logged the named input more than
  ``TRANSPORT_BOUND_NS`` after the message that names it;
- ``input_claimed_late``: an input the message had to use, which the recorder logged more
  than ``TRANSPORT_BOUND_NS`` before the moment the node acted on, is not the one named (a
  newer finite fix than the raw assessment's confirmation, logged that long before the belief;
  a fix of the cycle, or the prediction targeting it, logged that long before an outcome that
  says it had none or names an older one; a vehicle status stamped at or before the cycle,
  newer than the named one, logged that long before the calibrated assessment the decision
  was made on);
- ``window_not_the_recorded_one``: a calibrated assessment's named window is not the last W
  observed outcomes the bag holds at or before its cycle (one topic from one publisher,
  reliable: the calibrator receives them in the recorder's order, so this is exact);
- ``context_not_the_named_status``: a rationale's flight and mission status are not those of
  the vehicle status it names.

Lateness claims inside the bound are admitted and counted in the report. The recorded inputs
(beliefs, fixes, statuses) are read once into an index of stamps and log times.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
import math
import os

from ghost_bag.errors import BagError
from ghost_bag.recorded_inputs import read_inputs
from ghost_core.contracts import VehicleStatus
from ghost_core.evidence import TRANSPORT_BOUND_NS
from ghost_core.pipeline import PipelineConfig
from ghost_core.properties import JsonValue
from ghost_core.samples import BeliefSample, Observation

from .events import CycleEvent, GhostMessage

__all__ = ['EVIDENCE_VERSION', 'evidence_checker', 'EvidenceChecker', 'EvidenceReport',
           'EvidenceViolation', 'InputIndex', 'load_input_index']

EVIDENCE_VERSION = 'EVIDENCE-v1'
_NS_PER_S = 1_000_000_000
#: How many recent cycles' predictions and observed outcomes are kept to resolve names.
_RECENT = 4096


class _Stream:
    """One input topic: its messages by stamp, and by log time with the newest stamp so far."""

    def __init__(self) -> None:
        self.by_stamp: list[tuple[int, int]] = []  # (stamp, log time), sorted at freeze
        self.log_times = array('q')  # log-time order
        self.newest_finite = array('q')  # the newest finite stamp logged up to each one
        self._newest = -1

    def add(self, stamp_ns: int, log_time_ns: int, finite: bool) -> None:
        self.by_stamp.append((stamp_ns, log_time_ns))
        if finite and stamp_ns > self._newest:
            self._newest = stamp_ns
        self.log_times.append(log_time_ns)
        self.newest_finite.append(self._newest)

    def freeze(self) -> None:
        self.by_stamp.sort()
        # The earliest log time among the messages stamped at or after each one.
        self.suffix_first_log = array('q', [0] * len(self.by_stamp))
        first = 2**63 - 1
        for index in range(len(self.by_stamp) - 1, -1, -1):
            first = min(first, self.by_stamp[index][1])
            self.suffix_first_log[index] = first

    def first_logged_stamped_from(self, stamp_ns: int) -> int | None:
        """The earliest log time of a message stamped at or after `stamp_ns` (None: none)."""
        index = bisect_left(self.by_stamp, (stamp_ns, -1))
        return self.suffix_first_log[index] if index < len(self.by_stamp) else None

    @property
    def first_stamp_ns(self) -> int | None:
        return self.by_stamp[0][0] if self.by_stamp else None

    def log_time_of(self, stamp_ns: int) -> int | None:
        """The first log time of a message stamped `stamp_ns` (None: not in the bag)."""
        index = bisect_left(self.by_stamp, (stamp_ns, -1))
        if index < len(self.by_stamp) and self.by_stamp[index][0] == stamp_ns:
            return self.by_stamp[index][1]
        return None

    def newest_finite_logged_before(self, log_time_ns: int) -> int:
        """The newest finite stamp among messages logged before `log_time_ns` (-1: none)."""
        index = bisect_left(self.log_times, log_time_ns)
        return self.newest_finite[index - 1] if index else -1

    def stamped_in(self, after_ns: int, until_ns: int) -> list[tuple[int, int]]:
        """(stamp, log time) of the messages stamped in (after_ns, until_ns]."""
        lo = bisect_right(self.by_stamp, (after_ns, 2**63))
        hi = bisect_right(self.by_stamp, (until_ns, 2**63))
        return self.by_stamp[lo:hi]

    def stamp_before(self, stamp_ns: int) -> int | None:
        """The greatest stamp below `stamp_ns` (None: none)."""
        index = bisect_left(self.by_stamp, (stamp_ns, -1))
        return self.by_stamp[index - 1][0] if index else None


@dataclass(slots=True)
class InputIndex:
    """The recorded inputs' stamps and log times: beliefs, fixes and vehicle statuses."""

    beliefs: _Stream = field(default_factory=_Stream)
    fixes: _Stream = field(default_factory=_Stream)
    statuses: _Stream = field(default_factory=_Stream)
    #: Per status stamp, its flight and mission status (the first recorded with it).
    status_context: dict[int, tuple[int, int]] = field(default_factory=dict)
    #: The log times of every belief and fix, in order (the outcome evaluator's inputs).
    evaluator_inputs: array[int] = field(default_factory=lambda: array('q'))

    def add(self, log_time_ns: int, sample: BeliefSample | Observation | VehicleStatus) -> None:
        """Take one recorded input, in log-time order."""
        if not isinstance(sample, VehicleStatus):
            self.evaluator_inputs.append(log_time_ns)
        if isinstance(sample, BeliefSample):
            self.beliefs.add(sample.stamp_ns, log_time_ns, True)
        elif isinstance(sample, Observation):
            self.fixes.add(sample.stamp_ns, log_time_ns,
                           all(math.isfinite(x) for x in sample.position))
        else:
            self.statuses.add(sample.stamp_ns, log_time_ns, True)
            self.status_context.setdefault(
                sample.stamp_ns, (int(sample.flight_status), int(sample.mission_status)))

    def freeze(self) -> InputIndex:
        """Sort by stamp once every input was added; return self."""
        for stream in (self.beliefs, self.fixes, self.statuses):
            stream.freeze()
        return self


def load_input_index(bag: str | os.PathLike[str], topics: Mapping[str, str]) -> InputIndex:
    """Read the bag's recorded inputs into an index (InputBagError when they cannot be read)."""
    index = InputIndex()
    for message in read_inputs(bag, topics.get('state', '/state/nav'),
                               topics.get('observations', '/observations'),
                               topics.get('status', '/vehicle_status')):
        index.add(message.log_time_ns, message.sample)
    return index.freeze()


@dataclass(frozen=True, slots=True)
class EvidenceViolation:
    """One named input the recorder's log times contradict."""

    cycle_stamp_ns: int
    kind: str
    topic: str
    detail: str

    def to_json(self) -> dict[str, JsonValue]:
        """Return the violation as a JSON object."""
        return {'cycle_stamp_ns': self.cycle_stamp_ns, 'kind': self.kind, 'topic': self.topic,
                'detail': self.detail}


@dataclass(frozen=True, slots=True)
class EvidenceReport:
    """What EVIDENCE-v1 found: names checked, lateness admitted, violations (first 100)."""

    checked: bool
    names_checked: int = 0
    late_admitted: int = 0
    before_recording: int = 0
    violations_total: int = 0
    violations: tuple[EvidenceViolation, ...] = ()
    by_kind: tuple[tuple[str, int], ...] = ()
    why_not: str = ''
    #: The most the recorder logged a named input after the message naming it (ns; <= 0:
    #: never after): the transport lag measured on this bag, beside the bound.
    largest_input_after_ns: int = 0

    @property
    def holds(self) -> bool:
        """True when every named input checked agrees with the recorder's log times."""
        return self.violations_total == 0

    def summary(self) -> str:
        """One line: HOLDS / VIOLATED with the counts, or why it could not be checked."""
        if not self.checked:
            return f'evidence: NOT CHECKED ({self.why_not})'
        bound = f'transport bound {TRANSPORT_BOUND_NS / 1e6:g} ms'
        if self.holds:
            return (f"evidence: HOLDS ({self.names_checked} named inputs on the recorder's "
                    f'log times, {bound}; {self.late_admitted} lateness claims within it; '
                    f'{self.before_recording} names before the recording)')
        kinds = ', '.join(f'{count} {kind}' for kind, count in self.by_kind)
        first = self.violations[0]
        return (f'evidence: VIOLATED ({kinds}; the first at {first.cycle_stamp_ns} ns: '
                f'{first.topic} {first.detail})')

    def to_json(self) -> dict[str, JsonValue]:
        """Return the report as a JSON object."""
        return {'version': EVIDENCE_VERSION, 'checked': self.checked, 'holds': self.holds,
                'why_not': self.why_not, 'transport_bound_ns': TRANSPORT_BOUND_NS,
                'names_checked': self.names_checked, 'late_admitted': self.late_admitted,
                'before_recording': self.before_recording,
                'largest_input_after_ns': self.largest_input_after_ns,
                'violations_total': self.violations_total,
                'violations_by_kind': dict(self.by_kind),
                'violations': [v.to_json() for v in self.violations]}


def _stamp(msg: Mapping[str, object], name: str) -> int:
    value = msg[name]
    assert isinstance(value, Mapping)
    sec, nanosec = value['sec'], value['nanosec']
    assert isinstance(sec, int) and isinstance(nanosec, int)
    return sec * _NS_PER_S + nanosec


def _named(msg: Mapping[str, object], flag: str, name: str) -> int | None:
    return _stamp(msg, name) if msg.get(flag) else None


class EvidenceChecker:
    """EVIDENCE-v1 over a bag's cycles (fed in stamp order) and its input index."""

    def __init__(self, index: InputIndex | None, why_not: str = '', *,
                 max_observation_lag_ns: int = 250_000_000,
                 idle_flush_ns: int = 1_000_000_000, window_at: int = 32) -> None:
        self._index = index
        self._lag_ns = max_observation_lag_ns
        self._idle_ns = idle_flush_ns
        self._why_not = why_not
        self._window = window_at
        self._names = 0
        self._late = 0
        self._before = 0
        self._total = 0
        self._kinds: dict[str, int] = {}
        self._found: list[EvidenceViolation] = []
        self._predictions: dict[int, int] = {}  # stamp -> log time
        self._prediction_order: deque[int] = deque()
        self._observed: deque[int] = deque(maxlen=_RECENT)  # observed outcome stamps
        self._first_outcome_ns: int | None = None
        self._largest_after = -(2**62)

    def _violate(self, stamp_ns: int, kind: str, topic: str, detail: str) -> None:
        self._total += 1
        self._kinds[kind] = self._kinds.get(kind, 0) + 1
        if len(self._found) < 100:
            self._found.append(EvidenceViolation(stamp_ns, kind, topic, detail))

    def _name(self, cycle_ns: int, message: GhostMessage, what: str, stamp_ns: int,
              input_log_ns: int | None, first_ns: int | None) -> bool:
        """Judge one named input; True when it is in the bag."""
        self._names += 1
        if input_log_ns is None:
            if first_ns is None or stamp_ns < first_ns:
                self._before += 1
            else:
                self._violate(cycle_ns, 'named_input_missing', message.topic,
                              f'names {what} stamped {stamp_ns} ns, which the bag lacks')
            return False
        self._largest_after = max(self._largest_after, input_log_ns - message.log_time_ns)
        if input_log_ns - message.log_time_ns > TRANSPORT_BOUND_NS:
            self._violate(cycle_ns, 'named_input_from_the_future', message.topic,
                          f'names {what} stamped {stamp_ns} ns, logged '
                          f'{(input_log_ns - message.log_time_ns) / 1e6:.0f} ms after it')
        return True

    def update(self, cycle: CycleEvent) -> None:
        """Judge the named inputs of one cycle's messages."""
        index = self._index
        for prediction in cycle.predictions:
            if prediction.stamp_ns not in self._predictions:
                self._predictions[prediction.stamp_ns] = prediction.log_time_ns
                self._prediction_order.append(prediction.stamp_ns)
                if len(self._prediction_order) > _RECENT:
                    self._predictions.pop(self._prediction_order.popleft(), None)
        if index is None:
            return
        stamp_ns = cycle.stamp_ns
        belief_log = index.beliefs.log_time_of(stamp_ns)
        for raw in cycle.raw_assessments:
            self._raw(stamp_ns, raw.message, belief_log)
        for outcome in cycle.outcomes:
            self._outcome(stamp_ns, outcome)
        for calibrated in cycle.calibrated:
            self._calibrated(stamp_ns, calibrated.message)
        calibrated_log = min((c.message.log_time_ns for c in cycle.calibrated), default=None)
        for rationale in cycle.rationales:
            self._rationale(stamp_ns, rationale.message, calibrated_log)

    def _raw(self, stamp_ns: int, message: GhostMessage, belief_log: int | None) -> None:
        index = self._index
        assert index is not None
        msg = message.msg
        self._name(stamp_ns, message, 'its belief', stamp_ns, belief_log,
                   index.beliefs.first_stamp_ns)
        confirmation = _named(msg, 'has_confirmation', 'confirmation_stamp')
        if confirmation is not None:
            self._name(stamp_ns, message, 'its confirming fix', confirmation,
                       index.fixes.log_time_of(confirmation), index.fixes.first_stamp_ns)
        previous = _named(msg, 'has_previous', 'previous_stamp')
        if previous is not None:
            self._name(stamp_ns, message, 'the belief judged before', previous,
                       index.beliefs.log_time_of(previous), index.beliefs.first_stamp_ns)
        if belief_log is None:
            return
        newest = index.fixes.newest_finite_logged_before(belief_log - TRANSPORT_BOUND_NS)
        if newest > (confirmation if confirmation is not None else -1):
            self._violate(stamp_ns, 'input_claimed_late', message.topic,
                          f'is confirmed by {confirmation} ns while the fix stamped {newest} '
                          f'ns was logged over {TRANSPORT_BOUND_NS / 1e6:g} ms before its '
                          'belief')
        elif index.fixes.newest_finite_logged_before(belief_log) > (
                confirmation if confirmation is not None else -1):
            self._late += 1

    def _outcome(self, stamp_ns: int, message: GhostMessage) -> None:
        index = self._index
        assert index is not None
        msg = message.msg
        if msg.get('observed'):
            self._observed.append(stamp_ns)
            if self._first_outcome_ns is None:
                self._first_outcome_ns = stamp_ns
        elif self._first_outcome_ns is None:
            self._first_outcome_ns = stamp_ns
        previous = index.beliefs.stamp_before(stamp_ns)
        # Every status but no_observation took a fix (an invalid, unmeasured or other-frame one
        # is taken and judged unobserved): the fix it names.
        observation = (_stamp(msg, 'observation_stamp')
                       if msg.get('status') != 'no_observation' else None)
        if observation == 0 and not msg.get('observed'):
            observation = None
        if observation is not None:
            self._name(stamp_ns, message, 'its fix', observation,
                       index.fixes.log_time_of(observation), index.fixes.first_stamp_ns)
        prediction = _stamp(msg, 'prediction_stamp')
        named_prediction = prediction if msg.get('status') != 'no_prediction' else None
        if named_prediction is not None:
            self._name(stamp_ns, message, 'its prediction', named_prediction,
                       self._predictions.get(named_prediction),
                       min(self._predictions, default=None))
        if previous is None:
            return  # the recording starts at this cycle: its window is not in the bag
        deadline = message.log_time_ns - TRANSPORT_BOUND_NS
        used = observation if observation is not None else previous
        for fix_ns, fix_log in index.fixes.stamped_in(max(previous, used), stamp_ns):
            close = self._closed_after(stamp_ns, fix_log)
            if fix_log < deadline or fix_log + TRANSPORT_BOUND_NS < close:
                self._violate(stamp_ns, 'input_claimed_late', message.topic,
                              f'uses {observation} ns while the fix of its cycle stamped '
                              f'{fix_ns} ns was logged over {TRANSPORT_BOUND_NS / 1e6:g} ms '
                              'before the cycle could close')
                break
            if fix_log <= message.log_time_ns:
                self._late += 1
        if named_prediction is None:
            made = self._predictions.get(previous)
            if made is not None and made < deadline:
                self._violate(stamp_ns, 'input_claimed_late', message.topic,
                              f'says it had no prediction while the one made at {previous} '
                              f'ns was logged over {TRANSPORT_BOUND_NS / 1e6:g} ms before it')
            elif made is not None and made <= message.log_time_ns:
                self._late += 1

    def _closed_after(self, stamp_ns: int, fix_log_ns: int) -> int:
        """The earliest log time at which the evaluator could have closed cycle `stamp_ns`.

        What closes a cycle (ghost_core.sequencing.OutcomeSequencer): a fix stamped after
        it, a belief stamped max_observation_lag later, or the idle flush after a pause in
        the inputs (judged before the fix at `fix_log_ns`).
        """
        index = self._index
        assert index is not None
        candidates = [index.fixes.first_logged_stamped_from(stamp_ns + 1),
                      index.beliefs.first_logged_stamped_from(stamp_ns + self._lag_ns)]
        inputs = index.evaluator_inputs
        at = bisect_left(inputs, fix_log_ns)
        if at and fix_log_ns - inputs[at - 1] >= self._idle_ns:
            candidates.append(inputs[at - 1] + self._idle_ns)
        return min((c for c in candidates if c is not None), default=2**63 - 1)

    def _calibrated(self, stamp_ns: int, message: GhostMessage) -> None:
        msg = message.msg
        named = msg.get('window_outcome_stamps_ns')
        window = tuple(int(x) for x in named) if isinstance(named, Iterable) else ()
        history = msg.get('calibration_history')
        considered = history.get('outcomes_considered') if isinstance(history, Mapping) else 0
        size = history.get('window_size') if isinstance(history, Mapping) else self._window
        assert isinstance(size, int)
        self._names += len(window)
        recorded = tuple(s for s in self._observed if s <= stamp_ns)[-size:]
        first = self._first_outcome_ns
        before = tuple(s for s in window if first is None or s < first)
        if before:
            # Outcomes before the recording began: what remains must be the recorded ones.
            self._before += len(before)
            if window[len(before):] != recorded[:len(window) - len(before)]:
                self._violate(stamp_ns, 'window_not_the_recorded_one', message.topic,
                              f'names outcomes {list(window)}, the bag holds {list(recorded)}')
            return
        if window != recorded or len(window) != considered:
            self._violate(stamp_ns, 'window_not_the_recorded_one', message.topic,
                          f'names {len(window)} outcomes ({considered} counted), the last '
                          f'{size} observed at or before its cycle are {len(recorded)} '
                          f'others' if window != recorded else
                          f'names {len(window)} outcomes but counts {considered}')

    def _rationale(self, stamp_ns: int, message: GhostMessage,
                   calibrated_log: int | None) -> None:
        index = self._index
        assert index is not None
        msg = message.msg
        status = _named(msg, 'has_vehicle_status', 'vehicle_status_stamp')
        if status is not None and self._name(stamp_ns, message, 'its vehicle status', status,
                                             index.statuses.log_time_of(status),
                                             index.statuses.first_stamp_ns):
            context = index.status_context.get(status)
            if context is not None and context != (msg.get('flight_status'),
                                                   msg.get('mission_status')):
                self._violate(stamp_ns, 'context_not_the_named_status', message.topic,
                              f'records flight/mission {msg.get("flight_status")}/'
                              f'{msg.get("mission_status")}, its status says {context}')
        if calibrated_log is None:
            return
        deadline = calibrated_log - TRANSPORT_BOUND_NS
        for status_ns, status_log in index.statuses.stamped_in(
                status if status is not None else -1, stamp_ns):
            if status_log < deadline:
                self._violate(stamp_ns, 'input_claimed_late', message.topic,
                              f'names status {status} ns while the one stamped {status_ns} ns '
                              f'was logged over {TRANSPORT_BOUND_NS / 1e6:g} ms before its '
                              'calibrated assessment')
                break
            if status_log <= calibrated_log:
                self._late += 1

    def result(self) -> EvidenceReport:
        """The report over every cycle fed."""
        if self._index is None:
            return EvidenceReport(False, why_not=self._why_not)
        return EvidenceReport(True, self._names, self._late, self._before, self._total,
                              tuple(self._found), tuple(sorted(self._kinds.items())),
                              largest_input_after_ns=max(self._largest_after, 0))


def evidence_checker(bag: str | os.PathLike[str], input_topics: Mapping[str, str],
                     config: PipelineConfig | None) -> EvidenceChecker:
    """EVIDENCE-v1 on the bag's recorded inputs; not checked (and why) when it has none.

    `input_topics` and `config` (the start configuration) are the run's, when recorded.
    """
    topics = {'state': '/state/nav', 'observations': '/observations',
              'status': '/vehicle_status', **input_topics}
    lag_ns = 250_000_000 if config is None else config.evaluator.max_observation_lag_ns
    idle_ns = 1_000_000_000 if config is None else (config.idle_flush_ns or 2**62)
    try:
        return EvidenceChecker(load_input_index(bag, topics), max_observation_lag_ns=lag_ns,
                               idle_flush_ns=idle_ns)
    except BagError as err:
        return EvidenceChecker(None, ' '.join(str(err).split())[:120] or 'no recorded inputs')
