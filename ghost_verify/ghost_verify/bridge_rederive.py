"""Re-derivation of px4_bridge's conversion: the recorded fmu/out messages converted again.

One cohesive job (the bridge's re-derivation: read, re-run, match, classify, report), so one
module past 400 lines.

With ``px4_bridge`` the recorder also records the bridge's PX4 inputs (/fmu/out/...). This
check runs the bridge's own rules (``ghost_px4.bridge.Px4Bridge``, what the node runs) over
them, in the order the recorder received them (log time), with the bridge configuration the
run recorded (manifest.json's ``config.px4_bridge``), and compares every recorded /state/nav,
/observations and /vehicle_status message with the re-derived one of the same stamp, field by
field, exactly (the canonical JSON of SPEC section 4). So a belief altered after the bridge (a
shrunk covariance) is caught even when the agent's own re-derivation holds on it.

``ghost_px4`` is optional for the auditor: it is imported only when the bag holds /fmu/out
topics, and without it the check is reported not possible, with that reason.

Over DDS the recorder and the bridge are two readers of best-effort topics, so either may
miss a sample the other got. A recorded output whose PX4 input the bag does not hold is
``input_not_recorded``, and a re-derived output the bag does not hold is ``not_recorded``:
counted, not differences (``--strict`` makes them failures). A recorded output that the
recorded inputs convert to another message, or do not produce at all, is a difference.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
import importlib
import os
from typing import Any

from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory

from ghost_core.graph import INPUT_TOPICS, VEHICLE_STATUS_TOPIC
from ghost_core.hashing import hash_form
from ghost_core.properties import JsonValue
from ghost_core.rederive import first_difference, RACE_WINDOW_NS

from .bag import resolve_bag
from .run_parameters import BRIDGE_CONFIG_KEY
from .schema import quiet_parser

__all__ = ['BRIDGE_STREAMS', 'BridgeDifference', 'BridgeReport', 'BridgeStream',
           'rederive_bridge']

#: The bridge's outputs compared, by their default topic.
BRIDGE_STREAMS = (*INPUT_TOPICS, VEHICLE_STATUS_TOPIC)
#: The fmu/out topics the bridge reads, by the ``ghost_px4.bridge.Px4Bridge`` method.
_METHODS = {
    '/fmu/out/vehicle_odometry': 'odometry',
    '/fmu/out/vehicle_local_position': 'local_position',
    '/fmu/out/vehicle_gps_position': 'gps',
    '/fmu/out/vehicle_status': 'status',
    '/fmu/out/vehicle_land_detected': 'land_detected',
}


@dataclass(frozen=True, slots=True)
class BridgeDifference:
    """The first difference on one output stream: where, which field, the two values.

    `kind`: ``field`` (both exist and `field` differs) or ``recorded_only`` (the bag holds
    a message the recorded inputs do not produce; `field` is '').
    """

    stamp_ns: int
    kind: str
    field: str
    recorded: object
    recomputed: object

    def describe(self) -> str:
        """``<field> recorded X, recomputed Y``, or which side lacks the message."""
        if self.kind == 'recorded_only':
            return 'the bag holds a message its recorded inputs do not produce'
        return (f'{self.field or "(message)"} recorded {_short(self.recorded)}, recomputed '
                f'{_short(self.recomputed)}')

    def to_json(self) -> dict[str, JsonValue]:
        """Return the difference as a JSON object."""
        return {'stamp_ns': self.stamp_ns, 'kind': self.kind, 'field': self.field,
                'recorded': _plain(self.recorded), 'recomputed': _plain(self.recomputed)}


def _plain(value: object) -> JsonValue:
    return value if isinstance(value, (str, int, float, bool, type(None))) else repr(value)


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + '...'


@dataclass(slots=True)
class BridgeStream:
    """What was compared on one output topic of the bridge, and its first difference."""

    stream: str
    topic: str
    compared: int = 0
    differing: int = 0
    recorded_only: int = 0
    input_not_recorded: int = 0
    not_recorded: int = 0
    #: Outputs the bridge gives in another order of its inputs within RACE_WINDOW_NS: a
    #: /vehicle_status equal to the status of a nearby belief, a fix stated in a nearby frame.
    reordered: int = 0
    first: BridgeDifference | None = None

    @property
    def differences(self) -> int:
        """Messages that differ, or that the recorded inputs do not produce."""
        return self.differing + self.recorded_only

    def note(self, difference: BridgeDifference) -> None:
        """Keep `difference` when it is the earliest so far."""
        if self.first is None or difference.stamp_ns < self.first.stamp_ns:
            self.first = difference

    def to_json(self) -> dict[str, JsonValue]:
        """Return the stream's counts and first difference as a JSON object."""
        return {'topic': self.topic, 'compared': self.compared, 'differing': self.differing,
                'recorded_only': self.recorded_only,
                'input_not_recorded': self.input_not_recorded,
                'not_recorded': self.not_recorded, 'reordered': self.reordered,
                'first_difference': None if self.first is None else self.first.to_json()}


@dataclass(frozen=True, slots=True)
class BridgeReport:
    """The verdict of the re-derivation of px4_bridge's outputs from its recorded inputs.

    `not_possible_reason` says why the conversion could not be re-derived (None when it was).
    `holds` is True when it was and no recorded output differs from the re-derived one.
    """

    not_possible_reason: str | None
    inputs: tuple[tuple[str, int], ...] = ()
    streams: tuple[BridgeStream, ...] = ()
    config: Mapping[str, object] | None = None
    dropped: tuple[tuple[str, int], ...] = field(default_factory=tuple)

    @property
    def possible(self) -> bool:
        """True when the conversion was re-derived."""
        return self.not_possible_reason is None

    @property
    def messages_compared(self) -> int:
        """Recorded outputs compared with a re-derived one."""
        return sum(stream.compared for stream in self.streams)

    @property
    def messages_differing(self) -> int:
        """Recorded outputs that differ, or that the recorded inputs do not produce."""
        return sum(stream.differences for stream in self.streams)

    @property
    def holds(self) -> bool:
        """True when the conversion was re-derived and nothing differs."""
        return self.possible and self.messages_differing == 0

    @property
    def violated(self) -> bool:
        """True when a recorded output differs from what its recorded inputs give."""
        return self.messages_differing > 0

    @property
    def unmatched(self) -> int:
        """Outputs on one side only because an input or output was not recorded."""
        return sum(stream.input_not_recorded + stream.not_recorded + stream.reordered
                   for stream in self.streams)

    def first_difference(self) -> tuple[BridgeStream, BridgeDifference] | None:
        """The earliest difference over the three streams."""
        found = [(stream.first.stamp_ns, index, stream) for index, stream in
                 enumerate(self.streams) if stream.first is not None]
        if not found:
            return None
        _, _, stream = min(found, key=lambda item: (item[0], item[1]))
        assert stream.first is not None
        return stream, stream.first

    def summary(self) -> str:
        """The one-line verdict, e.g. ``px4_bridge: 900/900 messages re-derived exactly (…)``."""
        if self.not_possible_reason is not None:
            return f'px4_bridge: not possible ({self.not_possible_reason})'
        compared = self.messages_compared
        exact = compared - sum(stream.differing for stream in self.streams)
        counts = ', '.join(f'{stream.topic} {stream.compared}' for stream in self.streams)
        read = sum(count for _, count in self.inputs)
        if self.violated:
            found = self.first_difference()
            assert found is not None
            stream, difference = found
            return (f'px4_bridge: DIFFERS ({exact}/{compared} messages re-derived exactly; '
                    f'{self.messages_differing} differ; the first at {difference.stamp_ns} ns: '
                    f'{stream.topic} {difference.describe()})')
        return (f'px4_bridge: {exact}/{compared} messages re-derived exactly ({counts}; from '
                f'{read} fmu/out messages)')

    def notes(self) -> tuple[str, ...]:
        """Per stream with a difference, its first one; outputs on one side only."""
        lines = []
        for stream in self.streams:
            if stream.first is not None:
                lines.append(f'px4_bridge: {stream.topic}: {stream.differences} of '
                             f'{stream.compared + stream.recorded_only} differ, the first at '
                             f'{stream.first.stamp_ns} ns: {stream.first.describe()}')
            if stream.input_not_recorded or stream.not_recorded:
                lines.append(f'px4_bridge: {stream.topic}: {stream.input_not_recorded} '
                             'recorded messages whose PX4 input the bag lacks, '
                             f'{stream.not_recorded} re-derived messages the bag lacks (a '
                             'best-effort sample one reader missed; not compared)')
            if stream.reordered and stream.stream == 'state/nav':
                lines.append(f'px4_bridge: {stream.topic}: {stream.reordered} beliefs carry the '
                             'validity flags of a local position received within '
                             f'{RACE_WINDOW_NS / 1e9:g} s of them: the bridge received the '
                             'odometry and the local position in another order than the '
                             'recorder (not a difference; --strict makes it one)')
            elif stream.reordered and stream.stream == 'observations':
                lines.append(f'px4_bridge: {stream.topic}: {stream.reordered} fixes are stated '
                             'in an EKF frame (local position origin) in force within '
                             f'{RACE_WINDOW_NS / 1e9:g} s of them: the bridge received the '
                             'GNSS fix and the local position in another order than the '
                             'recorder (not a difference; --strict makes it one)')
            elif stream.reordered:
                lines.append(f'px4_bridge: {stream.topic}: {stream.reordered} statuses equal '
                             'the re-derived status of a belief received within '
                             f'{RACE_WINDOW_NS / 1e9:g} s of their own: the bridge received PX4 '
                             'statuses and beliefs in another order than the recorder (not a '
                             'difference; --strict makes it one)')
        return tuple(lines)

    def to_json(self) -> dict[str, JsonValue]:
        """Return the report as a JSON object (see docs/properties.md for the fields)."""
        found = self.first_difference()
        first: JsonValue = None
        if found is not None:
            first = {'topic': found[0].topic, **found[1].to_json()}
        return {
            'holds': self.holds,
            'possible': self.possible,
            'not_possible_reason': self.not_possible_reason,
            'config': None if self.config is None else {
                str(key): _plain(value) for key, value in self.config.items()},
            'inputs': dict(self.inputs),
            'messages_compared': self.messages_compared,
            'messages_differing': self.messages_differing,
            'first_difference': first,
            'streams': {stream.stream: stream.to_json() for stream in self.streams},
            'dropped': dict(self.dropped),
        }


def bag_px4_topics(bag: str | os.PathLike[str]) -> tuple[str, ...]:
    """The bag's topics that are one of px4_bridge's fmu/out inputs (in any namespace)."""
    found: list[str] = []
    for path in resolve_bag(bag).files:
        try:
            with path.open('rb') as stream:
                summary = make_reader(stream).get_summary()
        except Exception:  # noqa: BLE001 - a damaged file: the bag's read errors say so
            continue
        if summary is None:
            continue
        found.extend(channel.topic for channel in summary.channels.values()
                     if any(channel.topic.endswith(name) for name in _METHODS))
    return tuple(sorted(set(found)))


def rederive_bridge(bag: str | os.PathLike[str], recorded_config: object,
                    px4_topics: tuple[str, ...]) -> BridgeReport:
    """Re-run px4_bridge over the bag's recorded fmu/out messages and compare its outputs.

    `recorded_config` is the run configuration's ``px4_bridge`` object (None when the run
    did not record one); `px4_topics` the bag's fmu/out topics (``bag_px4_topics``).
    Everything that keeps the re-derivation from being done is in the report.
    """
    try:
        bridge_module = importlib.import_module('ghost_px4.bridge')
    except ImportError as err:
        return BridgeReport(f'the bag holds {", ".join(px4_topics)}, but ghost_px4 (the PX4 '
                            f"bridge's rules) is not installed here: {err}")
    if not isinstance(recorded_config, Mapping):
        return BridgeReport(f'the bag holds {", ".join(px4_topics)}, but its run '
                            f"configuration does not record px4_bridge's ({BRIDGE_CONFIG_KEY}: "
                            "a recorder other than the bringup's)")
    topics = recorded_config.get('topics')
    try:
        config = bridge_module.BridgeConfig.from_dict(recorded_config.get('parameters'))
        if not isinstance(topics, Mapping) or not all(
                isinstance(topics.get(name), str) for name in (*_METHODS, *BRIDGE_STREAMS)):
            raise ValueError(f'{BRIDGE_CONFIG_KEY}.topics does not name every fmu/out input '
                             'and output topic')
    except ValueError as err:
        return BridgeReport(f'the recorded px4_bridge configuration cannot be used: {err}')
    comparison = _Comparison(bridge_module, config, {str(k): str(v) for k, v in topics.items()})
    try:
        comparison.run(bag)
    except _NotPossible as err:
        return BridgeReport(str(err), config=config.to_dict())
    return comparison.report(config.to_dict())


class _NotPossible(Exception):
    """The bridge's conversion cannot be re-derived; the message says why."""


@dataclass(slots=True)
class _Race:
    """An input whose conversion depends on a state another input sets, within the window.

    `method` is the input (gps, odometry), `state` the part of the bridge's state its
    conversion reads (a key: equal keys convert alike), `convert(message, state)` its output
    (stamp, message dict) or None. ``take`` is called after each input the bridge took, and
    gives the outputs another order would have: the input converted with every other state in
    force within RACE_WINDOW_NS before it, and the recent inputs with a state that changes.
    """

    method: str
    state: Callable[[], Any]
    convert: Callable[[Any, Any], tuple[int, dict[str, Any]] | None]
    states: deque[tuple[int, Any]] = field(default_factory=deque)
    recent: deque[tuple[int, Any]] = field(default_factory=deque)

    def take(self, method: str, message: Any,
             log_time: int) -> list[tuple[int, dict[str, Any]]]:
        while self.recent and log_time - self.recent[0][0] > RACE_WINDOW_NS:
            self.recent.popleft()
        while len(self.states) > 1 and log_time - self.states[1][0] > RACE_WINDOW_NS:
            self.states.popleft()  # the first one stays: in force at the window's start
        now = self.state()
        found = []
        if method == self.method:
            self.recent.append((log_time, message))
            found = [self.convert(message, other) for _, other in self.states if other != now]
        elif not self.states or self.states[-1][1] != now:
            self.states.append((log_time, now))
            found = [self.convert(earlier, now) for _, earlier in self.recent]
        return [item for item in found if item is not None]


class _Comparison:
    """The bridge re-run over the recorded inputs, matched by stamp with the recorded outputs."""

    def __init__(self, bridge_module: Any, config: Any, topics: Mapping[str, str]) -> None:
        self.module = bridge_module
        self.bridge = bridge_module.Px4Bridge(config)
        self.config = config
        self.methods: dict[str, Callable[[Any], Any]] = {
            topics[name]: getattr(self.bridge, method) for name, method in _METHODS.items()}
        relative = {'/state/nav': 'state/nav', '/observations': 'observations',
                    VEHICLE_STATUS_TOPIC: 'vehicle_status'}
        self.outputs = {topics[name]: relative[name] for name in BRIDGE_STREAMS}
        self.streams = {relative[name]: BridgeStream(relative[name], topics[name])
                        for name in BRIDGE_STREAMS}
        self.inputs: dict[str, int] = {}
        self.dropped: dict[str, int] = {}
        # Per output stream, by stamp: messages seen on one side, waiting for the other.
        self.recorded: dict[str, dict[int, dict[str, Any]]] = {s: {} for s in self.streams}
        self.derived: dict[str, dict[int, dict[str, Any]]] = {s: {} for s in self.streams}
        # The stamps the recorded inputs can give a belief or a fix (produced or not).
        self.input_stamps: dict[str, set[int]] = {s: set() for s in self.streams}
        # Every re-derived status by stamp, and the recorded statuses that differ from the
        # re-derived one of their stamp (judged at the end, against the neighbouring beliefs).
        self.statuses: dict[int, dict[str, Any]] = {}
        # When the recorder received the PX4 message each belief comes from, by belief stamp.
        self.belief_log_ns: dict[int, int] = {}
        # The outputs another order of the inputs gives (_Race), by stream and stamp, and the
        # recorded outputs of those streams that differ from the re-derived one of their stamp.
        self._races = {'observations': _Race('gps', lambda: self.bridge.fix_frame,
                                             self._fix_in)}
        if config.source == 'vehicle_odometry':
            self._races['state/nav'] = _Race('odometry', self._validity_flags,
                                             self._belief_with)
        self.alternatives: dict[str, dict[int, list[dict[str, Any]]]] = {
            stream: {} for stream in self._races}
        self.deferred: dict[str, list[tuple[int, dict[str, Any], BridgeDifference]]] = {
            stream: [] for stream in self._races}
        self.status_differences: list[tuple[int, dict[str, Any], BridgeDifference]] = []

    def run(self, bag: str | os.PathLike[str]) -> None:
        for topic, message, log_time in _messages(bag, (*self.methods, *self.outputs)):
            if topic in self.methods:
                self.inputs[topic] = self.inputs.get(topic, 0) + 1
                self._candidate(topic, message, log_time)
                try:
                    result = self.methods[topic](message)
                except (AttributeError, TypeError, ValueError) as err:
                    raise _NotPossible(f'{topic} message at log time {log_time} ns cannot be '
                                       f'converted: {type(err).__name__}: {err}') from err
                self._other_orders(topic, message, log_time)
                for item in result:
                    if isinstance(item, self.module.Dropped):
                        key = f'{item.what}: {item.reason}'
                        self.dropped[key] = self.dropped.get(key, 0) + 1
                        continue
                    self._meet(item.topic, item.stamp_ns, dict(item.message), derived=True)
            else:
                stream = self.outputs[topic]
                form = hash_form(message)
                header = form.get('header', form)
                stamp = header.get('stamp') if isinstance(header, Mapping) else None
                if not isinstance(stamp, Mapping):
                    raise _NotPossible(f'{topic} message at log time {log_time} ns has no '
                                       'header stamp')
                self._meet(stream, int(stamp['sec']) * 1_000_000_000 + int(stamp['nanosec']),
                           form, derived=False)

    def _other_orders(self, topic: str, message: Any, log_time: int) -> None:
        """The outputs the bridge gives in another order of its inputs (within the window).

        A fix is stated in the EKF frame in force (vehicle_local_position's origin), and an
        odometry belief carries the validity flags of the last local position: an input and
        the local position that reach the bridge and the recorder in other orders give
        another output, or one where the recorder's order drops it. Each such input is
        converted with every state in force within RACE_WINDOW_NS of it (_Race).
        """
        method = self.methods[topic].__name__
        for stream, race in self._races.items():
            for stamp_ns, out in race.take(method, message, log_time):
                self.alternatives[stream].setdefault(stamp_ns, []).append(out)

    def _fix_in(self, message: Any, frame: Any) -> tuple[int, dict[str, Any]] | None:
        out = self.bridge.fix_of(message, frame)
        if isinstance(out, self.module.Output):
            return out.stamp_ns, dict(out.message)
        return None

    def _validity_flags(self) -> tuple[bool, bool] | None:
        validity = self.bridge.validity
        return None if validity is None else (validity.position, validity.velocity)

    def _belief_with(self, message: Any,
                     flags: tuple[bool, bool] | None) -> tuple[int, dict[str, Any]] | None:
        live = self.module.live
        stamp = live.belief_time_ns(message.timestamp, message.timestamp_sample)
        validity = None if flags is None else live.Validity(stamp, *flags)
        belief = self.bridge.odometry_belief(message, validity)
        if isinstance(belief, self.module.Dropped):
            return None
        return stamp, dict(self.module.odometry_message(stamp, belief))

    def _candidate(self, topic: str, message: Any, log_time: int) -> None:
        """Remember the stamp this input gives a belief or fix (whether produced or not)."""
        live = self.module.live
        method = self.methods[topic].__name__
        try:
            if method == self.config.source.removeprefix('vehicle_'):
                stamp = live.belief_time_ns(message.timestamp, message.timestamp_sample)
                self.input_stamps['state/nav'].add(stamp)
                self.input_stamps['vehicle_status'].add(stamp)
                self.belief_log_ns.setdefault(stamp, log_time)
            elif method == 'gps':
                self.input_stamps['observations'].add(
                    live.fix_sample_time_ns(message.timestamp, message.timestamp_sample)
                    - self.config.gps_delay_ns)
        except (AttributeError, TypeError, ValueError):
            return

    def _meet(self, stream: str, stamp_ns: int, message: dict[str, Any], *,
              derived: bool) -> None:
        other = self.recorded[stream] if derived else self.derived[stream]
        waiting = other.pop(stamp_ns, None)
        if waiting is None:
            (self.derived if derived else self.recorded)[stream][stamp_ns] = message
            return
        recorded, recomputed = (waiting, message) if derived else (message, waiting)
        stats = self.streams[stream]
        stats.compared += 1
        if stream == 'vehicle_status':
            self.statuses[stamp_ns] = recomputed
        found = first_difference(recorded, recomputed)
        if found is None:
            return
        difference = BridgeDifference(stamp_ns, 'field', found.field, found.recorded,
                                      found.recomputed)
        if stream == 'vehicle_status':
            self.status_differences.append((stamp_ns, recorded, difference))
            return
        if stream in self.deferred:
            self.deferred[stream].append((stamp_ns, recorded, difference))
            return
        stats.differing += 1
        stats.note(difference)

    def _judge_statuses(self) -> None:
        """A status the bridge had at a neighbouring belief is a reorder; else a difference.

        The bridge attaches the latest PX4 status it received to each belief (and publishes it
        on a change, or a second after the last): a status sample and beliefs that reach the
        bridge and the recorder in other orders move one status change by a few beliefs. Only
        that is excused: the recorded status must equal, apart from its stamp, the re-derived
        status in force at a belief the recorder received within RACE_WINDOW_NS
        (ghost_core.rederive) of its own.
        """
        stats = self.streams['vehicle_status']
        derived = {**self.derived['vehicle_status'], **self.statuses}
        derived_stamps = sorted(derived)
        beliefs = sorted(self.input_stamps['vehicle_status'])

        def in_force(stamp_ns: int) -> Mapping[str, Any] | None:
            index = bisect_right(derived_stamps, stamp_ns) - 1
            return derived[derived_stamps[index]] if index >= 0 else None

        def near(index: int, step: int, received: int) -> Iterator[int]:
            index += step
            while 0 <= index < len(beliefs) and abs(
                    self.belief_log_ns.get(beliefs[index], received) - received) <= RACE_WINDOW_NS:
                yield beliefs[index]
                index += step

        def shifted(stamp_ns: int, recorded: Mapping[str, Any]) -> bool:
            index = bisect_left(beliefs, stamp_ns)
            received = self.belief_log_ns.get(stamp_ns)
            if received is None:
                return False
            for neighbour in (*near(index, -1, received), *near(index, 1, received)):
                status = in_force(neighbour)
                if status is not None and _same_status(recorded, status):
                    return True
            return False

        for stamp_ns, recorded, difference in self.status_differences:
            if shifted(stamp_ns, recorded):
                stats.reordered += 1
            else:
                stats.differing += 1
                stats.note(difference)
        for stamp_ns in sorted(self.recorded['vehicle_status']):
            if (stamp_ns in self.input_stamps['vehicle_status']
                    and shifted(stamp_ns, self.recorded['vehicle_status'][stamp_ns])):
                stats.reordered += 1
                del self.recorded['vehicle_status'][stamp_ns]

    def _other_order(self, stream: str, stamp_ns: int, recorded: Mapping[str, Any]) -> bool:
        """The recorded output is one the bridge gives in another order of its inputs."""
        return any(first_difference(recorded, other) is None
                   for other in self.alternatives[stream].get(stamp_ns, ()))

    def report(self, config: Mapping[str, object]) -> BridgeReport:
        self._judge_statuses()
        for stream, deferred in self.deferred.items():
            stats = self.streams[stream]
            for stamp_ns, recorded, difference in deferred:
                if self._other_order(stream, stamp_ns, recorded):
                    stats.reordered += 1
                else:
                    stats.differing += 1
                    stats.note(difference)
            for stamp_ns in sorted(self.recorded[stream]):
                if self._other_order(stream, stamp_ns, self.recorded[stream][stamp_ns]):
                    stats.reordered += 1
                    del self.recorded[stream][stamp_ns]
        for name, stats in self.streams.items():
            stats.not_recorded += len(self.derived[name])
            for stamp in sorted(self.recorded[name]):
                if stamp in self.input_stamps[name]:
                    stats.recorded_only += 1
                    stats.note(BridgeDifference(stamp, 'recorded_only', '', None, None))
                else:
                    stats.input_not_recorded += 1
        return BridgeReport(None, tuple(sorted(self.inputs.items())),
                            tuple(self.streams.values()), config,
                            tuple(sorted(self.dropped.items())))


def _same_status(recorded: Mapping[str, Any], other: Mapping[str, Any]) -> bool:
    """Equal status messages apart from their header (the stamp of the belief they go with)."""
    return first_difference({k: v for k, v in recorded.items() if k != 'header'},
                            {k: v for k, v in other.items() if k != 'header'}) is None


def _messages(bag: str | os.PathLike[str],
              topics: tuple[str, ...]) -> Iterator[tuple[str, Any, int]]:
    """The messages of `topics`, decoded, in log-time order (files in the bag's order)."""
    for path in resolve_bag(bag).files:
        try:
            with path.open('rb') as stream, quiet_parser():
                reader = make_reader(stream, decoder_factories=[DecoderFactory()])
                for _schema, channel, message, decoded in reader.iter_decoded_messages(
                        topics=list(topics), log_time_order=True):
                    yield channel.topic, decoded, message.log_time
        except _NotPossible:
            raise
        except Exception as err:  # noqa: BLE001 - decoding recorded bytes
            raise _NotPossible(f'{path.name}: the PX4 inputs or the bridge outputs cannot be '
                               f'read ({type(err).__name__}: {" ".join(str(err).split())[:80]})'
                               ) from err
