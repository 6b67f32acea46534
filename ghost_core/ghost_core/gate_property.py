"""GATE-v1 judged on one recorded gate output: no mission setpoint leaves without a PROCEED.

The command gate (``command_gate`` node, rule ``ghost_core.gate``) records every output it
sends as a GateEmission. GATE-v1 (docs/properties.md) is stated on those records: a PASSED
record chains to a recorded actuation whose decision is PROCEED with CONTINUE_MISSION, fresh
at the time it passed; a HELD record is a hold; a VEHICLE_COMMAND record is the LAND / RTL
command of the actuation it cites; and each gate acts on its latest actuation.

How it fits ``ghost_core.properties``: BAUD-v1 and ERUR-v1 are judged per cycle (a
``CycleProperty``: C_t and the actuations of t, with M and K). GATE-v1 is judged per gate
record, with the recorded actuations of the cycle the record cites and the latest actuation
its gate cited before (a ``RecordProperty``, the same shape: a version and a judge). Its
precondition is about the bag, not a cycle: a bag without gate records is "not applicable".
Records and actuations are seen through the read-only protocols below (the verifier brings
its bag events), as the cycle judges do. Times are integer nanoseconds.

Nothing the gate says about itself decides freshness (SPEC §5, amendments v1.3): the judge is
given the configured timeout (not the record's ``timeout_s``, which must equal it) and the
recorder's log times of the record, of the actuation it cites and of the first newer
actuation the gate must not pass; ``ghost_core.evidence.TRANSPORT_BOUND_NS`` is the one
tolerance between two log times.

One cohesive job, kept in one module: the GATE-v1 judge (its catalogue, its facts, its rules).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
import math
from typing import Protocol

from ghost_core.evidence import TRANSPORT_BOUND_NS
from ghost_core.gate import (
    ARDUPILOT_HOLD_MODES,
    ARDUPILOT_MODES,
    COPTER_LAND,
    COPTER_RTL,
    DEFAULT_TIMEOUT_S,
    GateAction,
    is_fresh,
    may_pass,
    VEHICLE_CMD_NAV_LAND,
    VEHICLE_CMD_NAV_RETURN_TO_LAUNCH,
    vehicle_command_for,
)
from ghost_core.levels import ActuatorCommandKind, DecisionKind
from ghost_core.properties import JsonValue, kind_name, ObservedValue

__all__ = [
    'DEFAULT_TIMEOUT_NS',
    'GATE_V1',
    'GATE_VERSION',
    'VEHICLE_COMMANDS',
    'CitedActuationFacts',
    'CitedActuationView',
    'CitedLookup',
    'GateJudge',
    'GateRecordFacts',
    'GateViolation',
    'GateViolationKind',
    'NewerActuation',
    'RecordProperty',
    'is_hold',
    'judge_gate',
    'timeout_ns_of',
]

GATE_VERSION = 'GATE-v1'

#: The vehicle commands the gate may send (px4_msgs/VehicleCommand ids): land, return to launch.
VEHICLE_COMMANDS = frozenset({VEHICLE_CMD_NAV_LAND, VEHICLE_CMD_NAV_RETURN_TO_LAUNCH})


class GateViolationKind(StrEnum):
    """Why a recorded gate output fails GATE-v1 (closed catalogue; postcondition in comments)."""

    UNKNOWN_ACTION = 'unknown_action'                        # G0
    NO_ACTUATION_CITED = 'no_actuation_cited'                # G1, G6
    ACTUATION_MISSING = 'actuation_missing'                  # G1, G6
    RATIONALE_MISMATCH = 'rationale_mismatch'                # G1, G6
    ACTUATION_OUT_OF_REACH = 'actuation_out_of_reach'        # G1, G6 (not checked)
    PASSED_NOT_PROCEED = 'passed_not_proceed'                # G2
    KINDS_MISMATCH = 'kinds_mismatch'                        # G2, G6
    ACTUATION_STALE = 'actuation_stale'                      # G3 (by its own account)
    STALE_IN_LOG_TIME = 'stale_in_log_time'                  # G3 (by the recorder's clock)
    SUPERSEDED_BY_CONSERVATIVE = 'superseded_by_conservative'  # G3 (by the recorder's clock)
    INVALID_TIMEOUT = 'invalid_timeout'                      # G3
    TIMEOUT_MISMATCH = 'timeout_mismatch'                    # G3
    ACTUATION_WENT_BACKWARDS = 'actuation_went_backwards'    # G4
    HELD_OUTPUT_MOVES = 'held_output_moves'                  # G5
    INVALID_VEHICLE_COMMAND = 'invalid_vehicle_command'      # G6
    VEHICLE_COMMAND_MISMATCH = 'vehicle_command_mismatch'    # G6


class CitedLookup(StrEnum):
    """What the judge's caller knows of the cycle a record cites."""

    #: ``cited`` holds every actuation recorded with that stamp (none: it is missing).
    RECORDED = 'recorded'
    #: The caller has dropped that cycle (it lies too far back): the chain is not checked,
    #: which is a violation (``actuation_out_of_reach``), never a pass.
    OUT_OF_REACH = 'out_of_reach'
    #: The cycle precedes the recording (the bag started after the gate received it): the
    #: chain cannot be proved either way; the caller lists the record as unverifiable.
    BEFORE_RECORDING = 'before_recording'


@dataclass(frozen=True, slots=True)
class GateViolation:
    """One failed postcondition at one gate record, with the values the judge saw.

    `gate` names the gate (the verifier: the record's topic); `record_stamp_ns` is the
    record's header.stamp (when the gate sent the output).
    """

    record_stamp_ns: int
    gate: str
    kind: GateViolationKind
    postcondition: str
    observed: tuple[tuple[str, ObservedValue], ...]

    def to_json(self) -> dict[str, JsonValue]:
        """Return the violation as a JSON object."""
        return {
            'record_stamp_ns': self.record_stamp_ns,
            'gate': self.gate,
            'kind': self.kind.value,
            'postcondition': self.postcondition,
            'observed': dict(self.observed),
        }


class GateRecordFacts(Protocol):
    """What the judge reads of a gate record (GateEmission; times in nanoseconds)."""

    @property
    def gate(self) -> str:
        """Which gate sent it (records of one gate are judged in the order it sent them)."""
        ...

    @property
    def stamp_ns(self) -> int:
        """``header.stamp``: when the gate sent the output."""
        ...

    @property
    def action(self) -> int:
        """``action`` (GateAction)."""
        ...

    @property
    def reason(self) -> str:
        """``reason``."""
        ...

    @property
    def mode(self) -> str:
        """``mode``: 'px4' or 'twist'."""
        ...

    @property
    def output_topic(self) -> str:
        """``output_topic``."""
        ...

    @property
    def has_actuation(self) -> bool:
        """``has_actuation``."""
        ...

    @property
    def actuation_stamp_ns(self) -> int:
        """``actuation_stamp``: the cycle stamp of the actuation acted on."""
        ...

    @property
    def rationale_sha256(self) -> str:
        """``rationale_sha256`` of the actuation acted on."""
        ...

    @property
    def decision_kind(self) -> int:
        """``decision_kind`` of the actuation acted on."""
        ...

    @property
    def command_kind(self) -> int:
        """``command_kind`` of the actuation acted on."""
        ...

    @property
    def actuation_received_ns(self) -> int:
        """``actuation_received``: when the gate received it."""
        ...

    @property
    def timeout_s(self) -> float:
        """``timeout_s``."""
        ...

    @property
    def velocity(self) -> tuple[float, ...]:
        """``velocity`` (PX4 mode; NaN = not controlled)."""
        ...

    @property
    def twist_linear(self) -> tuple[float, ...]:
        """``twist.linear`` as (x, y, z)."""
        ...

    @property
    def twist_angular(self) -> tuple[float, ...]:
        """``twist.angular`` as (x, y, z)."""
        ...

    @property
    def vehicle_command(self) -> int:
        """``vehicle_command``."""
        ...


class CitedActuationFacts(Protocol):
    """What the judge reads of a recorded actuation: its decision, command and chain claim.

    And when the recorder logged it (None: not known to the caller; the verifier always
    knows it).
    """

    @property
    def decision_kind(self) -> int:
        """``A_t.decision.kind``."""
        ...

    @property
    def command_kind(self) -> int:
        """``A_t.command.kind``."""
        ...

    @property
    def rationale_sha256(self) -> str:
        """``A_t.rationale_sha256``."""
        ...

    @property
    def log_time_ns(self) -> int | None:
        """The recorder's log time of the actuation."""
        ...


@dataclass(frozen=True, slots=True)
class CitedActuationView:
    """A recorded actuation reduced to what the gate judge reads (a ``CitedActuationFacts``)."""

    decision_kind: int
    command_kind: int
    rationale_sha256: str
    log_time_ns: int | None = None


@dataclass(frozen=True, slots=True)
class NewerActuation:
    """An actuation newer (by stamp) than the one a record cites, as the recorder logged it."""

    stamp_ns: int
    log_time_ns: int
    decision_kind: int
    command_kind: int


#: The configured timeout when the run's configuration does not give the gate's.
DEFAULT_TIMEOUT_NS = round(DEFAULT_TIMEOUT_S * 1e9)


def timeout_ns_of(timeout_s: float) -> int | None:
    """Return the gate's timeout in nanoseconds, or None when it is not a positive finite value."""
    if not math.isfinite(timeout_s) or timeout_s <= 0.0:
        return None
    timeout_ns = round(timeout_s * 1e9)
    return timeout_ns if timeout_ns > 0 else None


def is_hold(record: GateRecordFacts) -> bool:
    """True when the output moves nothing: velocity all zero or NaN, and a zero twist.

    Mode-independent on purpose: in PX4 mode the twist fields are zero, in twist mode the
    velocity is; a record whose mode field is garbled is still judged on what it sent.
    """
    return (all(value == 0.0 or math.isnan(value) for value in record.velocity)
            and all(value == 0.0 for value in (*record.twist_linear, *record.twist_angular)))


def judge_gate(
    record: GateRecordFacts,
    cited: Sequence[CitedActuationFacts] = (),
    *,
    lookup: CitedLookup = CitedLookup.RECORDED,
    latest_cited_ns: int | None = None,
    timeout_ns: int = DEFAULT_TIMEOUT_NS,
    record_log_time_ns: int | None = None,
    newer: NewerActuation | None = None,
) -> tuple[GateViolation, ...]:
    """Judge one gate record against GATE-v1; return the violations (maybe none).

    `cited` holds the recorded actuations with stamp ``record.actuation_stamp_ns`` (when
    `lookup` is RECORDED); `latest_cited_ns` is the newest actuation stamp an earlier record
    of the same gate cited (None before the first). G4 is judged on every record that cites
    an actuation; then by action: PASSED G1-G3, HELD G5, VEHICLE_COMMAND G6, any other G0.

    G3 is judged with `timeout_ns`, the configured timeout (the record's ``timeout_s`` must
    equal it), and, given the recorder's log time of the record (`record_log_time_ns`), by
    the recorder's clock: the cited actuation's log time (`cited` items' ``log_time_ns``)
    and `newer`, the earliest logged actuation newer than the cited one that may not pass.
    """
    if timeout_ns <= 0:
        raise ValueError(f'the configured gate timeout must be positive, got {timeout_ns} ns')
    judged = _Judged(record)
    if (record.has_actuation and latest_cited_ns is not None
            and record.actuation_stamp_ns < latest_cited_ns):
        judged.add(GateViolationKind.ACTUATION_WENT_BACKWARDS, 'G4',
                   ('latest_cited_ns', latest_cited_ns))
    if record.action == GateAction.PASSED:
        _judge_passed(judged, cited, lookup)
        _judge_fresh(judged, cited, timeout_ns, record_log_time_ns, newer)
    elif record.action == GateAction.HELD:
        if not is_hold(record):
            judged.add(GateViolationKind.HELD_OUTPUT_MOVES, 'G5',
                       ('mode', record.mode), ('output_topic', record.output_topic),
                       ('velocity', _vector(record.velocity)),
                       ('twist_linear', _vector(record.twist_linear)),
                       ('twist_angular', _vector(record.twist_angular)))
    elif record.action == GateAction.VEHICLE_COMMAND:
        _judge_vehicle_command(judged, cited, lookup)
    else:
        judged.add(GateViolationKind.UNKNOWN_ACTION, 'G0')
    return tuple(judged.found)


class GateJudge(Protocol):
    """The signature of ``judge_gate``."""

    def __call__(
        self,
        record: GateRecordFacts,
        cited: Sequence[CitedActuationFacts] = (),
        *,
        lookup: CitedLookup = CitedLookup.RECORDED,
        latest_cited_ns: int | None = None,
        timeout_ns: int = DEFAULT_TIMEOUT_NS,
        record_log_time_ns: int | None = None,
        newer: NewerActuation | None = None,
    ) -> tuple[GateViolation, ...]:
        """Judge one record."""
        ...


@dataclass(frozen=True, slots=True)
class RecordProperty:
    """A property judged record by record (GATE-v1): its version string and its judge."""

    version: str
    judge: GateJudge


GATE_V1 = RecordProperty(GATE_VERSION, judge_gate)


class _Judged:
    """The violations found at one record, each with the record's common values first."""

    def __init__(self, record: GateRecordFacts) -> None:
        self.record = record
        self.found: list[GateViolation] = []
        self._common: tuple[tuple[str, ObservedValue], ...] = (
            ('action', kind_name(GateAction, record.action)),
            ('reason', record.reason),
            ('has_actuation', record.has_actuation),
            ('actuation_stamp_ns', record.actuation_stamp_ns),
            ('decision_kind', kind_name(DecisionKind, record.decision_kind)),
            ('command_kind', kind_name(ActuatorCommandKind, record.command_kind)),
        )

    def add(self, kind: GateViolationKind, postcondition: str,
            *extra: tuple[str, ObservedValue]) -> None:
        self.found.append(GateViolation(self.record.stamp_ns, self.record.gate, kind,
                                        postcondition, (*self._common, *extra)))


def _chain(
    judged: _Judged,
    cited: Sequence[CitedActuationFacts],
    lookup: CitedLookup,
    postcondition: str,
) -> CitedActuationFacts | None:
    """Return the recorded actuation the record chains to; report why there is none."""
    record = judged.record
    if lookup is CitedLookup.BEFORE_RECORDING:
        return None
    if lookup is CitedLookup.OUT_OF_REACH:
        judged.add(GateViolationKind.ACTUATION_OUT_OF_REACH, postcondition)
        return None
    matching = [item for item in cited if item.rationale_sha256 == record.rationale_sha256]
    if matching:
        # Several actuations with one stamp and claim: the last, as the chain's convention.
        return matching[-1]
    if cited:
        judged.add(GateViolationKind.RATIONALE_MISMATCH, postcondition,
                   ('rationale_sha256', record.rationale_sha256),
                   ('recorded_rationale_sha256', cited[-1].rationale_sha256))
    else:
        judged.add(GateViolationKind.ACTUATION_MISSING, postcondition,
                   ('rationale_sha256', record.rationale_sha256))
    return None


def _recorded_kinds(actuation: CitedActuationFacts) -> tuple[tuple[str, ObservedValue], ...]:
    return (('recorded_decision_kind', kind_name(DecisionKind, actuation.decision_kind)),
            ('recorded_command_kind', kind_name(ActuatorCommandKind, actuation.command_kind)))


def _kinds_match(record: GateRecordFacts, actuation: CitedActuationFacts) -> bool:
    return (record.decision_kind, record.command_kind) == (actuation.decision_kind,
                                                           actuation.command_kind)


def _judge_passed(
    judged: _Judged, cited: Sequence[CitedActuationFacts], lookup: CitedLookup
) -> None:
    record = judged.record
    if not record.has_actuation:
        # Nothing was acted on: G2 and G3 have nothing to be judged on.
        judged.add(GateViolationKind.NO_ACTUATION_CITED, 'G1')
        return
    actuation = _chain(judged, cited, lookup, 'G1')
    if actuation is not None:
        if not _kinds_match(record, actuation):
            judged.add(GateViolationKind.KINDS_MISMATCH, 'G2', *_recorded_kinds(actuation))
        if not may_pass(actuation.decision_kind, actuation.command_kind):
            judged.add(GateViolationKind.PASSED_NOT_PROCEED, 'G2', *_recorded_kinds(actuation))
    elif not may_pass(record.decision_kind, record.command_kind):
        # No recorded actuation to judge by: the gate's own account still condemns it.
        judged.add(GateViolationKind.PASSED_NOT_PROCEED, 'G2')


def _judge_fresh(
    judged: _Judged,
    cited: Sequence[CitedActuationFacts],
    timeout_ns: int,
    record_log_time_ns: int | None,
    newer: NewerActuation | None,
) -> None:
    """G3 on a PASSED record: the configured timeout, the gate's account, the recorder's."""
    record = judged.record
    if not record.has_actuation:
        return
    claimed_ns = timeout_ns_of(record.timeout_s)
    if claimed_ns is None:
        judged.add(GateViolationKind.INVALID_TIMEOUT, 'G3', ('timeout_s', repr(record.timeout_s)))
    elif claimed_ns != timeout_ns:
        judged.add(GateViolationKind.TIMEOUT_MISMATCH, 'G3',
                   ('timeout_s', repr(record.timeout_s)), ('timeout_ns', timeout_ns))
    if not is_fresh(record.actuation_received_ns, record.stamp_ns, timeout_ns):
        # Its own account condemns it (it cannot acquit it: the recorder's clock does).
        judged.add(GateViolationKind.ACTUATION_STALE, 'G3',
                   ('actuation_received_ns', record.actuation_received_ns),
                   ('age_ns', record.stamp_ns - record.actuation_received_ns),
                   ('timeout_ns', timeout_ns))
    if record_log_time_ns is None:
        return
    logged = [item.log_time_ns for item in cited
              if item.rationale_sha256 == record.rationale_sha256 and item.log_time_ns is not None]
    if logged:
        # The first copy: a later one (a replay) does not make the actuation any younger.
        first = min(logged)
        age_ns = record_log_time_ns - first
        if age_ns > timeout_ns + TRANSPORT_BOUND_NS:
            judged.add(GateViolationKind.STALE_IN_LOG_TIME, 'G3',
                       ('record_log_time_ns', record_log_time_ns),
                       ('actuation_log_time_ns', first), ('log_age_ns', age_ns),
                       ('timeout_ns', timeout_ns), ('transport_bound_ns', TRANSPORT_BOUND_NS))
    if (newer is not None and newer.stamp_ns > record.actuation_stamp_ns
            and not may_pass(newer.decision_kind, newer.command_kind)
            and record_log_time_ns - newer.log_time_ns > TRANSPORT_BOUND_NS):
        judged.add(GateViolationKind.SUPERSEDED_BY_CONSERVATIVE, 'G3',
                   ('record_log_time_ns', record_log_time_ns),
                   ('newer_actuation_stamp_ns', newer.stamp_ns),
                   ('newer_actuation_log_time_ns', newer.log_time_ns),
                   ('newer_decision_kind', kind_name(DecisionKind, newer.decision_kind)),
                   ('newer_command_kind', kind_name(ActuatorCommandKind, newer.command_kind)),
                   ('transport_bound_ns', TRANSPORT_BOUND_NS))


def _judge_vehicle_command(
    judged: _Judged, cited: Sequence[CitedActuationFacts], lookup: CitedLookup
) -> None:
    record = judged.record
    if not record.has_actuation:
        judged.add(GateViolationKind.NO_ACTUATION_CITED, 'G6',
                   ('vehicle_command', record.vehicle_command))
        return
    actuation = _chain(judged, cited, lookup, 'G6')
    command_kind = record.command_kind
    if actuation is not None:
        command_kind = actuation.command_kind
        if not _kinds_match(record, actuation):
            judged.add(GateViolationKind.KINDS_MISMATCH, 'G6', *_recorded_kinds(actuation))
    if record.mode == 'ardupilot':
        _judge_mode_switch(judged, command_kind)
        return
    expected = vehicle_command_for(command_kind)
    values = (('vehicle_command', record.vehicle_command), ('expected_vehicle_command', expected))
    if record.vehicle_command not in VEHICLE_COMMANDS:
        judged.add(GateViolationKind.INVALID_VEHICLE_COMMAND, 'G6', *values)
    elif record.vehicle_command != expected:
        judged.add(GateViolationKind.VEHICLE_COMMAND_MISMATCH, 'G6', *values)


def _judge_mode_switch(judged: _Judged, command_kind: int) -> None:
    """G6 in ardupilot mode: the Copter mode asked is the one the actuation names.

    LAND: LAND (9); RETURN_TO_LAUNCH: RTL (6); any other command of an actuation that may not
    pass: a hold mode, BRAKE (17) or LOITER (5) (the gate's ``hold_mode``); a PROCEED with
    CONTINUE_MISSION names no mode.
    """
    record = judged.record
    mode = record.vehicle_command
    if command_kind == ActuatorCommandKind.LAND:
        expected: frozenset[int] = frozenset({COPTER_LAND})
    elif command_kind == ActuatorCommandKind.RETURN_TO_LAUNCH:
        expected = frozenset({COPTER_RTL})
    elif may_pass(record.decision_kind, command_kind):
        expected = frozenset()
    else:
        expected = ARDUPILOT_HOLD_MODES
    values = (('vehicle_command', mode), ('expected_vehicle_command', _modes(expected)))
    if mode not in ARDUPILOT_MODES:
        judged.add(GateViolationKind.INVALID_VEHICLE_COMMAND, 'G6', *values)
    elif mode not in expected:
        judged.add(GateViolationKind.VEHICLE_COMMAND_MISMATCH, 'G6', *values)


def _modes(modes: frozenset[int]) -> str:
    return ' or '.join(str(mode) for mode in sorted(modes)) or 'none'


def _vector(values: Sequence[float]) -> str:
    return '[' + ', '.join(repr(float(value)) for value in values) + ']'
