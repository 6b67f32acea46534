"""Typed cycle events: what the judges see of a bag, one event per cycle stamp.

The read-error types (BagFileDigest, ReadError, ReadErrorKind) are ghost_bag.mcap_read's,
the reader that reports them; they stay importable from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

from ghost_bag.mcap_read import BagFileDigest, ReadError, ReadErrorKind
from ghost_core.hashing import content_address

from .errors import BagFormatError

__all__ = [
    'GHOST_SCHEMAS',
    'Actuation',
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
    'actuation_of',
    'calibrated_of',
    'gate_record_of',
    'ghost_kind_of_schema',
    'rationale_of',
    'raw_assessment_of',
    'stamp_ns_of',
]

_T = TypeVar('_T')


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


@dataclass(frozen=True, slots=True)
class RawAssessment:
    """A BeliefSelfAssessment published on the raw assessment topic."""

    message: GhostMessage
    overall_level: int


@dataclass(frozen=True, slots=True)
class Calibrated:
    """A CalibratedSelfAssessment: the facts the properties and the chain need from it.

    A ``ghost_core.properties.CalibratedFacts``, so the judges read it as it is.
    """

    message: GhostMessage
    raw_overall_level: int
    inline_raw_sha256: str
    raw_assessment_sha256: str
    adjusted_overall_level: int
    outcomes_considered: int
    count_beyond_3_std: int
    count_beyond_5_std: int
    min_outcomes: int
    downgrade_threshold: int

    @property
    def stamp_ns(self) -> int:
        """The cycle stamp (what ghost_core.properties.CalibratedFacts reads)."""
        return self.message.stamp_ns


@dataclass(frozen=True, slots=True)
class Rationale:
    """A DecisionRationale: the decision and the content addresses it claims."""

    message: GhostMessage
    decision_kind: int
    decision_reason: str
    policy_id: str
    self_assessment_sha256: str
    calibrated_assessment_sha256: str


@dataclass(frozen=True, slots=True)
class Actuation:
    """An ActionEmission: the decision it carries inline and the command it sent."""

    message: GhostMessage
    decision_kind: int
    command_kind: int
    rationale_sha256: str

    @property
    def stamp_ns(self) -> int:
        """The cycle stamp."""
        return self.message.stamp_ns


@dataclass(frozen=True, slots=True)
class GateRecord:
    """A GateEmission: what the command gate sent (a ``ghost_core.gate_property.GateRecordFacts``).

    Not part of a cycle: its header.stamp is when the gate sent the output; the cycle it acts
    on is `actuation_stamp_ns`. Times in nanoseconds.
    """

    message: GhostMessage
    action: int
    reason: str
    mode: str
    output_topic: str
    has_actuation: bool
    actuation_stamp_ns: int
    rationale_sha256: str
    decision_kind: int
    command_kind: int
    actuation_received_ns: int
    timeout_s: float
    velocity: tuple[float, ...]
    twist_linear: tuple[float, ...]
    twist_angular: tuple[float, ...]
    vehicle_command: int

    @property
    def gate(self) -> str:
        """The gate that sent it: the topic it was recorded on."""
        return self.message.topic

    @property
    def stamp_ns(self) -> int:
        """When the gate sent the output (header.stamp)."""
        return self.message.stamp_ns


@dataclass(frozen=True, slots=True)
class CycleEvent:
    """Every ghost message that carries one cycle stamp, in stream order per stream.

    On a well-formed bag each tuple holds at most one message; duplicates are kept so that
    the judges can decide what to do with them (see docs/properties.md).
    """

    stamp_ns: int
    raw_assessments: tuple[RawAssessment, ...] = ()
    predictions: tuple[GhostMessage, ...] = ()
    outcomes: tuple[GhostMessage, ...] = ()
    calibrated: tuple[Calibrated, ...] = ()
    rationales: tuple[Rationale, ...] = ()
    actuations: tuple[Actuation, ...] = ()


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


def stamp_ns_of(msg: Mapping[str, object], where: str) -> int:
    """Return header.stamp of a message dict as integer nanoseconds (the cycle stamp)."""
    sec = _get(msg, 'header.stamp.sec', int, where)
    nanosec = _get(msg, 'header.stamp.nanosec', int, where)
    return sec * 1_000_000_000 + nanosec


def raw_assessment_of(message: GhostMessage) -> RawAssessment:
    """Extract the typed view of a raw assessment message."""
    where = _where(message)
    return RawAssessment(message, _get(message.msg, 'overall_level', int, where))


def calibrated_of(message: GhostMessage) -> Calibrated:
    """Extract the typed view of a calibrated assessment message."""
    where = _where(message)
    msg = message.msg
    raw = _get(msg, 'raw_assessment', dict, where)
    inline_sha256 = next((sha256 for name, sha256 in message.part_sha256
                          if name == 'raw_assessment'), None)
    return Calibrated(
        message=message,
        raw_overall_level=_get(msg, 'raw_assessment.overall_level', int, where),
        inline_raw_sha256=content_address(raw) if inline_sha256 is None else inline_sha256,
        raw_assessment_sha256=_get(msg, 'raw_assessment_sha256', str, where),
        adjusted_overall_level=_get(msg, 'adjusted_overall_level', int, where),
        outcomes_considered=_get(msg, 'calibration_history.outcomes_considered', int, where),
        count_beyond_3_std=_get(msg, 'calibration_history.count_beyond_3_std', int, where),
        count_beyond_5_std=_get(msg, 'calibration_history.count_beyond_5_std', int, where),
        min_outcomes=_get(msg, 'min_outcomes', int, where),
        downgrade_threshold=_get(msg, 'downgrade_threshold', int, where),
    )


def rationale_of(message: GhostMessage) -> Rationale:
    """Extract the typed view of a decision rationale message."""
    where = _where(message)
    msg = message.msg
    return Rationale(
        message=message,
        decision_kind=_get(msg, 'decision.kind', int, where),
        decision_reason=_get(msg, 'decision.reason', str, where),
        policy_id=_get(msg, 'policy_id', str, where),
        self_assessment_sha256=_get(msg, 'self_assessment_sha256', str, where),
        calibrated_assessment_sha256=_get(msg, 'calibrated_assessment_sha256', str, where),
    )


def actuation_of(message: GhostMessage) -> Actuation:
    """Extract the typed view of an actuation message."""
    where = _where(message)
    msg = message.msg
    return Actuation(
        message=message,
        decision_kind=_get(msg, 'decision.kind', int, where),
        command_kind=_get(msg, 'command.kind', int, where),
        rationale_sha256=_get(msg, 'rationale_sha256', str, where),
    )


def gate_record_of(message: GhostMessage) -> GateRecord:
    """Extract the typed view of a gate record message."""
    where = _where(message)
    msg = message.msg
    return GateRecord(
        message=message,
        action=_get(msg, 'action', int, where),
        reason=_get(msg, 'reason', str, where),
        mode=_get(msg, 'mode', str, where),
        output_topic=_get(msg, 'output_topic', str, where),
        has_actuation=_get(msg, 'has_actuation', bool, where),
        actuation_stamp_ns=_time_ns(msg, 'actuation_stamp', where),
        rationale_sha256=_get(msg, 'rationale_sha256', str, where),
        decision_kind=_get(msg, 'decision_kind', int, where),
        command_kind=_get(msg, 'command_kind', int, where),
        actuation_received_ns=_time_ns(msg, 'actuation_received', where),
        timeout_s=_get(msg, 'timeout_s', float, where),
        velocity=_floats(msg, 'velocity', where),
        twist_linear=tuple(_get(msg, f'twist.linear.{axis}', float, where) for axis in 'xyz'),
        twist_angular=tuple(_get(msg, f'twist.angular.{axis}', float, where) for axis in 'xyz'),
        vehicle_command=_get(msg, 'vehicle_command', int, where),
    )


def _time_ns(msg: Mapping[str, object], path: str, where: str) -> int:
    return (_get(msg, f'{path}.sec', int, where) * 1_000_000_000
            + _get(msg, f'{path}.nanosec', int, where))


def _floats(msg: Mapping[str, object], path: str, where: str) -> tuple[float, ...]:
    values = _get(msg, path, list, where)
    if not all(isinstance(value, float) for value in values):
        raise BagFormatError(f'{where}: field {path!r} is not a list of floats')
    return tuple(values)


def _where(message: GhostMessage) -> str:
    return f'{message.topic} ({message.type_name}) at log time {message.log_time_ns} ns'
