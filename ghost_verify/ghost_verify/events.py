"""Typed cycle events: what the judges see of a bag, one event per cycle stamp.

The read-error types (BagFileDigest, ReadError, ReadErrorKind) are ghost_bag.mcap_read's,
the reader that reports them; they stay importable from here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Annotated, Any, get_args, get_type_hints, TypeVar

from ghost_bag.errors import BagFormatError
from ghost_bag.mcap_read import BagFileDigest, ReadError, ReadErrorKind
from ghost_core.hashing import content_address
from ghost_core.msg_fields import MESSAGE_FIELDS

from .log_order import OrderViolation

__all__ = [
    'COMPUTED',
    'GHOST_SCHEMAS',
    'VIEWS',
    'Actuation',
    'At',
    'BagFileDigest',
    'BagInfo',
    'Calibrated',
    'CycleEvent',
    'GateRecord',
    'GhostMessage',
    'GhostTopicKind',
    'RawAssessment',
    'Rationale',
    'ReadError',
    'ReadErrorKind',
    'View',
    'actuation_of',
    'calibrated_of',
    'field_type',
    'gate_record_of',
    'ghost_kind_of_schema',
    'rationale_of',
    'raw_assessment_of',
    'stamp_ns_of',
    'view_paths',
]

_T = TypeVar('_T')
_V = TypeVar('_V', bound='View')


class GhostTopicKind(StrEnum):
    """The ghost streams, named by role rather than by topic.

    The six of SPEC section 2 (grouped into cycles by their cycle stamp), and the command
    gate's record (GATE-v1: one message per output, stamped when sent, not part of a cycle).
    """

    RAW_ASSESSMENT = 'raw_assessment'
    PREDICTION = 'prediction'
    OUTCOME = 'outcome'
    CALIBRATED = 'calibrated'
    RATIONALE = 'rationale'
    ACTUATION = 'actuation'
    GATE = 'gate'


# Ghost channels are recognised by schema name, never by topic name, so that remapped topics
# (SPEC section 2: every topic is remappable) are still read.
GHOST_SCHEMAS: Mapping[str, GhostTopicKind] = {
    'ghost_interfaces/msg/BeliefSelfAssessment': GhostTopicKind.RAW_ASSESSMENT,
    'ghost_interfaces/msg/ForwardPrediction': GhostTopicKind.PREDICTION,
    'ghost_interfaces/msg/PredictionOutcome': GhostTopicKind.OUTCOME,
    'ghost_interfaces/msg/CalibratedSelfAssessment': GhostTopicKind.CALIBRATED,
    'ghost_interfaces/msg/DecisionRationale': GhostTopicKind.RATIONALE,
    'ghost_interfaces/msg/ActionEmission': GhostTopicKind.ACTUATION,
    'ghost_interfaces/msg/GateEmission': GhostTopicKind.GATE,
}


def ghost_kind_of_schema(schema_name: str) -> GhostTopicKind | None:
    """Return the ghost stream a schema name belongs to, or None for any other type.

    Accepts both the rosbag2 form ``ghost_interfaces/msg/X`` and the short form
    ``ghost_interfaces/X``.
    """
    parts = schema_name.split('/')
    if len(parts) == 2:
        parts = [parts[0], 'msg', parts[1]]
    return GHOST_SCHEMAS.get('/'.join(parts))


@dataclass(frozen=True, slots=True)
class BagInfo:
    """What is known about a bag once it has been read to the end.

    `read_errors` lists every part of the bag that could not be read; when it is not empty
    the input is incomplete and every verdict covers only what was read.
    """

    files: tuple[BagFileDigest, ...]
    ghost_topics: tuple[tuple[str, str], ...]
    messages_total: int
    ghost_messages: int
    cycles: int
    read_errors: tuple[ReadError, ...] = ()
    #: The greatest log time of any message read, on any channel (None: no message): where
    #: the recording demonstrably ended.
    last_log_time_ns: int | None = None

    @property
    def incomplete_input(self) -> bool:
        """True when some part of the bag could not be read."""
        return bool(self.read_errors)


@dataclass(frozen=True, slots=True)
class GhostMessage:
    """One decoded ghost message: its SPEC section 4 message dict and content address."""

    topic: str
    type_name: str
    kind: GhostTopicKind
    log_time_ns: int
    stamp_ns: int
    msg: Mapping[str, object]
    #: Content address of `msg`; '' for the streams nothing cites (see bag.HASHED_KINDS).
    sha256: str
    #: Content addresses of nested messages of `msg` that something cites, by field name,
    #: computed by the reader with `sha256` (a calibrated assessment's inline raw one).
    part_sha256: tuple[tuple[str, str], ...] = ()


# The typed views below read their fields from the message dict. A view field is read at the
# message field of the same name unless annotated At(another dotted path); its type is the
# one ghost_core.msg_fields gives that path (generated from the .msg files), so no view
# spells a field's type, and schema.REQUIRED_FIELDS is derived from the same paths.

@dataclass(frozen=True, slots=True)
class At:
    """Annotates a view field read at the dotted message path `path`."""

    path: str


#: Annotates a view field that the view's reader computes (it reads no path of its own).
COMPUTED = At('')


@dataclass(frozen=True, slots=True)
class View:
    """A typed view of one ghost message: the message, then the fields read from it."""

    message: GhostMessage

    @property
    def stamp_ns(self) -> int:
        """The message's header.stamp: the cycle stamp (a gate record's: when it was sent)."""
        return self.message.stamp_ns


@dataclass(frozen=True, slots=True)
class RawAssessment(View):
    """A BeliefSelfAssessment published on the raw assessment topic."""

    overall_level: int
    thresholds_sha256: str


@dataclass(frozen=True, slots=True)
class Calibrated(View):
    """A CalibratedSelfAssessment: the facts the properties and the chain need from it.

    A ``ghost_core.properties.CalibratedFacts``, so the judges read it as it is.
    """

    raw_overall_level: Annotated[int, At('raw_assessment.overall_level')]
    inline_raw_sha256: Annotated[str, COMPUTED]
    raw_assessment_sha256: str
    adjusted_overall_level: int
    outcomes_considered: Annotated[int, At('calibration_history.outcomes_considered')]
    count_beyond_3_std: Annotated[int, At('calibration_history.count_beyond_3_std')]
    count_beyond_5_std: Annotated[int, At('calibration_history.count_beyond_5_std')]
    min_outcomes: int
    downgrade_threshold: int
    window_size: Annotated[int, At('calibration_history.window_size')]
    thresholds_sha256: Annotated[str, At('raw_assessment.thresholds_sha256')]


@dataclass(frozen=True, slots=True)
class _Decided(View):
    """A message that carries its cycle's decision inline (DecisionRationale, ActionEmission)."""

    decision_kind: Annotated[int, At('decision.kind')]


@dataclass(frozen=True, slots=True)
class Rationale(_Decided):
    """A DecisionRationale: the decision and the content addresses it claims."""

    decision_reason: Annotated[str, At('decision.reason')]
    policy_id: str
    self_assessment_sha256: str
    calibrated_assessment_sha256: str


@dataclass(frozen=True, slots=True)
class Actuation(_Decided):
    """An ActionEmission: the decision it carries inline and the command it sent."""

    command_kind: Annotated[int, At('command.kind')]
    rationale_sha256: str


@dataclass(frozen=True, slots=True)
class GateRecord(View):
    """A GateEmission: what the command gate sent (a ``ghost_core.gate_property.GateRecordFacts``).

    Not part of a cycle: its header.stamp is when the gate sent the output; the cycle it acts
    on is `actuation_stamp_ns`. Times in nanoseconds.
    """

    action: int
    reason: str
    mode: str
    output_topic: str
    has_actuation: bool
    actuation_stamp_ns: Annotated[int, At('actuation_stamp')]
    rationale_sha256: str
    decision_kind: int
    command_kind: int
    actuation_received_ns: Annotated[int, At('actuation_received')]
    timeout_s: float
    velocity: tuple[float, ...]
    twist_linear: Annotated[tuple[float, ...], At('twist.linear')]
    twist_angular: Annotated[tuple[float, ...], At('twist.angular')]
    vehicle_command: int

    @property
    def gate(self) -> str:
        """The gate that sent it: the topic it was recorded on."""
        return self.message.topic


@dataclass(frozen=True, slots=True)
class CycleEvent:
    """Every ghost message that carries one cycle stamp, in stream order per stream.

    On a well-formed bag each tuple holds at most one message; duplicates are kept (at most
    cycles.MESSAGES_PER_CYCLE per stream); `order_violations`: see ``log_order``.
    """

    stamp_ns: int
    raw_assessments: tuple[RawAssessment, ...] = ()
    predictions: tuple[GhostMessage, ...] = ()
    outcomes: tuple[GhostMessage, ...] = ()
    calibrated: tuple[Calibrated, ...] = ()
    rationales: tuple[Rationale, ...] = ()
    actuations: tuple[Actuation, ...] = ()
    order_violations: tuple[OrderViolation, ...] = ()


_PATHS: dict[str, tuple[str, ...]] = {}


def _get(msg: Mapping[str, object], path: str, typ: type[_T], where: str) -> _T:
    """Return the field at a dotted path, or raise BagFormatError naming it."""
    names = _PATHS.get(path)
    if names is None:
        names = _PATHS[path] = tuple(path.split('.'))
    value: object = msg
    for name in names:
        # Decoded messages are plain dicts: skip the Mapping ABC check for them.
        if type(value) is not dict and not isinstance(value, Mapping) or name not in value:
            raise BagFormatError(f'{where}: message has no field {path!r}')
        value = value[name]
    if type(value) is typ:
        return value
    # bool is an int subclass: never accept it where an integer is expected.
    if not isinstance(value, typ) or (typ is int and isinstance(value, bool)):
        raise BagFormatError(
            f'{where}: field {path!r} is {type(value).__name__}, expected {typ.__name__}'
        )
    return value


def _time_ns(msg: Mapping[str, object], path: str, where: str) -> int:
    return (_get(msg, f'{path}.sec', int, where) * 1_000_000_000
            + _get(msg, f'{path}.nanosec', int, where))


def _floats(msg: Mapping[str, object], path: str, where: str) -> tuple[float, ...]:
    values = _get(msg, path, list, where)
    if not all(isinstance(value, float) for value in values):
        raise BagFormatError(f'{where}: field {path!r} is not a list of floats')
    return tuple(values)


def _vector(msg: Mapping[str, object], path: str, where: str) -> tuple[float, ...]:
    return tuple(_get(msg, f'{path}.{axis}', float, where) for axis, _ in _VECTOR_FIELDS)


def stamp_ns_of(msg: Mapping[str, object], where: str) -> int:
    """Return header.stamp of a message dict as integer nanoseconds (the cycle stamp)."""
    return _time_ns(msg, 'header.stamp', where)


def _where(message: GhostMessage) -> str:
    return f'{message.topic} ({message.type_name}) at log time {message.log_time_ns} ns'


def field_type(message_type: str, path: str) -> str:
    """Return the .msg type of the dotted field `path` of a ghost message (KeyError if none)."""
    field_type_ = message_type
    for name in path.split('.'):
        field_type_ = dict(MESSAGE_FIELDS[field_type_])[name]
    return field_type_


_VECTOR_FIELDS = MESSAGE_FIELDS['geometry_msgs/Vector3']
_SCALARS: Mapping[str, type] = {
    **dict.fromkeys(('byte', 'char', 'int8', 'uint8', 'int16', 'uint16', 'int32', 'uint32',
                     'int64', 'uint64'), int),
    'float32': float, 'float64': float, 'bool': bool, 'string': str,
}
_Reader = Callable[[GhostMessage, str], Any]


def _path_reader(message_type: str, path: str) -> _Reader:
    kind = field_type(message_type, path)
    scalar = _SCALARS.get(kind)
    if scalar is not None:
        return lambda message, where: _get(message.msg, path, scalar, where)
    if kind == 'builtin_interfaces/Time':
        return lambda message, where: _time_ns(message.msg, path, where)
    if kind in ('geometry_msgs/Vector3', 'geometry_msgs/Point'):
        return lambda message, where: _vector(message.msg, path, where)
    if kind.endswith(']') and _SCALARS.get(kind.split('[')[0]) is float:
        return lambda message, where: _floats(message.msg, path, where)
    raise TypeError(f'{message_type}.{path} is a {kind}: no view reads that type')


def _inline_raw_sha256(message: GhostMessage, where: str) -> str:
    for name, sha256 in message.part_sha256:
        if name == 'raw_assessment':
            return sha256
    return content_address(_get(message.msg, 'raw_assessment', dict, where))


_COMPUTED: Mapping[tuple[type, str], _Reader] = {
    (Calibrated, 'inline_raw_sha256'): _inline_raw_sha256,
}

#: Per ghost stream with a typed view, the message type and the view.
VIEWS: Mapping[GhostTopicKind, tuple[str, type[View]]] = {
    GhostTopicKind.RAW_ASSESSMENT: ('BeliefSelfAssessment', RawAssessment),
    GhostTopicKind.CALIBRATED: ('CalibratedSelfAssessment', Calibrated),
    GhostTopicKind.RATIONALE: ('DecisionRationale', Rationale),
    GhostTopicKind.ACTUATION: ('ActionEmission', Actuation),
    GhostTopicKind.GATE: ('GateEmission', GateRecord),
}


def _sources(view: type) -> tuple[tuple[str, str | None], ...]:
    """Each field of a view after `message`: (name, dotted path read, None when computed)."""
    hints = get_type_hints(view, include_extras=True)
    out = []
    for item in fields(view)[1:]:
        at = next((arg for arg in get_args(hints[item.name])[1:] if isinstance(arg, At)), None)
        path = item.name if at is None else at.path
        out.append((item.name, path or None))
    return tuple(out)


def view_paths(view: type) -> tuple[str, ...]:
    """Return the dotted message paths a view's fields are read at (computed ones excluded)."""
    return tuple(path for _, path in _sources(view) if path is not None)


def _viewer(kind: GhostTopicKind, view: type[_V]) -> Callable[[GhostMessage], _V]:
    message_type = VIEWS[kind][0]
    readers = tuple(_COMPUTED[view, name] if path is None else _path_reader(message_type, path)
                    for name, path in _sources(view))
    build: Callable[..., _V] = view

    def view_of(message: GhostMessage) -> _V:
        where = _where(message)
        return build(message, *[read(message, where) for read in readers])

    view_of.__doc__ = f'Extract the typed {view.__name__} view of a {message_type} message.'
    return view_of


raw_assessment_of = _viewer(GhostTopicKind.RAW_ASSESSMENT, RawAssessment)
calibrated_of = _viewer(GhostTopicKind.CALIBRATED, Calibrated)
rationale_of = _viewer(GhostTopicKind.RATIONALE, Rationale)
actuation_of = _viewer(GhostTopicKind.ACTUATION, Actuation)
gate_record_of = _viewer(GhostTopicKind.GATE, GateRecord)
