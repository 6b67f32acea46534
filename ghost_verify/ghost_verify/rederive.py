"""Re-derivation from the inputs (``verify_all``, by default): re-run the agent, compare exactly.

One cohesive job (re-derivation: scan, re-run, compare, report), so one module past 400 lines.

Every other check judges what the agent *recorded*. This one re-runs the agent from the
inputs the bag holds (``/state/nav`` beliefs and ``/observations`` fixes, in the order the
recorder received them), with the configuration the run recorded (``manifest.json``'s
``config``: thresholds, hysteresis, Q, period, lag, M/K/W, the evaluator's idle flush, the ids
of what it runs, the input topics), following the M and K recorded on each calibrated
assessment and the Q recorded on each prediction (a ``ros2 param set`` mid-run), and compares
every recorded Ghost message with the re-derived one, field by field, exactly (the canonical
JSON of SPEC section 4). So an assessor that claims a better level, or an evaluator that
reports small distances for large errors, is caught even when every hash, property, history
and policy check holds on what it recorded.

The re-run is ``ghost_core``'s (``ghost_core.rederive.Replay`` over
``ghost_core.pipeline.Pipeline``, the objects the nodes run; inputs converted by
``ghost_core.ros_inputs``, as the nodes convert theirs): pure, and no runtime (ghost_nodes) is
needed. When something a re-run needs is not in the bag (no inputs, no recorded
configuration, a belief the agent saw but the bag lacks, thresholds changed to values the bag
does not record), the report says the replay was not possible, and why: never that it holds.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
import json
import os
from pathlib import Path
from types import MappingProxyType
from typing import cast

from mcap.reader import make_reader

from ghost_bag.errors import InputBagError
from ghost_bag.manifest import MANIFEST_NAME
from ghost_bag.recorded_inputs import (
    InputMessage,
    OBSERVATION_TYPE,
    read_file_inputs,
    STATE_TYPE,
    STATUS_TYPE,
)
from ghost_core.contracts import (
    BeliefSelfAssessment,
    CalibratedSelfAssessment,
    PredictionOutcome,
    VehicleStatus,
)
from ghost_core.evidence import TRANSPORT_BOUND_NS
from ghost_core.hashing import content_address
from ghost_core.properties import JsonValue
from ghost_core.rederive import (
    FieldDifference,
    first_difference,
    MESSAGE_KINDS,
    NamedRerun,
    TimedInput,
)
from ghost_core.run_configuration import ConfigurationTimeline
from ghost_core.samples import BeliefSample, Observation
from ghost_core.wire import (
    message_address,
    parse_belief_self_assessment,
    parse_prediction_outcome,
    to_msg_dict,
)

from .bag import DEFAULT_CYCLE_WINDOW, GhostBag, resolve_bag
from .bridge_rederive import bag_bridge_topics, BridgeReport, rederive_bridge
from .events import BagInfo, CycleEvent, GhostMessage, ReadError
from .report_json import read_errors_to_json
from .run_parameters import load_run_parameters, RunParameters
from .schema import quiet_parser

__all__ = [
    'REPLAY_VERSION',
    'Difference',
    'InputTap',
    'Rederivation',
    'FollowedChange',
    'followed_changes',
    'RederivationReport',
    'TopicReplay',
    'rederive',
]

REPLAY_VERSION = 'REPLAY-v1'
#: How many recent inputs and outcomes, per topic, are kept to resolve the stamps messages
#: name (a named input is logged within the transport bound of the message naming it).
_RECENT_STAMPS = 4096

_NONE_MATCHED: Mapping[int, object] = MappingProxyType({})

#: Takes one recorded belief or fix as the re-run reads it: (log time in ns, the sample).
InputTap = Callable[[int, BeliefSample | Observation], None]


class _NotPossible(Exception):
    """The replay cannot be done (at all, or from a cycle on); the message says why."""


@dataclass(frozen=True, slots=True)
class Difference:
    """The first difference of a topic: where, in which field, the two values.

    `kind`: ``field`` (both messages exist and `field` differs), ``recorded_only`` (the bag
    holds a message the re-run did not produce) or ``recomputed_only`` (the re-run produced
    one the bag lacks, while the bag records that topic further on). For the last two,
    `field` is '' and the message present is given by its content address (SPEC section 4).
    """

    cycle_stamp_ns: int
    kind: str
    field: str
    recorded: object
    recomputed: object

    def to_json(self) -> dict[str, JsonValue]:
        """Return the difference as a JSON object."""
        return {'cycle_stamp_ns': self.cycle_stamp_ns, 'kind': self.kind, 'field': self.field,
                'recorded': _json(self.recorded), 'recomputed': _json(self.recomputed)}

    def describe(self) -> str:
        """``<field> recorded X, recomputed Y`` (or which side lacks the message)."""
        if self.kind == 'recorded_only':
            return 'the bag holds a message the re-run does not produce'
        if self.kind == 'recomputed_only':
            return 'the re-run produces a message the bag lacks'
        return (f'{self.field or "(message)"} recorded {_short(self.recorded)}, recomputed '
                f'{_short(self.recomputed)}')


def _json(value: object) -> JsonValue:
    return cast(JsonValue, value)


def _short(value: object) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + '...'


@dataclass(frozen=True, slots=True)
class TopicReplay:
    """What was compared on one Ghost stream, and its first difference.

    `compared`: recorded messages re-derived from the inputs they name; `differing`: those of
    them that differ; `recorded_only`: recorded messages the re-run does not produce (a
    prediction from a belief that is not finite, say); `not_rederived`: recorded messages
    whose named inputs the bag does not hold (a failure), with the first reason; `cut`: those
    whose named inputs are before the recording (its start cut them: counted, not failed).
    """

    kind: str
    topics: tuple[str, ...] = ()
    compared: int = 0
    differing: int = 0
    recorded_only: int = 0
    not_rederived: int = 0
    cut: int = 0
    first: Difference | None = None
    first_not_rederived: tuple[int, str] | None = None

    @property
    def differences(self) -> int:
        """Messages that differ, or that the re-run does not produce."""
        return self.differing + self.recorded_only

    def to_json(self) -> dict[str, JsonValue]:
        """Return the stream's counts and first difference as a JSON object."""
        first = self.first_not_rederived
        return {
            'topics': list(self.topics),
            'compared': self.compared,
            'differing': self.differing,
            'recorded_only': self.recorded_only,
            'not_rederived': self.not_rederived,
            'cut': self.cut,
            'first_difference': None if self.first is None else self.first.to_json(),
            'first_not_rederived': None if first is None else {
                'cycle_stamp_ns': first[0], 'reason': first[1]},
        }


@dataclass(slots=True)
class _TopicStats:
    """The running counts of one stream (frozen into a TopicReplay at the end)."""

    kind: str
    topics: set[str] = field(default_factory=set)
    compared: int = 0
    differing: int = 0
    recorded_only: int = 0
    not_rederived: int = 0
    cut: int = 0
    first: Difference | None = None
    first_not_rederived: tuple[int, str] | None = None

    def note(self, difference: Difference) -> None:
        if self.first is None:
            self.first = difference

    def not_rederived_because(self, stamp_ns: int, why: _Why) -> None:
        if why.cut:
            self.cut += 1
            return
        self.not_rederived += 1
        if self.first_not_rederived is None:
            self.first_not_rederived = (stamp_ns, why.text)

    def frozen(self) -> TopicReplay:
        return TopicReplay(self.kind, tuple(sorted(self.topics)), self.compared, self.differing,
                           self.recorded_only, self.not_rederived, self.cut, self.first,
                           self.first_not_rederived)


@dataclass(frozen=True, slots=True)
class RederivationReport:
    """The verdict of the re-derivation of one bag from its inputs.

    `replayed`: the agent was re-run (a configuration and inputs were found); otherwise
    `not_possible_reason` says why (a limit of the bag, not a failure). `holds` is True
    exactly when every recorded message was re-derived from the inputs it names and equals
    the re-derived one. `violated` (a failure of verify_all): a message differs, or one whose
    named inputs the bag should hold could not be re-derived. `bridges`: the re-derivation of
    each bridge's conversion (px4_bridge's when the bag holds its fmu/out inputs, ap_bridge's
    and mavros_bridge's when it holds their inputs or the run recorded them); `bridge` is
    px4_bridge's.
    """

    property_version: str
    replayed: bool
    not_possible_reason: str | None
    config_source: str | None
    config_sha256: str | None
    input_topics: tuple[tuple[str, str], ...]
    beliefs: int
    observations: int
    cycles_compared: int
    topics: tuple[TopicReplay, ...]
    parameters_followed: tuple[FollowedChange, ...]
    read_errors: tuple[ReadError, ...] = ()
    bridges: tuple[BridgeReport, ...] = ()

    @property
    def bridge(self) -> BridgeReport | None:
        """The re-derivation of px4_bridge's conversion (None: the bag has no fmu/out)."""
        return self.bridge_report('px4_bridge')

    def bridge_report(self, name: str) -> BridgeReport | None:
        """The re-derivation of bridge `name`'s conversion, when there is one."""
        return next((report for report in self.bridges if report.name == name), None)

    @property
    def possible(self) -> bool:
        """True when the agent was re-run and every input could be read."""
        return self.replayed and self.not_possible_reason is None

    @property
    def messages_compared(self) -> int:
        """Recorded messages compared with a re-derived one."""
        return sum(topic.compared for topic in self.topics)

    @property
    def messages_differing(self) -> int:
        """Messages that differ or that the re-run does not produce."""
        return sum(topic.differences for topic in self.topics)

    @property
    def messages_not_rederived(self) -> int:
        """Messages whose named inputs the bag does not hold (a failure)."""
        return sum(topic.not_rederived for topic in self.topics)

    @property
    def messages_cut(self) -> int:
        """Messages whose named inputs are before the recording (counted, not failed)."""
        return sum(topic.cut for topic in self.topics)

    @property
    def holds(self) -> bool:
        """True when every message (and the bridge's conversion) was re-derived, all equal."""
        return (self.possible and self.messages_differing == 0
                and self.messages_not_rederived == 0
                and all(bridge.holds for bridge in self.bridges))

    @property
    def violated(self) -> bool:
        """True when a message differs, or could not be re-derived from what it names."""
        return (self.messages_differing > 0 or self.messages_not_rederived > 0
                or any(bridge.violated for bridge in self.bridges))

    @property
    def complete(self) -> bool:
        """True when everything was re-derived: nothing cut, nothing of the bridge's left."""
        return (self.holds and self.messages_cut == 0
                and all(bridge.unmatched == 0 for bridge in self.bridges))

    def fails(self, strict: bool) -> bool:
        """Whether verify_all fails on it: a violation; with `strict`, anything not done."""
        return self.violated or (strict and not self.complete)

    @property
    def incomplete_input(self) -> bool:
        """True when part of the bag could not be read (the replay was then not possible)."""
        return bool(self.read_errors)

    @property
    def parameters_changed(self) -> bool:
        """True when some followed value is not the run configuration's."""
        return bool(self.parameters_followed)

    def first_difference(self) -> tuple[str, Difference] | None:
        """The earliest difference over every stream (pipeline order at one stamp)."""
        found = [(topic.first.cycle_stamp_ns, MESSAGE_KINDS.index(topic.kind), topic.kind,
                  topic.first) for topic in self.topics if topic.first is not None]
        if not found:
            return None
        _, _, kind, difference = min(found, key=lambda item: (item[0], item[1]))
        return kind, difference

    def first_not_rederived(self) -> tuple[str, int, str] | None:
        """The earliest message not re-derived: its stream, cycle stamp and reason."""
        found = [(topic.first_not_rederived[0], MESSAGE_KINDS.index(topic.kind), topic.kind,
                  topic.first_not_rederived[1]) for topic in self.topics
                 if topic.first_not_rederived is not None]
        if not found:
            return None
        stamp, _, kind, reason = min(found)
        return kind, stamp, reason

    def to_json(self) -> dict[str, JsonValue]:
        """Return the report as a JSON object (see docs/properties.md for the fields)."""
        first = self.first_difference()
        unrederived = self.first_not_rederived()
        return {
            'property_version': self.property_version,
            'holds': self.holds,
            'replayed': self.replayed,
            'possible': self.possible,
            'not_possible_reason': self.not_possible_reason,
            'config_source': self.config_source,
            'config_sha256': self.config_sha256,
            'input_topics': dict(self.input_topics),
            'beliefs': self.beliefs,
            'observations': self.observations,
            'cycles_compared': self.cycles_compared,
            'messages_compared': self.messages_compared,
            'messages_differing': self.messages_differing,
            'messages_not_rederived': self.messages_not_rederived,
            'messages_cut': self.messages_cut,
            'first_difference': None if first is None else {'stream': first[0],
                                                             **first[1].to_json()},
            'first_not_rederived': None if unrederived is None else {
                'stream': unrederived[0], 'cycle_stamp_ns': unrederived[1],
                'reason': unrederived[2]},
            'topics': {topic.kind: topic.to_json() for topic in self.topics},
            'parameters_followed': [run.to_json() for run in self.parameters_followed],
            'parameters_changed': self.parameters_changed,
            'incomplete_input': self.incomplete_input,
            'read_errors': read_errors_to_json(self.read_errors),
            'violated': self.violated,
            'px4_bridge': None, 'ap_bridge': None, 'mavros_bridge': None,
            **{bridge.name: bridge.to_json() for bridge in self.bridges},
        }

    def summary(self) -> str:
        """The one-line verdict, e.g. ``replay: 180/180 messages re-derived exactly (…)``."""
        compared = self.messages_compared
        exact = compared - sum(topic.differing for topic in self.topics)
        if not self.replayed:
            return f'replay: not possible ({self.not_possible_reason})'
        if self.messages_differing:
            counts = ', '.join(f'{topic.kind} {topic.differences}' for topic in self.topics
                               if topic.differences)
            first = self.first_difference()
            assert first is not None
            kind, difference = first
            return (f'replay: DIFFERS ({self.messages_differing} of {compared} messages differ'
                    f' from what their named inputs give: {counts}; the first at '
                    f'{difference.cycle_stamp_ns} ns: {kind} {difference.describe()})')
        unrederived = self.first_not_rederived()
        if unrederived is not None:
            kind, stamp, reason = unrederived
            return (f'replay: NOT RE-DERIVED ({self.messages_not_rederived} messages could not '
                    f'be re-derived; the first at {stamp} ns: {kind}: {reason}; '
                    f'{exact}/{compared} others exactly)')
        if self.not_possible_reason is not None:
            return (f'replay: not possible from the cycle where the inputs stop being readable '
                    f'({self.not_possible_reason}); before it {exact}/{compared} messages '
                    'were re-derived exactly')
        cut = (f"; {self.messages_cut} cut by the recording's start" if self.messages_cut
               else '')
        return (f'replay: {exact}/{compared} messages re-derived exactly ({self.cycles_compared}'
                f' cycles, from {self.beliefs} beliefs and {self.observations} fixes{cut})')

    def notes(self) -> tuple[str, ...]:
        """Per stream with a difference, its first one; every parameter followed."""
        lines = []
        for topic in self.topics:
            if topic.first is not None:
                where = ', '.join(topic.topics) or 'not recorded'
                lines.append(f'replay: {topic.kind} ({where}): {topic.differences} of '
                             f'{topic.compared} differ, the first at '
                             f'{topic.first.cycle_stamp_ns} ns: {topic.first.describe()}')
        for change in self.parameters_followed:
            if change.parameter != 'thresholds':
                lines.append(f'replay: followed the recorded change of {change.parameter} '
                             f'from {change.previous} to {change.value} for the cycles after '
                             f'{change.in_force_after_stamp_ns} ns')
        for bridge in self.bridges:
            lines.extend(bridge.notes())
        return tuple(lines)


@dataclass(frozen=True, slots=True)
class FollowedChange:
    """A recorded configuration change the re-run followed: one parameter's new value."""

    parameter: str
    value: JsonValue
    in_force_after_stamp_ns: int
    #: The value before the change.
    previous: JsonValue

    def to_json(self) -> dict[str, JsonValue]:
        """Return the change as a JSON object."""
        return {'parameter': self.parameter, 'value': self.value,
                'in_force_after_stamp_ns': self.in_force_after_stamp_ns,
                'previous': self.previous}


def followed_changes(timeline: ConfigurationTimeline) -> tuple[FollowedChange, ...]:
    """Every parameter value a recorded change set, against the value before it."""
    followed: list[FollowedChange] = []
    before = _flat(timeline.start.to_dict())
    for change in timeline.changes:
        after = {**before, **_flat(change.section)}
        followed.extend(FollowedChange(name, after[name], change.in_force_after_stamp_ns,
                                       before.get(name)) for name in sorted(after)
                        if json.dumps(after[name]) != json.dumps(before.get(name)))
        before = after
    return tuple(followed)


def _flat(section: Mapping[str, object]) -> dict[str, JsonValue]:
    """The followed parameters of (part of) a run configuration, by name."""
    flat: dict[str, JsonValue] = {}
    loop = section.get('loop')
    if isinstance(loop, Mapping):
        flat.update({str(key): _json(value) for key, value in loop.items()})
    if 'process_noise_q' in section:
        flat['process_noise_q'] = _json(section['process_noise_q'])
    if 'thresholds' in section:
        flat['thresholds'] = _json(section['thresholds'])
    return flat


def _stamp(value: object) -> int | None:
    if isinstance(value, Mapping):
        sec, nanosec = value.get('sec'), value.get('nanosec')
        if isinstance(sec, int) and isinstance(nanosec, int):
            return sec * 1_000_000_000 + nanosec
    return None


class _Inputs:
    """The bag's beliefs, fixes and vehicle statuses in the order the recorder received them.

    The statuses (what the decisions' context records, ADR-0021 §2) are the bag's one
    ``ghost_interfaces/msg/VehicleStatus`` topic, if it has one. They come STATUS_LEAD_NS
    ahead of the beliefs and fixes (a second stream over the same files): the decision policy
    takes the latest status stamped at or before a cycle, and a status reaches it before that
    cycle's calibrated assessment (ghost_core.vehicle), while the recorder may have received
    it after the cycle's belief. Bounded: the statuses of a window, not of the whole bag.
    """

    def __init__(self, files: tuple[Path, ...], names: Mapping[str, str]) -> None:
        self._files = files
        self.status_topic = ''
        self.state_topic, self.observations_topic = self._topics(names)
        self.beliefs = 0
        self.observations = 0
        self.statuses = 0
        # Who else takes each belief and fix as it is read (RECOVERY-v1), and whether the
        # read went to the end without an error.
        self._taps: list[InputTap] = []
        self.read_to_end = False
        self.stream = self._read()

    def tap(self, take: InputTap) -> None:
        """Give `take` every belief and fix read from now on, in the recorder's order."""
        self._taps.append(take)

    def drain(self) -> None:
        """Read what the re-run left (it stopped early, or never started), for the taps."""
        try:
            for _ in self.stream:
                pass
        except _NotPossible:
            pass  # read_to_end stays False: a tap must not take the stream as whole

    def _topics(self, names: Mapping[str, str]) -> tuple[str, str]:
        found: dict[str, set[str]] = {STATE_TYPE: set(), OBSERVATION_TYPE: set()}
        types: dict[str, str] = {}
        for path in self._files:
            try:
                with path.open('rb') as stream:
                    summary = make_reader(stream).get_summary()
            except Exception as err:  # noqa: BLE001 - mcap raises many kinds of error
                raise _NotPossible(f'{path.name}: its summary cannot be read '
                                   f'({" ".join(str(err).split())[:80]})') from err
            if summary is None:
                raise _NotPossible(f'{path.name} has no summary (a recorder that did not close)')
            for channel in summary.channels.values():
                schema = summary.schemas.get(channel.schema_id)
                name = schema.name if schema is not None else ''
                types[channel.topic] = name
                if name in found:
                    found[name].add(channel.topic)
        statuses = sorted(topic for topic, name in types.items() if name == STATUS_TYPE)
        if len(statuses) > 1:
            raise _NotPossible(f'the bag holds {len(statuses)} {STATUS_TYPE} topics '
                               f'({", ".join(statuses)}): which one the agent read is not known')
        self.status_topic = statuses[0] if statuses else ''
        if names:
            state, observations = names['state'], names['observations']
            if state not in types:
                raise _NotPossible(f'the bag holds no {state} (the recorded input_topics.state):'
                                   ' the inputs were not recorded')
            for topic, expected in ((state, STATE_TYPE), (observations, OBSERVATION_TYPE)):
                if topic in types and types[topic] != expected:
                    raise _NotPossible(f'{topic} has type {types[topic] or "(none)"}, expected '
                                       f'{expected}')
            return state, observations
        states, fixes = sorted(found[STATE_TYPE]), sorted(found[OBSERVATION_TYPE])
        if not states:
            raise _NotPossible(f'the bag holds no {STATE_TYPE} topic: the inputs were not '
                               'recorded')
        if len(states) > 1 or len(fixes) > 1:
            raise _NotPossible(f'the bag holds {len(states)} {STATE_TYPE} and {len(fixes)} '
                               f'{OBSERVATION_TYPE} topics, and its run configuration does not '
                               'name the input topics')
        return states[0], fixes[0] if fixes else ''

    def _read(self) -> Iterator[TimedInput]:
        for message in self._messages():
            sample = message.sample
            if message.topic == self.state_topic:
                self.beliefs += 1
            elif message.topic == self.observations_topic:
                self.observations += 1
            else:
                self.statuses += 1
            if not isinstance(sample, VehicleStatus):
                for take in self._taps:
                    take(message.log_time_ns, sample)
            yield TimedInput(message.log_time_ns, sample)
        self.read_to_end = True

    def _messages(self) -> Iterator[InputMessage]:
        """The inputs, in the recorder's log-time order (files in rosbag2 order)."""
        for path in self._files:
            try:
                with quiet_parser():
                    yield from read_file_inputs(path, self.state_topic, self.observations_topic,
                                                status_topic=self.status_topic)
            except Exception as err:  # noqa: BLE001 - decoding recorded bytes
                # Named by what went wrong underneath (the reader wraps it in InputBagError).
                cause = err.__cause__ if isinstance(err, InputBagError) else None
                cause = cause if isinstance(cause, Exception) else err
                raise _NotPossible(f'{path.name}: the inputs cannot be read '
                                   f'({type(cause).__name__}: '
                                   f'{" ".join(str(cause).split())[:80]})') from err


class _Why:
    """Why one recorded message could not be re-derived; `cut`: the recording's start did it."""

    __slots__ = ('cut', 'text')

    def __init__(self, text: str, cut: bool = False) -> None:
        self.text = text
        self.cut = cut


class _Recent:
    """The recorded inputs of one topic by stamp: the recent ones, and the first stamp seen."""

    def __init__(self) -> None:
        self.by_stamp: OrderedDict[int, object] = OrderedDict()
        self.first_ns: int | None = None

    def add(self, stamp_ns: int, sample: object) -> None:
        if self.first_ns is None or stamp_ns < self.first_ns:
            self.first_ns = stamp_ns
        self.by_stamp.setdefault(stamp_ns, sample)
        if len(self.by_stamp) > _RECENT_STAMPS:
            self.by_stamp.popitem(last=False)

    def missing(self, what: str, stamp_ns: int) -> _Why:
        """Why the input stamped `stamp_ns` is not at hand (before the recording: a cut)."""
        if self.first_ns is None or stamp_ns < self.first_ns:
            return _Why(f'it names the {what} stamped {stamp_ns} ns, before the recording',
                        cut=True)
        return _Why(f'it names the {what} stamped {stamp_ns} ns, which the bag does not hold '
                    'within the transport bound of it')


def _named_stamp(msg: Mapping[str, object], flag: str, name: str) -> int | None:
    """The stamp a message names in `name` when `flag` is set (None: it names none)."""
    return _stamp(msg.get(name)) if msg.get(flag) else None


def _same_message(message: GhostMessage, ours: Mapping[str, object], contract: object) -> bool:
    """Whether `ours` (written from `contract`) is the recorded message (SPEC section 4).

    By content address when the reader computed the recorded one's (the streams something
    cites), field by field otherwise.
    """
    if message.sha256:
        return message_address(contract) == message.sha256
    return first_difference(message.msg, ours) is None


def _parsed_outcome(msg: Mapping[str, object]) -> PredictionOutcome | None:
    try:
        return parse_prediction_outcome(msg)
    except (TypeError, ValueError, KeyError, ArithmeticError):
        return None


def _recorded(cycle: CycleEvent) -> dict[str, tuple[GhostMessage, ...]]:
    return {
        'raw_assessment': tuple(item.message for item in cycle.raw_assessments),
        'prediction': cycle.predictions,
        'outcome': cycle.outcomes,
        'calibrated': tuple(item.message for item in cycle.calibrated),
        'rationale': tuple(item.message for item in cycle.rationales),
        'actuation': tuple(item.message for item in cycle.actuations),
    }


class _Comparison:
    """The streaming comparison of one bag: each message re-computed from what it names.

    Cycles come in stamp order; before each, the inputs the recorder logged up to the
    transport bound after the cycle's last message are read (a named input logged later is
    EVIDENCE-v1's ``named_input_from_the_future``). Per message, ``NamedRerun`` gives the
    node's output from the inputs the message names; a message whose named inputs are not in
    the bag is not re-derived, with a reason: at the recording's start that is a cut (counted),
    anywhere else a failure.
    """

    def __init__(self, timeline: ConfigurationTimeline, inputs: _Inputs,
                 assessor_started_log_ns: int | None) -> None:
        self.timeline = timeline
        self.inputs = inputs
        self.rerun = NamedRerun(timeline)
        self.topics = {kind: _TopicStats(kind) for kind in MESSAGE_KINDS}
        self.cycles_compared = 0
        self.reason: str | None = None  # the inputs could not be read (nothing more compared)
        self._stream = inputs.stream
        self._last_log_ns: int | None = None
        self._first_input_log_ns: int | None = None
        self._beliefs, self._fixes, self._statuses = _Recent(), _Recent(), _Recent()
        self._outcomes: OrderedDict[int, PredictionOutcome] = OrderedDict()
        self._first_outcome_ns: int | None = None
        # None until the first raw assessment is met; then whether the assessor's hysteresis
        # began before the recording (its raw assessments cannot be re-derived until it
        # restarts).
        self._assessor_cut: bool | None = None
        self._assessor_started_log_ns = assessor_started_log_ns
        # The recorded messages of the last cycle compared that are exactly the re-run's, by
        # id: the contract each was written from (see Rederivation.matched).
        self.matched: dict[int, object] = {}

    def _pull(self, until_log_ns: int) -> None:
        """Read the inputs the recorder logged up to `until_log_ns`."""
        while self._last_log_ns is None or self._last_log_ns <= until_log_ns:
            try:
                item = next(self._stream, None)
            except _NotPossible as err:
                self.reason = str(err)
                return
            if item is None:
                self._last_log_ns = 2**63
                return
            self._last_log_ns = item.log_time_ns
            if self._first_input_log_ns is None:
                self._first_input_log_ns = item.log_time_ns
            sample = item.sample
            stream = (self._beliefs if isinstance(sample, BeliefSample)
                      else self._fixes if isinstance(sample, Observation) else self._statuses)
            stream.add(sample.stamp_ns, sample)

    def update(self, cycle: CycleEvent, *, compare: bool = True) -> None:
        """Compare one recorded cycle (cycles come in stamp order).

        With `compare` False the cycle is re-run, not compared (a cycle the start-up rule
        leaves unverifiable): the assessor's state and the window still follow it, so the
        first cycle judged is re-derived as the agent had it.
        """
        self.matched.clear()
        recorded = _recorded(cycle)
        logged = [message.log_time_ns for messages in recorded.values() for message in messages]
        for kind, messages in recorded.items():
            self.topics[kind].topics.update(message.topic for message in messages)
        if logged and self.reason is None:
            self._pull(max(logged) + TRANSPORT_BOUND_NS)
        if self.reason is not None:
            for kind, messages in recorded.items():
                self.topics[kind].not_rederived += len(messages) if compare else 0
            return
        ours, why = self._rerun(cycle.stamp_ns, recorded)
        if compare:
            self._compare(cycle.stamp_ns, ours, why, recorded)

    def _rerun(self, t: int, recorded: Mapping[str, tuple[GhostMessage, ...]]
               ) -> tuple[dict[str, object], dict[str, _Why]]:
        """Every stream's re-derived message of cycle `t`, or why it has none."""
        ours: dict[str, object] = {}
        belief = cast(BeliefSample | None, self._beliefs.by_stamp.get(t))
        if belief is None:
            missing = self._beliefs.missing('belief', t)
            missing.text = missing.text.replace('it names', 'its cycle is')
            return ours, {kind: missing for kind in MESSAGE_KINDS}
        why: dict[str, _Why] = {}
        raw = self._raw(belief, recorded, why)
        ours['raw_assessment'] = raw
        ours['prediction'] = self.rerun.prediction(belief)
        if recorded['outcome']:
            outcome = self._outcome(belief, recorded['outcome'][0].msg, why)
            if outcome is not None:
                ours['outcome'] = outcome
            else:
                # The calibrator's input is the outcome it received: its window is judged
                # with the recorded one (this one's failure is counted already).
                outcome = _parsed_outcome(recorded['outcome'][0].msg)
            if outcome is not None:
                if outcome.observed:
                    self._outcomes[t] = outcome
                    if len(self._outcomes) > _RECENT_STAMPS:
                        self._outcomes.popitem(last=False)
                    if self._first_outcome_ns is None:
                        self._first_outcome_ns = t
        calibrated = None
        if recorded['calibrated']:
            calibrated = self._calibrated(raw, recorded['calibrated'][0].msg, why)
        rationale = None
        if recorded['rationale'] and calibrated is not None:
            named = _named_stamp(recorded['rationale'][0].msg, 'has_vehicle_status',
                                 'vehicle_status_stamp')
            status = None if named is None else self._statuses.by_stamp.get(named)
            if named is not None and status is None:
                why['rationale'] = self._statuses.missing('vehicle status', named)
            else:
                rationale = self.rerun.rationale(calibrated, cast(VehicleStatus | None, status))
        elif recorded['rationale']:
            why['rationale'] = why.get('calibrated', _Why('the calibrated assessment it '
                                                          'decides on is not in the bag'))
        ours['calibrated'], ours['rationale'] = calibrated, rationale
        if rationale is not None:
            ours['actuation'] = self.rerun.actuation(rationale)
        elif recorded['actuation']:
            why['actuation'] = why.get('rationale', _Why('the rationale it executes is not in '
                                                         'the bag'))
        return ours, why

    def _raw(self, belief: BeliefSample, recorded: Mapping[str, tuple[GhostMessage, ...]],
             why: dict[str, _Why]) -> BeliefSelfAssessment | None:
        """The raw assessment re-computed with the confirmation the recorded one names.

        Its names are the recorded raw assessment's, or (the recorder missed it) the one the
        calibrated assessment holds inline; with neither, the assessor did not judge this
        belief. The assessor whose first raw assessment in the bag names a belief before
        the recording began before it: its hysteresis is not in the bag, so its raw
        assessments are taken as recorded (a cut) until it starts again (one names no
        previous belief). Unless the recorder logged inputs before the assessor's start
        configuration: then it ran before the assessor, and that name is not believed.
        """
        msg: Mapping[str, object] | None = None
        if recorded['raw_assessment']:
            msg = recorded['raw_assessment'][0].msg
        elif recorded['calibrated']:
            inline = recorded['calibrated'][0].msg.get('raw_assessment')
            msg = inline if isinstance(inline, Mapping) else None
        if msg is None:
            return None
        previous = _named_stamp(msg, 'has_previous', 'previous_stamp')
        if self._assessor_cut is None or (self._assessor_cut and previous is None):
            started = self._assessor_started_log_ns
            ran_before = (started is not None and self._first_input_log_ns is not None
                          and self._first_input_log_ns + TRANSPORT_BOUND_NS < started)
            self._assessor_cut = (previous is not None and not ran_before
                                  and previous not in self._beliefs.by_stamp
                                  and (self._beliefs.first_ns is None
                                       or previous < self._beliefs.first_ns))
            if not self._assessor_cut:
                self.rerun.restart()
        if self._assessor_cut:
            why['raw_assessment'] = _Why('the self-assessor started before the recording: '
                                         'its hysteresis is not in the bag', cut=True)
            try:
                return parse_belief_self_assessment(msg)
            except (TypeError, ValueError, KeyError) as err:
                why['calibrated'] = _Why(f'its raw assessment cannot be read: {err}')
                return None
        confirmation = _named_stamp(msg, 'has_confirmation', 'confirmation_stamp')
        return self.rerun.raw(belief, confirmation)

    def _outcome(self, belief: BeliefSample, msg: Mapping[str, object],
                 why: dict[str, _Why]) -> PredictionOutcome | None:
        """The outcome re-computed from the prediction and fix the recorded one names."""
        made = _stamp(msg.get('prediction_stamp')) or 0
        fix_ns = _stamp(msg.get('observation_stamp')) or 0
        prediction = None
        if made:
            source = cast(BeliefSample | None, self._beliefs.by_stamp.get(made))
            if source is None:
                why['outcome'] = self._beliefs.missing('prediction made from the belief', made)
                return None
            prediction = self.rerun.prediction(source)
        observation = None
        if fix_ns:
            observation = cast(Observation | None, self._fixes.by_stamp.get(fix_ns))
            if observation is None:
                why['outcome'] = self._fixes.missing('fix', fix_ns)
                return None
        return self.rerun.outcome(belief.stamp_ns, belief.frame_id, prediction, observation)

    def _calibrated(self, raw: BeliefSelfAssessment | None, msg: Mapping[str, object],
                    why: dict[str, _Why]) -> CalibratedSelfAssessment | None:
        """The calibrated assessment re-computed from its raw one and the window it names."""
        if raw is None:
            why.setdefault('calibrated', _Why('the raw assessment it calibrates is not in the '
                                              'bag'))
            return None
        named = msg.get('window_outcome_stamps_ns')
        stamps = [int(stamp) for stamp in cast(list[int], named)] if isinstance(
            named, (list, tuple)) else []
        window = []
        for stamp in stamps:
            outcome = self._outcomes.get(stamp)
            if outcome is None:
                cut = self._first_outcome_ns is None or stamp < self._first_outcome_ns
                why['calibrated'] = _Why(f'it names the outcome of {stamp} ns, '
                                         + ('before the recording' if cut else
                                            'which the re-run does not have'), cut=cut)
                return None
            window.append(outcome)
        return self.rerun.calibrated(raw, window)

    def _compare(self, stamp_ns: int, ours: Mapping[str, object], why: Mapping[str, _Why],
                 recorded: Mapping[str, tuple[GhostMessage, ...]]) -> None:
        self.cycles_compared += 1
        for kind in MESSAGE_KINDS:
            topic = self.topics[kind]
            reason = why.get(kind)
            contract = ours.get(kind)
            written = None if contract is None else to_msg_dict(contract)
            for message in recorded[kind]:
                if reason is not None:
                    topic.not_rederived_because(stamp_ns, reason)
                    continue
                if written is None:
                    topic.recorded_only += 1
                    topic.note(Difference(stamp_ns, 'recorded_only', '', message.sha256
                                          or content_address(dict(message.msg)), None))
                    continue
                topic.compared += 1
                found: FieldDifference | None = (
                    None if _same_message(message, written, contract)
                    else first_difference(message.msg, written))
                if found is None:
                    self.matched[id(message)] = contract
                else:
                    topic.differing += 1
                    topic.note(Difference(stamp_ns, 'field', found.field, found.recorded,
                                          found.recomputed))


class Rederivation:
    """The re-derivation of one bag, fed the cycles of a pass over it (``update``).

    ``verify_all`` feeds it from its own single pass, so the Ghost messages are read once;
    the inputs are read by the re-run as it needs them. ``result`` after the last cycle.
    """

    def __init__(self, bag: str | os.PathLike[str], parameters: RunParameters) -> None:
        self._bag = bag
        self._parameters = parameters
        self._reason: str | None = parameters.problem or parameters.missing or None
        self._comparison: _Comparison | None = None
        if self._reason is None:
            timeline = parameters.timeline
            assert timeline is not None  # no problem and nothing missing: a configuration
            try:
                inputs = _Inputs(resolve_bag(bag).files, parameters.input_topics)
                self._comparison = _Comparison(timeline, inputs,
                                               parameters.assessor_started_log_ns)
            except _NotPossible as err:
                self._reason = str(err)

    #: Where the run began to stop (ghost_verify.edges), for the bridge's outputs.
    stop_log_ns: int | None = None

    def warm_up(self, cycle: CycleEvent) -> None:
        """Re-run a cycle the start-up rule leaves unverifiable, without comparing it.

        ghost_verify.edges: the agent's state (hysteresis, window) from the cycles before the
        run was ready is the one its first judged cycle was computed with.
        """
        if self._comparison is not None:
            self._comparison.update(cycle, compare=False)

    def tap_inputs(self, take: InputTap, state_topic: str, observations_topic: str) -> bool:
        """Give `take` every belief and fix the re-run reads, when it reads these topics.

        So RECOVERY-v1 judges the inputs of the same read. False when the re-run reads other
        topics, or none (not possible): the caller reads the inputs itself.
        """
        if self._comparison is None:
            return False
        inputs = self._comparison.inputs
        if (inputs.state_topic, inputs.observations_topic) != (state_topic,
                                                               observations_topic):
            return False
        inputs.tap(take)
        return True

    def read_every_input(self) -> bool:
        """After ``result``: read what the re-run left; whether every input was read.

        False when a recorded input could not be read (a tap has then not had them all).
        """
        if self._comparison is None:
            return False
        self._comparison.inputs.drain()
        return self._comparison.inputs.read_to_end

    def update(self, cycle: CycleEvent) -> None:
        """Compare one recorded cycle (in the bag's stamp order)."""
        if self._comparison is not None:
            self._comparison.update(cycle)

    @property
    def matched(self) -> Mapping[int, object]:
        """The last cycle's recorded messages that are exactly the re-run's: id -> contract.

        Keyed by the id of the cycle's GhostMessage; valid until the next ``update``. The
        contract is the one the re-run wrote the message from (validated as it was built, and
        equal to what parsing the recorded message gives), so a check of the same pass takes
        it instead of parsing the message again.
        """
        return _NONE_MATCHED if self._comparison is None else self._comparison.matched

    def result(self, info: BagInfo) -> RederivationReport:
        """The report, for the bag `info` describes (a re-run needs all of it read)."""
        comparison, reason = self._comparison, self._reason
        if comparison is not None and info.read_errors:
            comparison, reason = None, ('part of the bag could not be read (see read_errors): '
                                        'a re-run needs every input and every recorded message')
        bridge = _bridges(self._bag, self._parameters, info, self.stop_log_ns)
        if comparison is None:
            return _not_replayed(self._parameters, reason or 'the run configuration is missing',
                                 info, bridge)
        return _replayed(self._parameters, comparison, info, bridge)


def rederive(
    bag: str | os.PathLike[str],
    *,
    cycle_window: int = DEFAULT_CYCLE_WINDOW,
    parameters: RunParameters | None = None,
    info: BagInfo | None = None,
) -> RederivationReport:
    """Re-run the agent from the bag's inputs and compare every recorded Ghost message.

    A pass of its own over the bag (``verify_all`` feeds a Rederivation from its pass
    instead). The re-run follows the run's recorded configuration and its recorded changes
    (`parameters`, loaded from the bag when not given); `info`, when given, is what another
    pass read of the bag (its read errors stand). Raises what GhostBag raises for a bag that
    cannot be read at all (BagError (ghost_bag.errors)); everything else is in the report.
    """
    if parameters is None:
        parameters = load_run_parameters(bag)
    rederivation = Rederivation(bag, parameters)
    ghost_bag = GhostBag(bag, cycle_window=cycle_window)
    for cycle in ghost_bag.cycles():
        rederivation.update(cycle)
    return rederivation.result(ghost_bag.info if info is None else info)


def _bridges(bag: str | os.PathLike[str], parameters: RunParameters,
             info: BagInfo, stop_ns: int | None = None) -> tuple[BridgeReport, ...]:
    """The re-derivation of each bridge's conversion.

    px4_bridge's when the bag holds its fmu/out inputs, ap_bridge's (mavros_bridge's) when it
    holds its /ap (/mavros) inputs or the run recorded it.
    """
    found = []
    for name, recorded in (('px4_bridge', parameters.px4_bridge),
                           ('ap_bridge', parameters.ap_bridge),
                           ('mavros_bridge', parameters.mavros_bridge)):
        topics = bag_bridge_topics(bag, name)
        if not topics and (name == 'px4_bridge' or recorded is None):
            continue
        if info.read_errors:
            found.append(replace(rederive_bridge(bag, None, (), bridge=name),
                                 not_possible_reason='part of the bag could not be read (see '
                                                     'read_errors)'))
            continue
        found.append(rederive_bridge(bag, recorded, topics, stop_ns, name))
    return tuple(found)


def _not_replayed(parameters: RunParameters, reason: str, info: BagInfo,
                  bridge: tuple[BridgeReport, ...]) -> RederivationReport:
    return RederivationReport(
        property_version=REPLAY_VERSION, replayed=False, not_possible_reason=reason,
        config_source=MANIFEST_NAME if parameters.config_sha256 else None,
        config_sha256=parameters.config_sha256 or None,
        input_topics=tuple(sorted(parameters.input_topics.items())), beliefs=0,
        observations=0, cycles_compared=0,
        topics=tuple(TopicReplay(kind) for kind in MESSAGE_KINDS),
        parameters_followed=(), read_errors=info.read_errors, bridges=bridge)


def _replayed(parameters: RunParameters, comparison: _Comparison, info: BagInfo,
              bridge: tuple[BridgeReport, ...]) -> RederivationReport:
    return RederivationReport(
        property_version=REPLAY_VERSION, replayed=True,
        not_possible_reason=comparison.reason,
        config_source=MANIFEST_NAME, config_sha256=parameters.config_sha256 or None,
        input_topics=(('observations', comparison.inputs.observations_topic),
                      ('state', comparison.inputs.state_topic)),
        beliefs=comparison.inputs.beliefs, observations=comparison.inputs.observations,
        cycles_compared=comparison.cycles_compared,
        topics=tuple(comparison.topics[kind].frozen() for kind in MESSAGE_KINDS),
        parameters_followed=followed_changes(comparison.timeline),
        read_errors=info.read_errors, bridges=bridge)
