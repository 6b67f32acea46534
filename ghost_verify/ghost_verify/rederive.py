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

from collections import deque, OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
import json
import math
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
from ghost_core.assessment import AssessorState
from ghost_core.contracts import BeliefSelfAssessment, ForwardPrediction, VehicleStatus
from ghost_core.errors import GhostError
from ghost_core.hashing import content_address
from ghost_core.pipeline import CycleTrace, PipelineConfig
from ghost_core.properties import JsonValue
from ghost_core.rederive import (
    FieldDifference,
    first_difference,
    MESSAGE_KINDS,
    RACE_WINDOW_NS,
    Replay,
    TimedInput,
    trace_contracts,
    trace_messages,
)
from ghost_core.run_configuration import ConfigurationTimeline
from ghost_core.samples import BeliefSample, Observation
from ghost_core.sequencing import CycleInputs
from ghost_core.wire import message_address, to_msg_dict

from .bag import DEFAULT_CYCLE_WINDOW, GhostBag, resolve_bag
from .bridge_rederive import bag_px4_topics, BridgeReport, rederive_bridge
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
#: The decision context fields of a rationale (ADR-0021), and their values with no status.
_CONTEXT = ('flight_status', 'mission_status', 'perception_mode', 'has_vehicle_status',
            'vehicle_status_stamp')
_UNKNOWN_CONTEXT = {'flight_status': 0, 'mission_status': 0, 'perception_mode': '',
                    'has_vehicle_status': False, 'vehicle_status_stamp': {'sec': 0, 'nanosec': 0}}
#: How many recent input stamps are kept to tell a missing input from a present one (a
#: recorded message names only the previous belief and fixes since it).
_RECENT_STAMPS = 4096

_NONE_MATCHED: Mapping[int, object] = MappingProxyType({})

#: How far ahead of the beliefs and fixes (log time) the vehicle statuses are read: a status
#: the recorder received up to this long after a cycle's belief is still in force for it.
STATUS_LEAD_NS = 10_000_000_000

#: Takes one recorded belief or fix as the re-run reads it: (log time in ns, the sample).
InputTap = Callable[[int, BeliefSample | Observation], None]
#: At most this many assessor states are kept as admissible: they branch only while fixes
#: start or stop at the unconfirmed horizon, and merge once a block is published KNOWN.
_ASSESSOR_STATES = 64


_REORDERED = {'raw_assessment': 'raw assessments (the confirmation they were judged with)',
              'outcome': 'outcomes (the prediction and fix they pair)'}


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

    `compared`: recorded messages that had a re-derived counterpart; `differing`: those of
    them that differ; `recorded_only` / `recomputed_only`: messages on one side only (see
    Difference); `not_recorded`: re-derived messages after the last one the bag records on the
    topic (the recording stopped, or the topic was not recorded: not compared, not
    differences); `not_compared`: recorded messages from the cycle the replay stopped at.
    """

    kind: str
    topics: tuple[str, ...] = ()
    compared: int = 0
    differing: int = 0
    recorded_only: int = 0
    recomputed_only: int = 0
    not_recorded: int = 0
    not_compared: int = 0
    first: Difference | None = None

    @property
    def differences(self) -> int:
        """Messages that differ, or exist on one side only."""
        return self.differing + self.recorded_only + self.recomputed_only

    def to_json(self) -> dict[str, JsonValue]:
        """Return the stream's counts and first difference as a JSON object."""
        return {
            'topics': list(self.topics),
            'compared': self.compared,
            'differing': self.differing,
            'recorded_only': self.recorded_only,
            'recomputed_only': self.recomputed_only,
            'not_recorded': self.not_recorded,
            'not_compared': self.not_compared,
            'first_difference': None if self.first is None else self.first.to_json(),
        }


@dataclass(slots=True)
class _TopicStats:
    """The running counts of one stream (frozen into a TopicReplay at the end)."""

    kind: str
    topics: set[str] = field(default_factory=set)
    compared: int = 0
    differing: int = 0
    recorded_only: int = 0
    recomputed_only: int = 0
    not_recorded: int = 0
    not_compared: int = 0
    first: Difference | None = None
    # Re-derived messages not (yet) matched by a recorded one: count, first stamp and hash.
    pending: int = 0
    pending_first: tuple[int, str] | None = None

    def note(self, difference: Difference) -> None:
        if self.first is None:
            self.first = difference

    def pend(self, stamp_ns: int, message: Mapping[str, object]) -> None:
        self.pending += 1
        if self.pending_first is None:
            self.pending_first = (stamp_ns, content_address(dict(message)))

    def settle_pending(self, recorded_later: bool) -> None:
        """The bag records this topic later on (differences) or not (not recorded)."""
        if not self.pending:
            return
        if recorded_later:
            self.recomputed_only += self.pending
            assert self.pending_first is not None
            stamp, address = self.pending_first
            self.note(Difference(stamp, 'recomputed_only', '', None, address))
        else:
            self.not_recorded += self.pending
        self.pending = 0
        self.pending_first = None

    def frozen(self) -> TopicReplay:
        return TopicReplay(self.kind, tuple(sorted(self.topics)), self.compared, self.differing,
                           self.recorded_only, self.recomputed_only, self.not_recorded,
                           self.not_compared, self.first)


@dataclass(frozen=True, slots=True)
class RederivationReport:
    """The verdict of the re-derivation of one bag from its inputs.

    `replayed`: the agent was re-run (a configuration and inputs were found).
    `not_possible_reason`: why the replay could not be done, or could not go on from
    `replayed_until_ns` (None when the whole bag was re-derived). `holds` is True exactly when
    the whole bag was re-derived and every recorded message equals the re-derived one.
    `bridge`: the re-derivation of px4_bridge's conversion, when the bag holds its fmu/out
    inputs. `violated`: something re-derived differs (a failure of verify_all); what could
    not be re-derived fails only with --strict (``fails``).
    """

    property_version: str
    replayed: bool
    not_possible_reason: str | None
    replayed_until_ns: int | None
    config_source: str | None
    config_sha256: str | None
    input_topics: tuple[tuple[str, str], ...]
    beliefs: int
    observations: int
    cycles_replayed: int
    cycles_compared: int
    topics: tuple[TopicReplay, ...]
    parameters_followed: tuple[FollowedChange, ...]
    late_observations: int
    superseded_observations: int
    idle_flushes: int
    read_errors: tuple[ReadError, ...] = ()
    bridge: BridgeReport | None = None
    #: Rationales whose recorded vehicle context was the previous cycle's (its status reached
    #: the policy just after the decision): taken as recorded, and noted.
    contexts_behind: int = 0
    #: Cycles finished with the inputs the agent recorded having used, in an arrival order
    #: within RACE_WINDOW_NS of the recorder's, by stream (raw_assessment, outcome).
    reordered: tuple[tuple[str, int], ...] = ()

    @property
    def possible(self) -> bool:
        """True when the whole bag could be re-derived."""
        return self.replayed and self.not_possible_reason is None

    @property
    def messages_compared(self) -> int:
        """Recorded messages compared with a re-derived one."""
        return sum(topic.compared for topic in self.topics)

    @property
    def messages_differing(self) -> int:
        """Messages that differ or exist on one side only."""
        return sum(topic.differences for topic in self.topics)

    @property
    def holds(self) -> bool:
        """True when the whole bag (and the bridge's conversion) was re-derived, all equal."""
        return (self.possible and self.messages_differing == 0
                and (self.bridge is None or self.bridge.holds))

    @property
    def violated(self) -> bool:
        """True when a recorded message differs from the one re-derived from the inputs."""
        return self.messages_differing > 0 or (self.bridge is not None and self.bridge.violated)

    @property
    def complete(self) -> bool:
        """True when everything was re-derived in the recorder's order.

        No part not possible, nothing one-sided, no cycle finished in another order of arrival.
        """
        return (self.holds and (self.bridge is None or self.bridge.unmatched == 0)
                and not any(count for _, count in self.reordered))

    def fails(self, strict: bool) -> bool:
        """Whether verify_all fails on it: a difference; with `strict`, anything not done."""
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

    def to_json(self) -> dict[str, JsonValue]:
        """Return the report as a JSON object (see docs/properties.md for the fields)."""
        first = self.first_difference()
        return {
            'property_version': self.property_version,
            'holds': self.holds,
            'replayed': self.replayed,
            'possible': self.possible,
            'not_possible_reason': self.not_possible_reason,
            'replayed_until_ns': self.replayed_until_ns,
            'config_source': self.config_source,
            'config_sha256': self.config_sha256,
            'input_topics': dict(self.input_topics),
            'beliefs': self.beliefs,
            'observations': self.observations,
            'cycles_replayed': self.cycles_replayed,
            'cycles_compared': self.cycles_compared,
            'messages_compared': self.messages_compared,
            'messages_differing': self.messages_differing,
            'first_difference': None if first is None else {'stream': first[0],
                                                             **first[1].to_json()},
            'topics': {topic.kind: topic.to_json() for topic in self.topics},
            'parameters_followed': [run.to_json() for run in self.parameters_followed],
            'parameters_changed': self.parameters_changed,
            'contexts_behind': self.contexts_behind,
            'reordered': dict(self.reordered),
            'late_observations': self.late_observations,
            'superseded_observations': self.superseded_observations,
            'idle_flushes': self.idle_flushes,
            'incomplete_input': self.incomplete_input,
            'read_errors': read_errors_to_json(self.read_errors),
            'violated': self.violated,
            'px4_bridge': None if self.bridge is None else self.bridge.to_json(),
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
            verdict = (f'replay: DIFFERS ({exact}/{compared} messages re-derived exactly; '
                       f'{self.messages_differing} differ: {counts}; the first at '
                       f'{difference.cycle_stamp_ns} ns: {kind} {difference.describe()})')
            if self.not_possible_reason is not None:
                verdict += (f'; not possible from {self.replayed_until_ns} ns: '
                            f'{self.not_possible_reason}')
            return verdict
        if self.not_possible_reason is not None:
            return (f'replay: not possible from {self.replayed_until_ns} ns '
                    f'({self.not_possible_reason}); before it {exact}/{compared} messages '
                    'were re-derived exactly')
        return (f'replay: {exact}/{compared} messages re-derived exactly ({self.cycles_compared}'
                f' cycles, from {self.beliefs} beliefs and {self.observations} fixes)')

    def notes(self) -> tuple[str, ...]:
        """Per stream with a difference, its first one; every parameter followed; late fixes."""
        lines = []
        for topic in self.topics:
            if topic.first is not None:
                where = ', '.join(topic.topics) or 'not recorded'
                lines.append(f'replay: {topic.kind} ({where}): {topic.differences} of '
                             f'{topic.compared + topic.recomputed_only} differ, the first at '
                             f'{topic.first.cycle_stamp_ns} ns: {topic.first.describe()}')
        for change in self.parameters_followed:
            if change.parameter != 'thresholds':
                lines.append(f'replay: followed the recorded change of {change.parameter} '
                             f'from {change.previous} to {change.value} for the cycles after '
                             f'{change.in_force_after_stamp_ns} ns')
        if self.contexts_behind:
            lines.append(f'replay: {self.contexts_behind} decisions record the previous '
                         "cycle's vehicle status (the status reached the policy just after "
                         'the decision; taken as recorded)')
        for stream, count in self.reordered:
            if count:
                lines.append(f'replay: {count} {_REORDERED[stream]} follow an order of '
                             "arrival other than the recorder's (within "
                             f"{RACE_WINDOW_NS / 1e9:g} s of it), and are exactly the agent's "
                             'own function of that order (taken as recorded; --strict fails)')
        if self.late_observations:
            lines.append(f'replay: {self.late_observations} fixes reached the bag after their '
                         "cycle's lag: the agent may have received them sooner, and resolved "
                         'those cycles otherwise')
        if self.bridge is not None:
            lines.extend(self.bridge.notes())
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
        statuses = (self._messages('', '', self.status_topic) if self.status_topic
                    else iter(()))
        waiting = next(statuses, None)
        for message in self._messages(self.state_topic, self.observations_topic, ''):
            while (waiting is not None
                   and waiting.log_time_ns <= message.log_time_ns + STATUS_LEAD_NS):
                self.statuses += 1
                yield TimedInput(waiting.log_time_ns, waiting.sample)
                waiting = next(statuses, None)
            sample = cast(BeliefSample | Observation, message.sample)
            if message.topic == self.state_topic:
                self.beliefs += 1
            else:
                self.observations += 1
            for take in self._taps:
                take(message.log_time_ns, sample)
            yield TimedInput(message.log_time_ns, sample)
        while waiting is not None:
            self.statuses += 1
            yield TimedInput(waiting.log_time_ns, waiting.sample)
            waiting = next(statuses, None)
        self.read_to_end = True

    def _messages(self, state: str, observations: str, status: str) -> Iterator[InputMessage]:
        """The inputs of some topics, in the order the recorder received them (file order)."""
        for path in self._files:
            try:
                with quiet_parser():
                    yield from read_file_inputs(path, state, observations,
                                                log_time_order=False, status_topic=status)
            except Exception as err:  # noqa: BLE001 - decoding recorded bytes
                # Named by what went wrong underneath (the reader wraps it in InputBagError).
                cause = err.__cause__ if isinstance(err, InputBagError) else None
                cause = cause if isinstance(cause, Exception) else err
                raise _NotPossible(f'{path.name}: the inputs cannot be read '
                                   f'({type(cause).__name__}: '
                                   f'{" ".join(str(cause).split())[:80]})') from err


class _Rederiver:
    """The merge of the re-run (in cycle order) with the recorded cycles (in stamp order).

    Inputs are fed as the bag holds them; each cycle they resolve waits, with its outcome's
    inputs, for the comparison to finish it (``complete``), which may finish it with the
    inputs the agent recorded having used (see _Comparison).
    """

    def __init__(self, config: PipelineConfig, parameters: ConfigurationTimeline,
                 inputs: _Inputs) -> None:
        self.config = config
        self.replay = Replay(config, parameters, idle_flush=True)
        self.pipeline = self.replay.pipeline
        self._inputs = inputs.stream
        self._exhausted = False
        self._resolved: deque[CycleInputs[ForwardPrediction, Observation]] = deque()
        self.cycles_replayed = 0
        self.first_belief_ns: int | None = None
        self.last_log_ns: int | None = None
        # Recent inputs, by stamp: when the recorder received each belief, and each fix.
        self._beliefs: OrderedDict[int, int] = OrderedDict()
        # Each recent fix: when the recorder received it, the fix, and the confirmation the
        # assessor has once it took every fix up to this one in the recorder's order (the
        # latest finite fix stamp so far: a running value, so a window is read in its length).
        self._fixes: OrderedDict[int, tuple[int, Observation, int | None]] = OrderedDict()
        self._confirmed: int | None = None
        # The confirmation before the oldest fix still kept.
        self._forgotten_confirmation: int | None = None

    def has_belief(self, stamp: int) -> bool:
        return stamp in self._beliefs

    def fix(self, stamp: int, until_log_ns: int | None = None) -> Observation | None:
        """The fix stamped `stamp`, feeding inputs received up to `until_log_ns` to find it."""
        while (stamp not in self._fixes and until_log_ns is not None
               and (self.last_log_ns is None or self.last_log_ns <= until_log_ns)
               and self._pull()):
            pass
        found = self._fixes.get(stamp)
        return None if found is None else found[1]

    def fix_log_ns(self, stamp: int) -> int | None:
        """When the recorder received the (recent) fix stamped `stamp`, if it did."""
        found = self._fixes.get(stamp)
        return None if found is None else found[0]

    def confirmations(self, stamp: int) -> list[int | None]:
        """The confirmations the assessor may have had when the belief `stamp` reached it.

        The latest finite fix stamp received before it, for every order in which fixes the
        recorder received within RACE_WINDOW_NS of the belief could have reached the
        assessor; the nearest to the recorder's order first. Reads only the window's fixes
        (newest first, back to the first received before the window).
        """
        received = self._beliefs.get(stamp)
        if received is None:
            return []
        self.fix(-1, received + RACE_WINDOW_NS)  # feed what the window holds
        before = self._forgotten_confirmation
        window: list[tuple[int, int | None]] = []
        for log_ns, _, after in reversed(self._fixes.values()):
            if log_ns < received - RACE_WINDOW_NS:
                before = after
                break
            if log_ns <= received + RACE_WINDOW_NS:
                window.append((log_ns, after))
        window.reverse()
        options: list[tuple[int, int | None]] = []
        if window:
            options.append((received - window[0][0], before))
        options.extend((abs(log_ns - received), after) for log_ns, after in window)
        seen: list[int | None] = []
        for _, value in sorted(options, key=lambda option: option[0]):
            if value not in seen:
                seen.append(value)
        return seen

    def _remember_fix(self, log_ns: int, fix: Observation) -> None:
        if fix.stamp_ns in self._fixes:
            return
        if len(self._fixes) == _RECENT_STAMPS:
            _, (_, _, after) = self._fixes.popitem(last=False)
            self._forgotten_confirmation = after
        if all(math.isfinite(x) for x in fix.position) and (
                self._confirmed is None or fix.stamp_ns > self._confirmed):
            self._confirmed = fix.stamp_ns
        self._fixes[fix.stamp_ns] = (log_ns, fix, self._confirmed)

    def _pull(self) -> bool:
        if self._exhausted:
            return False
        item = next(self._inputs, None)
        try:
            if item is None:
                self._exhausted = True
                done = self.pipeline.resolve_pending()
            elif isinstance(item.sample, VehicleStatus):
                # Read ahead of the beliefs (see _Inputs): not an arrival the idle flush or
                # the race window measures from.
                done = self.pipeline.resolve(item.sample)
            else:
                self.last_log_ns = item.log_time_ns
                sample = item.sample
                if isinstance(sample, BeliefSample):
                    if self.first_belief_ns is None:
                        self.first_belief_ns = sample.stamp_ns
                    if sample.stamp_ns not in self._beliefs:
                        self._beliefs[sample.stamp_ns] = item.log_time_ns
                        if len(self._beliefs) > _RECENT_STAMPS:
                            self._beliefs.popitem(last=False)
                elif isinstance(sample, Observation):
                    self._remember_fix(item.log_time_ns, sample)
                done = self.replay.resolve(item)
        except GhostError as err:
            # The agent's own functions refuse this input: so would the nodes have.
            where = 'at the end of the input' if item is None else (
                f'on the input received at {item.log_time_ns} ns')
            raise _NotPossible(f'the re-run stops {where}: {err}') from err
        self.cycles_replayed += len(done)
        self._resolved.extend(done)
        return True

    def up_to(self, stamp_ns: int | None) -> list[CycleInputs[ForwardPrediction, Observation]]:
        """Every resolved cycle stamped <= `stamp_ns` (None: all), feeding inputs as needed."""
        while (stamp_ns is None or not self._resolved or self._resolved[-1].stamp_ns < stamp_ns
               ) and self._pull():
            pass
        out = []
        while self._resolved and (stamp_ns is None or self._resolved[0].stamp_ns <= stamp_ns):
            out.append(self._resolved.popleft())
        return out


def _same_message(message: GhostMessage, ours: Mapping[str, object],
                  contract: object | None = None) -> bool:
    """Whether `ours` is the recorded message: the same content address (SPEC section 4).

    The reader computed the recorded one's already for the streams something cites; `ours`
    is addressed through `contract` (the one it was written from) when given, whose address
    the re-run took already if the chain cites it.
    """
    if message.sha256:
        ours_address = (content_address(dict(ours)) if contract is None
                        else message_address(contract))
        return ours_address == message.sha256
    return first_difference(message.msg, ours) is None


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
    """The streaming comparison of one bag (see ``rederive``)."""

    def __init__(self, timeline: ConfigurationTimeline, config: PipelineConfig,
                 inputs: _Inputs) -> None:
        self.timeline = timeline
        self.config = config
        self.inputs = inputs
        self.rederiver = _Rederiver(config, timeline, inputs)
        self.topics = {kind: _TopicStats(kind) for kind in MESSAGE_KINDS}
        self.cycles_compared = 0
        # The decision context of the previous cycle, and the recorded rationale address an
        # actuation is compared with when its rationale was one status behind.
        self._previous_context: dict[str, object] = dict(_UNKNOWN_CONTEXT)
        self._taken_address: str | None = None
        self.contexts_behind = 0
        # Cycles finished in another arrival order than the recorder's, by stream.
        self.reordered = {'raw_assessment': 0, 'outcome': 0}
        # The assessor states an admissible order of arrival leads to (see _raw).
        self._assessor_states: list[AssessorState] = []
        # The last finished cycle's stamp and the prediction made at it.
        self._previous: tuple[int | None, ForwardPrediction | None] = (None, None)
        # When the recorder received the recent predictions, by the stamp they were made at.
        self._prediction_log: OrderedDict[int, int] = OrderedDict()
        self.reason: str | None = None
        self.until_ns: int | None = None
        # The recorded messages of the last cycle compared that are exactly the re-run's, by
        # id: the contract each was written from (see Rederivation.matched).
        self.matched: dict[int, object] = {}

    def update(self, cycle: CycleEvent) -> None:
        """Compare one recorded cycle (cycles come in stamp order)."""
        self.matched.clear()
        recorded = _recorded(cycle)
        for kind, messages in recorded.items():
            self.topics[kind].topics.update(message.topic for message in messages)
        if self.reason is not None:
            for kind, messages in recorded.items():
                self.topics[kind].not_compared += len(messages)
            return
        try:
            resolved = self.rederiver.up_to(cycle.stamp_ns)
            current = (resolved.pop() if resolved and resolved[-1].stamp_ns == cycle.stamp_ns
                       else None)
            for earlier in resolved:
                trace = self._complete(earlier)
                for kind, message in trace_messages(trace):
                    self.topics[kind].pend(trace.stamp_ns, message)
            reason = self._impossible(cycle, current, recorded)
            if reason is None:
                assert current is not None
                trace = self._complete(current, recorded)
        except _NotPossible as err:
            reason = str(err)
        if reason is not None:
            self.reason, self.until_ns = reason, cycle.stamp_ns
            for kind, messages in recorded.items():
                self.topics[kind].not_compared += len(messages)
            return
        self._compare(cycle.stamp_ns, trace, recorded)

    def finish(self) -> None:
        """After the last recorded cycle: what the re-run still gives is not recorded."""
        if self.reason is None:
            try:
                rest = [self._complete(cycle) for cycle in self.rederiver.up_to(None)]
            except _NotPossible:
                rest = []  # after the last recorded cycle: nothing left to compare
            for trace in rest:
                for kind, message in trace_messages(trace):
                    self.topics[kind].pend(trace.stamp_ns, message)
        for topic in self.topics.values():
            topic.settle_pending(recorded_later=False)

    def _complete(self, cycle: CycleInputs[ForwardPrediction, Observation],
                  recorded: Mapping[str, tuple[GhostMessage, ...]] | None = None) -> CycleTrace:
        """Finish a resolved cycle; with `recorded`, in the arrival order the agent had.

        A node receives its inputs over several topics, and the recorder over its own
        subscriptions: under load, a fix may reach the assessor or the evaluator before or
        after a belief or a prediction in another order than the recorder's. What the agent
        recorded names the inputs it used: the outcome its prediction and fix, the raw
        assessment (through its level) the confirmation it had. When the recorded message is
        exactly the agent's own function of inputs the bag holds, in an order within
        RACE_WINDOW_NS of the recorder's, the cycle is finished with those inputs (counted in
        ``reordered``); otherwise as the bag's order gives, and any difference stands.
        """
        pipeline = self.rederiver.pipeline
        raw = None
        for made in () if recorded is None else recorded['prediction']:
            self._prediction_log[made.stamp_ns] = made.log_time_ns
            if len(self._prediction_log) > _RECENT_STAMPS:
                self._prediction_log.popitem(last=False)
        try:
            if recorded is not None and len(recorded['outcome']) == 1:
                cycle = self._outcome_inputs(cycle, recorded['outcome'][0])
            if recorded is not None and len(recorded['raw_assessment']) == 1:
                raw = self._raw(cycle.stamp_ns, recorded['raw_assessment'][0])
            else:
                self._assessor_states = []  # judged as the bag's order gives: one state again
            trace = pipeline.complete(cycle, raw)
        except GhostError as err:
            raise _NotPossible(f'the re-run stops at cycle {cycle.stamp_ns} ns: {err}') from err
        self._previous = (cycle.stamp_ns, trace.prediction)
        return trace

    def _outcome_inputs(self, cycle: CycleInputs[ForwardPrediction, Observation],
                        message: GhostMessage) -> CycleInputs[ForwardPrediction, Observation]:
        """The cycle's outcome inputs as the recorded outcome names them, if admissible."""
        named = (_stamp(message.msg.get('prediction_stamp')) or 0,
                 _stamp(message.msg.get('observation_stamp')) or 0)
        ours = (0 if cycle.prediction is None else cycle.prediction.stamp_ns,
                0 if cycle.observation is None else cycle.observation.stamp_ns)
        if named == ours:
            return cycle
        previous_ns, previous_prediction = self._previous
        prediction, observation = cycle.prediction, cycle.observation
        if named[0] != ours[0]:
            if named[0] == 0:
                # It reached the evaluator after its grace: recorded close enough to the outcome.
                made_log = self._prediction_log.get(ours[0])
                if made_log is not None and message.log_time_ns - made_log > RACE_WINDOW_NS:
                    return cycle
                prediction = None
            elif previous_prediction is not None and previous_prediction.stamp_ns == named[0]:
                prediction = previous_prediction
            else:
                return cycle
        if named[1] != ours[1]:
            if named[1] == 0:
                # It reached the evaluator after the cycle's window closed: recorded close
                # enough to the outcome.
                fix_log = self.rederiver.fix_log_ns(ours[1])
                if fix_log is not None and message.log_time_ns - fix_log > RACE_WINDOW_NS:
                    return cycle
                observation = None
            elif previous_ns is not None and not previous_ns < named[1] <= cycle.stamp_ns:
                return cycle  # not a fix of this cycle's window
            else:
                observation = self.rederiver.fix(named[1])
                if observation is None:
                    return cycle
        belief = self.rederiver.pipeline.pending_belief(cycle.stamp_ns)
        alternative = self.rederiver.pipeline.evaluate(cycle.stamp_ns, belief.frame_id,
                                                       prediction, observation)
        if not _same_message(message, to_msg_dict(alternative), alternative):
            return cycle
        self.reordered['outcome'] += 1
        return CycleInputs(cycle.stamp_ns, prediction, observation)

    def _raw(self, stamp_ns: int, message: GhostMessage) -> BeliefSelfAssessment:
        """The raw assessment re-computed with the confirmation the recorded one names.

        SPEC 5 v1.3: a raw assessment names the fix that confirmed it, so the assessor is
        re-run with exactly that one, in belief order, with no search over orders of arrival;
        whether the named fix is one the assessor can have had is EVIDENCE-v1's to judge on
        the recorder's log times (ghost_verify.evidence).
        """
        pipeline = self.rederiver.pipeline
        msg = message.msg
        named: int | None = None
        if msg.get('has_confirmation'):
            stamp = msg.get('confirmation_stamp')
            if isinstance(stamp, Mapping):
                named = int(cast(int, stamp['sec'])) * 1_000_000_000 + int(
                    cast(int, stamp['nanosec']))
        raw = pipeline.assess_pending(stamp_ns, named)
        self._assessor_states = [pipeline.assessor_state()]
        return raw

    def _impossible(self, cycle: CycleEvent,
                    current: CycleInputs[ForwardPrediction, Observation] | None,
                    recorded: Mapping[str, tuple[GhostMessage, ...]]) -> str | None:
        """Why this cycle (and every later one) cannot be re-derived, or None."""
        t = cycle.stamp_ns
        first = self.rederiver.first_belief_ns
        if current is None:
            if first is None or t < first:
                return (f'the recording started after the run: the agent published messages '
                        f'for cycle {t} ns, whose belief is not in the bag'
                        + ('' if first is None else f' (its first belief is stamped {first} ns)'))
            if not self.rederiver.has_belief(t):
                return (f'the bag holds no belief stamped {t} ns, yet the agent published '
                        'messages for that cycle (the recorder lost the input: record the '
                        'inputs reliable)')
            return (f'the bag holds the belief stamped {t} ns, but out of order (the re-run '
                    'drops it as an old stamp, as the nodes do), yet the agent published '
                    "messages for that cycle: its order of arrival is not the bag's")
        ours = 0 if current.observation is None else current.observation.stamp_ns
        for message in recorded['outcome']:
            made = _stamp(message.msg.get('prediction_stamp'))
            if made and not self.rederiver.has_belief(made):
                return (f"cycle {t} ns: the agent's outcome pairs the prediction made at "
                        f'{made} ns, whose belief is not in the bag (the recording started '
                        'after the run, or the recorder lost that input)')
            fix = _stamp(message.msg.get('observation_stamp'))
            until = message.log_time_ns + RACE_WINDOW_NS  # received within the window of it
            if fix and fix != ours and (self.rederiver.fix(fix, until) is None
                                        or (self.rederiver.fix_log_ns(fix) or until + 1) > until):
                return (f"cycle {t} ns: the agent's outcome uses the fix stamped {fix} ns, "
                        'which the bag does not hold within the race window of the cycle (the '
                        'recorder lost it)')
        if self.timeline.config_at(t).thresholds != self.config.thresholds:
            return (f'cycle {t} ns: a recorded change set the thresholds, which the re-run '
                    'does not follow (it follows M, K and Q; the parameters check judges the '
                    'thresholds address)')
        return None

    def _context_behind(self, kind: str, message: GhostMessage,
                        ours: dict[str, object]) -> dict[str, object]:
        """`ours`, taking a recorded decision context one vehicle status behind as recorded.

        The decision policy takes the latest vehicle status it has received; a status and a
        cycle's calibrated assessment travel on different topics, so the status of the cycle
        may reach it just after the decision (the replay feeds every status first). Only that
        lag is taken as the run's: the recorded context must be the one of the previous cycle
        (UNKNOWN before the first), and then the actuation names that recorded rationale.
        """
        if kind == 'rationale':
            context = {name: ours.get(name) for name in _CONTEXT}
            recorded = {name: message.msg.get(name) for name in _CONTEXT}
            behind = self._previous_context
            self._previous_context = context
            self._taken_address = None
            if recorded != context and recorded == behind and all(
                    message.msg.get(key) == value for key, value in ours.items()
                    if key not in _CONTEXT):
                self.contexts_behind += 1
                self._taken_address = message.sha256 or content_address(dict(message.msg))
                return {**ours, **recorded}
        elif kind == 'actuation' and self._taken_address is not None:
            return {**ours, 'rationale_sha256': self._taken_address}
        return ours

    def _compare(self, stamp_ns: int, trace: CycleTrace,
                 recorded: Mapping[str, tuple[GhostMessage, ...]]) -> None:
        self.cycles_compared += 1
        contracts = {kind: contract for kind, contract in trace_contracts(trace)
                     if contract is not None}
        for kind in MESSAGE_KINDS:
            topic = self.topics[kind]
            messages = recorded[kind]
            contract = contracts.get(kind)
            ours = None if contract is None else to_msg_dict(contract)
            if messages:
                topic.settle_pending(recorded_later=True)
            elif ours is not None:
                topic.pend(stamp_ns, ours)
                continue
            for message in messages:
                if ours is None:
                    topic.recorded_only += 1
                    topic.note(Difference(stamp_ns, 'recorded_only', '', message.sha256
                                          or content_address(dict(message.msg)), None))
                    continue
                topic.compared += 1
                written = ours
                ours = self._context_behind(kind, message, ours)
                found: FieldDifference | None = (
                    None if _same_message(message, ours, contract if ours is written else None)
                    else first_difference(message.msg, ours))
                if found is None and ours is written:
                    self.matched[id(message)] = contract
                if found is not None:
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
                self._comparison = _Comparison(timeline, timeline.start, inputs)
            except _NotPossible as err:
                self._reason = str(err)

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
        bridge = _bridge(self._bag, self._parameters, info)
        if comparison is None:
            return _not_replayed(self._parameters, reason or 'the run configuration is missing',
                                 info, bridge)
        comparison.finish()
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


def _bridge(bag: str | os.PathLike[str], parameters: RunParameters,
            info: BagInfo) -> BridgeReport | None:
    """The re-derivation of px4_bridge's conversion, when the bag holds its fmu/out inputs."""
    topics = bag_px4_topics(bag)
    if not topics:
        return None
    if info.read_errors:
        return BridgeReport('part of the bag could not be read (see read_errors)')
    return rederive_bridge(bag, parameters.px4_bridge, topics)


def _not_replayed(parameters: RunParameters, reason: str, info: BagInfo,
                  bridge: BridgeReport | None) -> RederivationReport:
    return RederivationReport(
        property_version=REPLAY_VERSION, replayed=False, not_possible_reason=reason,
        replayed_until_ns=None, config_source=MANIFEST_NAME if parameters.config_sha256
        else None, config_sha256=parameters.config_sha256 or None,
        input_topics=tuple(sorted(parameters.input_topics.items())), beliefs=0,
        observations=0, cycles_replayed=0, cycles_compared=0,
        topics=tuple(TopicReplay(kind) for kind in MESSAGE_KINDS),
        parameters_followed=(), late_observations=0, superseded_observations=0,
        idle_flushes=0, read_errors=info.read_errors, bridge=bridge)


def _replayed(parameters: RunParameters, comparison: _Comparison, info: BagInfo,
              bridge: BridgeReport | None) -> RederivationReport:
    pipeline = comparison.rederiver.replay.pipeline
    return RederivationReport(
        property_version=REPLAY_VERSION, replayed=True,
        not_possible_reason=comparison.reason, replayed_until_ns=comparison.until_ns,
        config_source=MANIFEST_NAME, config_sha256=parameters.config_sha256 or None,
        input_topics=(('observations', comparison.inputs.observations_topic),
                      ('state', comparison.inputs.state_topic)),
        beliefs=comparison.inputs.beliefs, observations=comparison.inputs.observations,
        cycles_replayed=comparison.rederiver.cycles_replayed,
        cycles_compared=comparison.cycles_compared,
        topics=tuple(comparison.topics[kind].frozen() for kind in MESSAGE_KINDS),
        parameters_followed=followed_changes(comparison.timeline),
        late_observations=pipeline.late_observations,
        superseded_observations=pipeline.superseded_observations,
        idle_flushes=comparison.rederiver.replay.idle_flushes, read_errors=info.read_errors,
        bridge=bridge, contexts_behind=comparison.contexts_behind,
        reordered=tuple(sorted(comparison.reordered.items())))
