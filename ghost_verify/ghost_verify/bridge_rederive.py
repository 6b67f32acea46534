"""Re-derivation of a bridge's outputs from exactly the samples each one names.

Written for px4_bridge (below); ap_bridge's and mavros_bridge's outputs are judged by the same
pass with their own rules (``ghost_verify.bridge_rules`` holds what differs: inputs, the stamp
field naming a sample, what each output is made of, the samples kept for good, the
conversion).

One cohesive job (the bridge's re-derivation: read, find the named samples, judge them by the
recorder's log times, convert again, compare, report), so one module past 400 lines.

With ``px4_bridge`` the recorder also records the bridge's PX4 inputs (/fmu/out/...) and, on
/source_samples (ghost_interfaces/SourceSamples), the PX4 samples each /state/nav,
/observations and /vehicle_status message was made from, named by topic and ``timestamp``
(SPEC 5 v1.3). One pass in log order judges each recorded output once, when the recorder's
clock is ``TRANSPORT_BOUND_NS`` (ghost_core.evidence) past it:

- its SourceSamples (same topic and stamp; logged up to ``HELD_NS`` later, as the recorder
  drains /source_samples, the busiest topic, behind the outputs) must be in the bag and name
  the samples the bridge reads for that output (``ghost_px4.bridge``: a belief its EKF2
  sample and the sample of the other kind held; a fix its GNSS sample and the local position
  of its frame; a status the belief's sample and the status, land detector and mission result
  samples held), else ``provenance_missing`` / a difference;
- each named sample must be in the bag (``named_input_missing``) and logged no more than
  ``TRANSPORT_BOUND_NS`` after the output (``named_input_from_the_future``);
- a held sample (everything but the output's own EKF2 or GNSS sample) older than the newest of
  its kind the recorder logged more than ``TRANSPORT_BOUND_NS`` before the output's own sample
  (or none named) is replaced by that one, which the bridge had: when that gives another
  output, ``input_claimed_late``. (A bridge behind its queues may hold an older sample of a
  topic it has not drained yet; what it says is then the same.) The validity flags pair a
  belief with a local position within ``max_attitude_age_ns`` (100 ms), inside that bound: the
  log times cannot prove which one the bridge had, so the flags are checked only as far as
  the bound allows;
- the output is converted again from the named samples by the bridge's own pure rules
  (``belief_of``, ``fix_of``, ``status_of``) with the recorded bridge configuration, and
  compared field by field, exactly (SPEC section 4); an output stamped not after the previous
  one of its topic is a difference (the bridge drops those).

Unverifiable, not a difference, and counted (``--strict`` fails on them): a named sample the
bag lacks from before the recorder first heard its topic or after it last did (the recorder
matched later or stopped sooner: a transient-local sample only the bridge received, a sample
lost at shutdown), and an output without SourceSamples logged less than ``TRANSPORT_BOUND_NS``
before the first SourceSamples of the bag or after its last (the recorder's subscriptions
matched or closed at other moments). For a sample the output is made of (its EKF2 or GNSS
sample) the output itself must be logged within that bound of the recorder's first or last
sample of the topic, so that naming samples from before the recording cannot excuse a run.
PX4 samples no output names (rejected by the bridge's rules, or a best-effort sample the
bridge missed) are counted, not differences.

``ghost_px4`` (``ghost_ardupilot``, ``ghost_mavros``) is optional for the auditor: it is
imported only when the bag holds /fmu/out (/ap, /mavros) topics, and without it the check is
reported not possible, with that reason.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Generator, Iterator, Mapping
from contextlib import closing
from dataclasses import dataclass, field
import os
from typing import Any

from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory

from ghost_core.evidence import TRANSPORT_BOUND_NS
from ghost_core.graph import INPUT_TOPICS, SOURCE_SAMPLES_TOPIC, VEHICLE_STATUS_TOPIC
from ghost_core.hashing import hash_form
from ghost_core.properties import JsonValue
from ghost_core.rederive import first_difference

from .bag import resolve_bag
from .bridge_rules import BridgeRules, BRIDGES, load_rules
from .schema import quiet_parser

__all__ = ['BRIDGE_STREAMS', 'BridgeDifference', 'BridgeReport', 'BridgeStream',
           'HELD_NS', 'VIOLATIONS', 'bag_bridge_topics', 'bag_px4_topics', 'rederive_bridge']

#: The bridge's outputs, by their default topic.
BRIDGE_STREAMS = (*INPUT_TOPICS, VEHICLE_STATUS_TOPIC)
_STREAM_OF = {'/state/nav': 'state/nav', '/observations': 'observations',
              VEHICLE_STATUS_TOPIC: 'vehicle_status'}
#: The violations of the evidence rules an output can carry (besides a field difference).
VIOLATIONS = ('named_input_missing', 'named_input_from_the_future', 'input_claimed_late',
              'provenance_missing')
#: How long a PX4 sample is kept for the outputs that may name it as their own (a GNSS fix the
#: bridge took from its queue late): an output naming one the recorder logged longer before
#: is ``named_input_missing``. The latest of each kind is kept as long as it is the latest.
#: Also how long after an output its source_samples may be logged (the recorder drains its
#: busiest topic last; the samples are judged by the output's own log time).
HELD_NS = 10_000_000_000


@dataclass(frozen=True, slots=True)
class BridgeDifference:
    """The first difference on one output stream: where, what kind, the two values.

    `kind`: ``field`` (the named samples give another message: `field` differs), ``order``
    (stamped not after the previous output), ``provenance`` (its SourceSamples do not name
    what the bridge reads), or one of ``VIOLATIONS`` (`field` then names the sample).
    """

    stamp_ns: int
    kind: str
    field: str
    recorded: object
    recomputed: object

    def describe(self) -> str:
        """What differs, in words."""
        if self.kind == 'field':
            return (f'{self.field or "(message)"} recorded {_short(self.recorded)}, '
                    f'recomputed from the samples it names {_short(self.recomputed)}')
        if self.kind == 'order':
            return f'stamped {self.recorded}, not after the previous output {self.recomputed}'
        if self.kind == 'provenance':
            return f'its source_samples {self.field}'
        if self.kind == 'provenance_missing':
            return 'no source_samples names the samples it was made from'
        if self.kind == 'input_claimed_late':
            return (f'made from {self.field} timestamp {self.recorded}, though the recorder '
                    f'logged timestamp {self.recomputed} more than '
                    f'{TRANSPORT_BOUND_NS / 1e6:g} ms before its own sample')
        when = ('not in the bag' if self.kind == 'named_input_missing' else
                f'logged {_ms(self.recomputed)} after it')
        return f'names {self.field} timestamp {self.recorded}, {when}'

    def to_json(self) -> dict[str, JsonValue]:
        """Return the difference as a JSON object."""
        return {'stamp_ns': self.stamp_ns, 'kind': self.kind, 'field': self.field,
                'recorded': _plain(self.recorded), 'recomputed': _plain(self.recomputed)}


def _ms(value: object) -> str:
    return f'{value / 1e6:g} ms' if isinstance(value, int) else repr(value)


def _plain(value: object) -> JsonValue:
    return value if isinstance(value, (str, int, float, bool, type(None))) else repr(value)


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + '...'


@dataclass(slots=True)
class BridgeStream:
    """What was judged on one output topic of the bridge, and its first difference.

    ``recorded`` = ``exact`` + ``differing`` + the violations + the unverifiable outputs.
    """

    stream: str
    topic: str
    recorded: int = 0
    exact: int = 0
    differing: int = 0
    violations: dict[str, int] = field(default_factory=dict)
    #: Outputs that could not be judged, per reason (the module says when).
    unverifiable: dict[str, int] = field(default_factory=dict)
    #: PX4 samples of the stream's own topic that no output names (rejected or missed).
    not_named: int = 0
    first: BridgeDifference | None = None

    @property
    def differences(self) -> int:
        """Outputs that differ or break an evidence rule."""
        return self.differing + sum(self.violations.values())

    @property
    def unverified(self) -> int:
        """Outputs that could not be judged."""
        return sum(self.unverifiable.values())

    def note(self, difference: BridgeDifference) -> None:
        """Keep `difference` when it is the earliest so far."""
        if self.first is None or difference.stamp_ns < self.first.stamp_ns:
            self.first = difference

    def to_json(self) -> dict[str, JsonValue]:
        """Return the stream's counts and first difference as a JSON object."""
        return {'topic': self.topic, 'recorded': self.recorded, 'exact': self.exact,
                'differing': self.differing, 'violations': dict(sorted(self.violations.items())),
                'unverifiable': dict(sorted(self.unverifiable.items())),
                'not_named': self.not_named,
                'first_difference': None if self.first is None else self.first.to_json()}


@dataclass(frozen=True, slots=True)
class BridgeReport:
    """The verdict of the re-derivation of px4_bridge's outputs from the samples they name.

    `not_possible_reason` says why the outputs could not be re-derived (None when they were).
    `holds` is True when they were and none differs or breaks an evidence rule.
    """

    not_possible_reason: str | None
    inputs: tuple[tuple[str, int], ...] = ()
    streams: tuple[BridgeStream, ...] = ()
    config: Mapping[str, object] | None = None
    #: The bridge (``bridge_rules.BRIDGES``), what its samples and inputs are called.
    name: str = 'px4_bridge'
    samples: str = 'PX4 samples'
    inputs_word: str = 'fmu/out messages'

    @property
    def possible(self) -> bool:
        """True when the outputs were re-derived."""
        return self.not_possible_reason is None

    @property
    def messages_compared(self) -> int:
        """Recorded outputs judged (every recorded output of the three topics)."""
        return sum(stream.recorded for stream in self.streams)

    @property
    def messages_differing(self) -> int:
        """Recorded outputs that differ or break an evidence rule."""
        return sum(stream.differences for stream in self.streams)

    @property
    def holds(self) -> bool:
        """True when the outputs were re-derived and nothing differs."""
        return self.possible and self.messages_differing == 0

    @property
    def violated(self) -> bool:
        """True when a recorded output differs from what its named samples give."""
        return self.messages_differing > 0

    @property
    def unmatched(self) -> int:
        """Outputs that could not be judged (unverifiable: the module says when)."""
        return sum(stream.unverified for stream in self.streams)

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
        """The one-line verdict, e.g. ``px4_bridge: 900/900 outputs re-derived exactly (…)``."""
        if self.not_possible_reason is not None:
            return f'{self.name}: not possible ({self.not_possible_reason})'
        total = self.messages_compared
        exact = sum(stream.exact for stream in self.streams)
        unverified = self.unmatched
        counts = ', '.join(f'{stream.topic} {stream.recorded}' for stream in self.streams)
        read = sum(count for _, count in self.inputs)
        if self.violated:
            found = self.first_difference()
            assert found is not None
            stream, difference = found
            kinds: dict[str, int] = {'differ': sum(s.differing for s in self.streams)}
            for s in self.streams:
                for kind, count in s.violations.items():
                    kinds[kind] = kinds.get(kind, 0) + count
            wrong = ', '.join(f'{count} {kind}' for kind, count in kinds.items() if count)
            also = f', {unverified} unverifiable' if unverified else ''
            return (f'{self.name}: DIFFERS ({exact} of {total} outputs re-derived exactly '
                    f'from the {self.samples} they name; {wrong}{also}; the first at '
                    f'{difference.stamp_ns} ns: {stream.topic} {difference.describe()})')
        done = (f'{exact}/{total} outputs' if not unverified else
                f'{exact} of {total} outputs ({unverified} unverifiable)')
        return (f'{self.name}: {done} re-derived exactly from the {self.samples} they name '
                f'({counts}; from {read} {self.inputs_word})')

    def notes(self) -> tuple[str, ...]:
        """Per stream: its first difference, what was unverifiable, the samples not named."""
        lines = []
        for stream in self.streams:
            if stream.first is not None:
                lines.append(f'{self.name}: {stream.topic}: {stream.differences} of '
                             f'{stream.recorded} differ, the first at {stream.first.stamp_ns} '
                             f'ns: {stream.first.describe()}')
            for reason, count in sorted(stream.unverifiable.items()):
                lines.append(f'{self.name}: {stream.topic}: {count} unverifiable: {reason} '
                             '(--strict fails)')
            if stream.not_named:
                lines.append(f'{self.name}: {stream.topic}: {stream.not_named} '
                             f'{self.samples} of its own topic are named by no output (the '
                             'bridge rejects them, or a best-effort sample it did not '
                             'receive; not a difference)')
        return tuple(lines)

    def to_json(self) -> dict[str, JsonValue]:
        """Return the report as a JSON object (see docs/properties.md for the fields)."""
        found = self.first_difference()
        first: JsonValue = None
        if found is not None:
            first = {'topic': found[0].topic, **found[1].to_json()}
        return {
            'bridge': self.name,
            'holds': self.holds,
            'possible': self.possible,
            'not_possible_reason': self.not_possible_reason,
            'config': None if self.config is None else {
                str(key): _plain(value) for key, value in self.config.items()},
            'inputs': dict(self.inputs),
            'messages_compared': self.messages_compared,
            'messages_differing': self.messages_differing,
            'unverifiable': self.unmatched,
            'first_difference': first,
            'streams': {stream.stream: stream.to_json() for stream in self.streams},
        }


def _topics_of(bag: str | os.PathLike[str]) -> tuple[str, ...]:
    found: list[str] = []
    for path in resolve_bag(bag).files:
        try:
            with path.open('rb') as stream:
                summary = make_reader(stream).get_summary()
        except Exception:  # noqa: BLE001 - a damaged file: the bag's read errors say so
            continue
        if summary is not None:
            found.extend(channel.topic for channel in summary.channels.values())
    return tuple(sorted(set(found)))


def bag_bridge_topics(bag: str | os.PathLike[str], name: str = 'px4_bridge'
                      ) -> tuple[str, ...]:
    """The bag's topics that are one of bridge `name`'s inputs (in any namespace)."""
    methods = BRIDGES[name].methods
    return tuple(topic for topic in _topics_of(bag)
                 if any(topic.endswith(default) for default in methods))


def bag_px4_topics(bag: str | os.PathLike[str]) -> tuple[str, ...]:
    """The bag's topics that are one of px4_bridge's fmu/out inputs (in any namespace)."""
    return bag_bridge_topics(bag, 'px4_bridge')


def rederive_bridge(bag: str | os.PathLike[str], recorded_config: object,
                    px4_topics: tuple[str, ...], stop_ns: int | None = None,
                    bridge: str = 'px4_bridge') -> BridgeReport:
    """Re-derive `bridge`'s recorded outputs from the samples each one names.

    `recorded_config` is the run configuration's object for the bridge (its key is the
    bridge's name; None when the run did not record one); `px4_topics` the bag's topics of the
    bridge's inputs (``bag_bridge_topics``). `stop_ns`: where the run began to stop
    (ghost_verify.edges): an output logged from then on that would differ is unverifiable (a
    best-effort sample lost or reordered at shutdown). Everything that keeps the
    re-derivation from being done is in the report.
    """
    kind = BRIDGES[bridge]

    def not_possible(reason: str, config: Mapping[str, object] | None = None) -> BridgeReport:
        return BridgeReport(reason, config=config, name=kind.name, samples=kind.samples,
                            inputs_word=kind.inputs)

    held = ', '.join(px4_topics) or f'none of its {kind.inputs}'
    if not isinstance(recorded_config, Mapping):
        return not_possible(f'the bag holds {held}, but its run configuration does not '
                            f"record {bridge}'s ({bridge}: a recorder other than the "
                            "bringup's)")
    if not px4_topics:
        return not_possible(f'the run configuration records {bridge}, but the bag holds none '
                            f'of its {kind.inputs}')
    topics = recorded_config.get('topics')
    try:
        rules = load_rules(bridge, recorded_config.get('parameters'))
        if not isinstance(topics, Mapping) or not all(
                isinstance(topics.get(name), str) for name in (*rules.read, *BRIDGE_STREAMS)):
            raise ValueError(f'{bridge}.topics does not name every input and output topic')
    except ImportError as err:
        return not_possible(f'the bag holds {held}, but {kind.package} (the {kind.autopilot}'
                            f" bridge's rules) is not installed here: {err}")
    except ValueError as err:
        return not_possible(f'the recorded {bridge} configuration cannot be used: {err}')
    named = {str(k): str(v) for k, v in topics.items()}
    provenance = named.get(SOURCE_SAMPLES_TOPIC) or named[VEHICLE_STATUS_TOPIC].removesuffix(
        VEHICLE_STATUS_TOPIC) + SOURCE_SAMPLES_TOPIC
    judge = _Judge(rules, named, provenance)
    judge.stop_ns = stop_ns
    try:
        judge.run(bag)
    except _NotPossible as err:
        return not_possible(str(err), rules.config_dict())
    return judge.report(rules.config_dict())


class _NotPossible(Exception):
    """The bridge's outputs cannot be re-derived; the message says why."""


@dataclass(slots=True)
class _Sample:
    """One recorded PX4 sample: its ``timestamp``, log time and message."""

    timestamp: int
    log_ns: int
    message: Any


@dataclass(slots=True)
class _Heard:
    """One PX4 topic as the recorder heard it: the samples kept, the first and last heard."""

    samples: deque[_Sample] = field(default_factory=deque)
    by_stamp: dict[int, _Sample] = field(default_factory=dict)
    first: _Sample | None = None
    last: _Sample | None = None
    count: int = 0
    #: Samples the bridge no longer makes outputs of (``BridgeRules.superseded``).
    ignored: int = 0


@dataclass(slots=True)
class _Pending:
    """A recorded output waiting for the recorder's clock to pass it by the bound."""

    stream: str
    stamp_ns: int
    log_ns: int
    form: dict[str, Any]


@dataclass(slots=True)
class _Open:
    """A judged output whose named samples (topic, timestamp, its own?) the bag lacked then.

    ``done`` once a verdict is given.
    """

    out: _Pending
    absent: list[tuple[str, int, bool]]
    done: bool = False


class _Judge:
    """One pass over the bag in log order: each recorded output judged once (the module)."""

    def __init__(self, rules: BridgeRules, topics: Mapping[str, str],
                 provenance_topic: str) -> None:
        self.rules = rules
        # The run's stop (rederive_bridge), and the log time of the output being judged.
        self.stop_ns: int | None = None
        self.judging_ns = 0
        self.method_of = {topics[name]: method for name, method in rules.methods.items()
                          if name in topics}
        self.topic_of = {method: topic for topic, method in self.method_of.items()}
        self.outputs = {topics[name]: _STREAM_OF[name] for name in BRIDGE_STREAMS}
        self.stream_topic = {stream: topic for topic, stream in self.outputs.items()}
        self.provenance_topic = provenance_topic
        self.streams = {stream: BridgeStream(stream, topic)
                        for topic, stream in self.outputs.items()}
        #: Per stream: the methods of the samples it may be made of, and those each holds.
        self.roles = rules.roles
        self.heard = {topic: _Heard() for topic in self.method_of}
        #: Samples kept for good (``BridgeRules.fixed``), and per stream the first named.
        self.pinned: dict[tuple[str, int], _Sample] = {}
        self.anchors: dict[str, tuple[tuple[str, int], ...]] = {}
        self.inputs: dict[str, int] = {}
        self.pending: deque[_Pending] = deque()
        self.sources: dict[tuple[str, int], Any] = {}
        self.first_sources_ns: int | None = None
        self.last_sources_ns: int | None = None
        self.last_stamp: dict[str, int] = {}
        #: Per stream, how many of its own samples its outputs named.
        self.own_named: dict[str, int] = {}
        # The judged outputs some named samples of which the bag did not hold yet, by sample.
        self.open: dict[tuple[str, int], list[_Open]] = {}
        self.opened: list[_Open] = []
        #: Judged outputs whose source_samples the recorder had not logged yet, by key and in
        #: log order.
        self.without_sources: dict[tuple[str, int], _Pending] = {}
        self.waiting: deque[_Pending] = deque()
        self.now_ns = 0

    # --- reading ---

    def run(self, bag: str | os.PathLike[str]) -> None:
        wanted = (*self.method_of, *self.outputs, self.provenance_topic)
        # closing: an error here leaves no reader (and its quiet parser) open behind it
        with closing(_messages(bag, wanted)) as messages:
            self._read(messages)

    def _read(self, messages: Iterator[tuple[str, Any, int]]) -> None:
        for topic, message, log_ns in messages:
            self.now_ns = log_ns
            while self.pending and self.pending[0].log_ns + TRANSPORT_BOUND_NS < log_ns:
                self._judge(self.pending.popleft())
            if topic in self.method_of:
                self._sample(topic, message, log_ns)
            elif topic == self.provenance_topic:
                self._sources(message, log_ns)
            else:
                self._output(self.outputs[topic], message, log_ns)
        while self.pending:
            self._judge(self.pending.popleft())

    def _sample(self, topic: str, message: Any, log_ns: int) -> None:
        self.inputs[topic] = self.inputs.get(topic, 0) + 1
        try:
            timestamp = self.rules.sample_stamp(message)
        except (AttributeError, TypeError, ValueError) as err:
            raise _NotPossible(f'{topic} message at log time {log_ns} ns has no '
                               f'{self.rules.stamp_field}: '
                               f'{type(err).__name__}: {err}') from err
        sample = _Sample(timestamp, log_ns, message)
        heard = self.heard[topic]
        heard.samples.append(sample)
        heard.by_stamp[timestamp] = sample
        heard.count += 1
        later = self.rules.superseded('state/nav', self.method_of[topic])
        if later is not None and self.heard[self.topic_of[later]].first is not None:
            heard.ignored += 1
        if heard.first is None:
            heard.first = sample
        heard.last = sample
        for waiting in self.open.pop((topic, timestamp), ()):
            if not waiting.done:
                waiting.done = True
                self.judging_ns = waiting.out.log_ns
                self._violation(waiting.out.stream, BridgeDifference(
                    waiting.out.stamp_ns, 'named_input_from_the_future', topic, timestamp,
                    log_ns - waiting.out.log_ns))
        # Keep what an output still to be judged can be made of, and the latest. An output
        # waits HELD_NS at most for its source_samples.
        while self.waiting:
            first = self.waiting[0]
            key = (self.stream_topic[first.stream], first.stamp_ns)
            if key in self.without_sources and first.log_ns + HELD_NS >= log_ns:
                break
            self.waiting.popleft()
            if self.without_sources.pop(key, None) is not None:
                self._without_sources(first)
        oldest = min([log_ns, *(queue[0].log_ns for queue in (self.pending, self.waiting)
                                if queue)])
        cutoff = oldest - TRANSPORT_BOUND_NS - HELD_NS
        while len(heard.samples) > 1 and heard.samples[1].log_ns < cutoff:
            gone = heard.samples.popleft()
            if heard.by_stamp.get(gone.timestamp) is gone:
                del heard.by_stamp[gone.timestamp]

    def _sources(self, message: Any, log_ns: int) -> None:
        if self.first_sources_ns is None:
            self.first_sources_ns = log_ns
        self.last_sources_ns = log_ns
        try:
            stamp = message.header.stamp
            key = (str(message.output_topic),
                   int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec))
        except (AttributeError, TypeError, ValueError) as err:
            raise _NotPossible(f'{self.provenance_topic} message at log time {log_ns} ns '
                               f'cannot be read: {type(err).__name__}: {err}') from err
        waiting = self.without_sources.pop(key, None)
        if waiting is None:
            self.sources[key] = message
        else:
            self._judge_with(waiting, message)

    def _output(self, stream: str, message: Any, log_ns: int) -> None:
        form = hash_form(message)
        header = form.get('header')
        stamp = header.get('stamp') if isinstance(header, Mapping) else None
        if not isinstance(stamp, Mapping):
            raise _NotPossible(f'{self.stream_topic[stream]} message at log time {log_ns} ns '
                               'has no header stamp')
        self.pending.append(_Pending(stream, int(stamp['sec']) * 1_000_000_000
                                     + int(stamp['nanosec']), log_ns, form))

    # --- judging: each output gets one verdict (exact, a difference, a violation, or
    # unverifiable) ---

    def _judge(self, out: _Pending) -> None:
        self.judging_ns = out.log_ns
        self.streams[out.stream].recorded += 1
        previous = self.last_stamp.get(out.stream)
        self.last_stamp[out.stream] = out.stamp_ns
        if previous is not None and out.stamp_ns <= previous:
            self._differs(out.stream, BridgeDifference(out.stamp_ns, 'order', '', out.stamp_ns,
                                                       previous))
            return
        key = (self.stream_topic[out.stream], out.stamp_ns)
        message = self.sources.pop(key, None)
        if message is None:
            # Its source_samples may come later (the recorder drains a busier topic later):
            # judged when it does (its samples are judged by the output's own log time), or at
            # the end without.
            self.without_sources[key] = out
            self.waiting.append(out)
            return
        self._judge_with(out, message)

    def _judge_with(self, out: _Pending, message: Any) -> None:
        named = self._named(out, message)
        if isinstance(named, str):
            self._differs(out.stream, BridgeDifference(out.stamp_ns, 'provenance', named,
                                                       None, None))
            return
        own, held = named
        self.own_named[out.stream] = self.own_named.get(out.stream, 0) + 1
        samples: dict[str, _Sample | None] = {}
        absent: list[tuple[str, int, bool]] = []
        for role, timestamp in (own, *held.items()):
            if timestamp is None:
                samples[role] = None
                continue
            topic = self._topic(role)
            samples[role] = (self.heard[topic].by_stamp.get(timestamp)
                             or self.pinned.get((topic, timestamp)))
            if samples[role] is None:
                absent.append((topic, timestamp, role == own[0]))
        if absent:
            waiting = _Open(out, absent)
            self.opened.append(waiting)
            for topic, timestamp, _ in absent:
                self.open.setdefault((topic, timestamp), []).append(waiting)
            return
        self._compare(out, own[0], samples)

    def _named(self, out: _Pending, message: Any
               ) -> tuple[tuple[str, int], dict[str, int | None]] | str:
        """The samples a SourceSamples names, by role, or what is wrong with it."""
        try:
            topics, fields, stamps = (list(message.source_topics), list(message.stamp_fields),
                                      [int(v) for v in message.stamps])
        except (AttributeError, TypeError, ValueError) as err:
            return f'cannot be read ({type(err).__name__}: {err})'
        if not len(topics) == len(fields) == len(stamps):
            return 'has arrays of different lengths'
        roles = self.roles[out.stream]
        field_name = self.rules.stamp_field
        methods = [self.method_of.get(topic) for topic in topics]
        if not methods or methods[0] not in roles:
            wanted = ' or '.join(self.topic_of[method] for method in roles)
            return f'does not name its {wanted} sample first'
        own = (str(methods[0]), stamps[0])
        held: dict[str, int | None] = dict.fromkeys(roles[own[0]])
        for index, (topic, name, stamp) in enumerate(zip(topics, fields, stamps, strict=True)):
            method = methods[index]
            if name != field_name:
                return f'names {topic} by {name!r}, not {field_name!r}'
            if index == 0:
                continue
            role = next((role for role, named in held.items()
                         if named is None and self.rules.method(role) == method), None)
            if role is not None:
                held[role] = stamp
            else:
                return (f'names {topic} ({field_name} {stamp}), which the bridge does not '
                        'read for this output, or twice')
        return own, held

    def _newer_held(self, role: str, sample: _Sample | None, before_ns: int
                    ) -> _Sample | None:
        """The newest `role` sample logged by `before_ns`, if newer than `sample` (kept)."""
        method = self.rules.method(role)
        for newer in reversed(self.heard[self.topic_of[method]].samples):
            if newer.log_ns > before_ns:
                continue
            if not self.rules.keeps(method, newer.message):
                continue
            if sample is None or newer.timestamp > sample.timestamp:
                return newer
            return None
        return None

    def _derive(self, stream: str, own: tuple[str, _Sample],
                held: Mapping[str, _Sample | None]) -> dict[str, Any] | str:
        """The message the bridge's rules give for these samples, or why none."""
        method, sample = own
        try:
            return self.rules.derive(stream, method, sample.message, {
                name: None if value is None else value.message for name, value in held.items()})
        except (AttributeError, TypeError, ValueError) as err:
            raise _NotPossible(f'{self.topic_of[method]} sample {sample.timestamp} cannot be '
                               f'converted: {type(err).__name__}: {err}') from err

    def _compare(self, out: _Pending, own_method: str,
                 samples: Mapping[str, _Sample | None]) -> None:
        own = samples[own_method]
        assert own is not None
        for role, sample in samples.items():
            if sample is not None and sample.log_ns > out.log_ns + TRANSPORT_BOUND_NS:
                self._violation(out.stream, BridgeDifference(
                    out.stamp_ns, 'named_input_from_the_future', self._topic(role),
                    sample.timestamp, sample.log_ns - out.log_ns))
                return
        held = {role: sample for role, sample in samples.items() if role != own_method}
        if self._another_anchor(out, held):
            return
        difference = self._difference(out, self._derive(out.stream, (own_method, own), held))
        if difference is not None:
            self._differs(out.stream, difference)
            return
        if self._superseded(out, own_method, own):
            return
        # The bridge holds the latest sample of each kind: it had the one the recorder logged
        # more than the bound before the output's own sample. Naming an older one (or none) is
        # claimed late when that one gives another output (a bridge behind its queues may hold
        # an older sample of a topic it has not drained: what it says stays the same).
        before = own.log_ns - TRANSPORT_BOUND_NS
        for role, sample in held.items():
            if role in self.rules.fixed:
                continue
            newer = self._newer_held(role, sample, before)
            if newer is not None and self._difference(
                    out, self._derive(out.stream, (own_method, own), {**held, role: newer})):
                self._violation(out.stream, BridgeDifference(
                    out.stamp_ns, 'input_claimed_late', self._topic(role),
                    None if sample is None else sample.timestamp, newer.timestamp))
                return
        self.streams[out.stream].exact += 1

    def _topic(self, role: str) -> str:
        return self.topic_of[self.rules.method(role)]

    def _another_anchor(self, out: _Pending, held: Mapping[str, _Sample | None]) -> bool:
        """Samples the bridge keeps for good (``BridgeRules.fixed``): kept, and always the same.

        (mavros_bridge anchors its fixes at the first usable fix and the belief held then.)
        """
        fixed = tuple((role, sample.timestamp) for role, sample in held.items()
                      if role in self.rules.fixed and sample is not None)
        if not fixed:
            return False
        for role, sample in held.items():
            if role in self.rules.fixed and sample is not None:
                self.pinned[(self._topic(role), sample.timestamp)] = sample
        first = self.anchors.setdefault(out.stream, fixed)
        if first == fixed:
            return False
        self._differs(out.stream, BridgeDifference(
            out.stamp_ns, 'provenance', f'names {fixed}, not the first it named, {first}',
            None, None))
        return True

    def _superseded(self, out: _Pending, own_method: str, own: _Sample) -> bool:
        """An output made of a kind the bridge stops using once it has had another: a violation.

        (ap_bridge with source auto takes no belief from a pose once it had an odometry: one
        the recorder logged more than the bound before the output's own sample.)
        """
        method = self.rules.superseded(out.stream, own_method)
        first = None if method is None else self.heard[self.topic_of[method]].first
        if first is None or first.log_ns >= own.log_ns - TRANSPORT_BOUND_NS:
            return False
        self._violation(out.stream, BridgeDifference(
            out.stamp_ns, 'input_claimed_late', self.topic_of[method or ''], None,
            first.timestamp))
        return True

    def _difference(self, out: _Pending, expected: dict[str, Any] | str
                    ) -> BridgeDifference | None:
        if isinstance(expected, str):
            return BridgeDifference(out.stamp_ns, 'field', '', 'a message',
                                    f'none ({expected})')
        found = first_difference(out.form, expected)
        if found is None:
            return None
        return BridgeDifference(out.stamp_ns, 'field', found.field, found.recorded,
                                found.recomputed)

    def _after_stop(self, stream: str) -> bool:
        """An output judged wrong but logged after the run began to stop: unverifiable."""
        if self.stop_ns is None or self.judging_ns < self.stop_ns:
            return False
        self._unverifiable(stream, 'logged after the run began to stop (start-up and shutdown)')
        return True

    def _differs(self, stream: str, difference: BridgeDifference) -> None:
        if self._after_stop(stream):
            return
        stats = self.streams[stream]
        stats.differing += 1
        stats.note(difference)

    def _violation(self, stream: str, difference: BridgeDifference) -> None:
        if self._after_stop(stream):
            return
        stats = self.streams[stream]
        stats.violations[difference.kind] = stats.violations.get(difference.kind, 0) + 1
        stats.note(difference)

    def _unverifiable(self, stream: str, reason: str) -> None:
        stats = self.streams[stream]
        stats.unverifiable[reason] = stats.unverifiable.get(reason, 0) + 1

    # --- at the end of the recording: what the bag never held ---

    def _without_sources(self, out: _Pending) -> None:
        self.judging_ns = out.log_ns
        first, last = self.first_sources_ns, self.last_sources_ns
        if first is not None and last is not None and (
                out.log_ns < first + TRANSPORT_BOUND_NS
                or out.log_ns > last - TRANSPORT_BOUND_NS):
            self._unverifiable(out.stream, 'logged without its source_samples, as the '
                               'recorder began or stopped receiving them')
            return
        self._violation(out.stream, BridgeDifference(out.stamp_ns, 'provenance_missing', '',
                                                     None, None))

    def _outside(self, topic: str, timestamp: int, out: _Pending, own: bool) -> str | None:
        """Why a sample the bag lacks is unverifiable, or None (heard then: it is missing)."""
        heard = self.heard[topic]
        if heard.first is None or heard.last is None:
            return f'names a sample of {topic}, a topic the bag holds no sample of'
        if timestamp < heard.first.timestamp and (
                not own or out.log_ns <= heard.first.log_ns + TRANSPORT_BOUND_NS):
            return f'names a sample of {topic} from before the recorder heard the topic'
        if timestamp > heard.last.timestamp and (
                not own or out.log_ns >= heard.last.log_ns - TRANSPORT_BOUND_NS):
            return f'names a sample of {topic} from after the recorder last heard the topic'
        return None

    def _never_recorded(self, waiting: _Open) -> None:
        self.judging_ns = waiting.out.log_ns
        reasons = []
        for topic, timestamp, own in waiting.absent:
            reason = self._outside(topic, timestamp, waiting.out, own)
            if reason is None:
                self._violation(waiting.out.stream, BridgeDifference(
                    waiting.out.stamp_ns, 'named_input_missing', topic, timestamp, None))
                return
            reasons.append(reason)
        self._unverifiable(waiting.out.stream, reasons[0])

    def report(self, config: Mapping[str, object]) -> BridgeReport:
        for out in self.without_sources.values():
            self._without_sources(out)
        for waiting in self.opened:
            if not waiting.done:
                self._never_recorded(waiting)
        for stream, stats in self.streams.items():
            if stream != 'vehicle_status':
                heard = sum(self.heard[self.topic_of[method]].count
                            - self.heard[self.topic_of[method]].ignored
                            for method in self.roles[stream])
                stats.not_named = max(0, heard - self.own_named.get(stream, 0))
        kind = self.rules
        return BridgeReport(None, tuple(sorted(self.inputs.items())),
                            tuple(self.streams.values()), config, kind.name, kind.samples,
                            kind.inputs)


def _messages(bag: str | os.PathLike[str],
              topics: tuple[str, ...]) -> Generator[tuple[str, Any, int], None, None]:
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
