"""GATE-v1 over a bag: every recorded output of the command gate judged against its actuation.

The judgement of one record is ``ghost_core.gate_property.judge_gate``; this module feeds it
the bag's gate records (GateEmission, in the order each gate sent them) with the recorded
actuations of the cycle each one cites, in one streaming pass.

Gate records are not part of a cycle (they are stamped when sent), so the reader yields them
as they are read, while a cycle is yielded only once it is closed (bag.group_events): a record
often comes before the cycle it cites. A record that needs its actuation (PASSED, or a vehicle
command, citing one) therefore waits until that cycle has been delivered. Memory stays
bounded: the actuations of the last `reach` delivered cycles are kept (GATE_REACH, or the
``--cycle-window`` if larger), plus each gate's latest cited one (a gate stuck on a stale
actuation for an hour is still judged against the one it had). A record citing an older
actuation than that is judged ``actuation_out_of_reach``: not checked is not passing.

Freshness (G3) is judged with the timeout the gate recorded in force (its configuration
records; without one the declared default ``ghost_core.gate.DEFAULT_TIMEOUT_S``), never the
record's own, and by the recorder's clock: a PASSED record waits until an actuation logged no
earlier than itself is delivered, so that the first newer actuation it must not pass (a HOLD,
a LAND, ...) is known; per cycle, the earliest such one is kept for the last ``reach`` cycles.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from ghost_core.evidence import TRANSPORT_BOUND_NS
from ghost_core.gate import GateAction, may_pass
from ghost_core.gate_property import (
    CitedActuationView,
    CitedLookup,
    DEFAULT_TIMEOUT_NS,
    GATE_V1,
    GATE_VERSION,
    GateViolation,
    GateViolationKind,
    NewerActuation,
)
from ghost_core.properties import JsonValue

from .events import BagInfo, CycleEvent, GateRecord, ReadError
from .report_json import read_errors_to_json

__all__ = [
    'GATE_REACH',
    'GATE_VERSION',
    'GateChecker',
    'GateReport',
    'UnverifiableRecord',
]

#: How many delivered cycles' actuations the checker keeps at least (about 400 bytes each;
#: 4096 cycles are almost 7 minutes at 10 Hz).
GATE_REACH = 4096
#: At most this many violations (the first by record stamp) and unverifiable records are
#: listed in a report; all are counted.
LISTED_LIMIT = 64

_ACTION_NAMES: dict[int, str] = {GateAction.PASSED: 'passed', GateAction.HELD: 'held',
                                 GateAction.VEHICLE_COMMAND: 'vehicle_command'}
_UNKNOWN_ACTION = 'unknown'


@dataclass(frozen=True, slots=True)
class UnverifiableRecord:
    """A gate record whose actuation precedes the recording: its chain cannot be proved."""

    record_stamp_ns: int
    gate: str
    actuation_stamp_ns: int
    reason: str = 'before_recording'

    def to_json(self) -> dict[str, JsonValue]:
        """Return the record as a JSON object."""
        return {'record_stamp_ns': self.record_stamp_ns, 'gate': self.gate,
                'actuation_stamp_ns': self.actuation_stamp_ns, 'reason': self.reason}


@dataclass(frozen=True, slots=True)
class GateReport:
    """The GATE-v1 verdict over one bag.

    `records_total` counts the gate records read; GATE-v1 applies only when there is one
    (otherwise the verdict is "not applicable", never "holds"). `violations` lists the first
    `LISTED_LIMIT` violations by record stamp; `violation_counts` counts all of them.
    `unverifiable` lists records whose cited actuation precedes the bag's first cycle (the
    recording started after the gate had it; empty when strict: then they are
    ``actuation_missing``).
    """

    property_version: str
    records_total: int
    action_counts: tuple[tuple[str, int], ...]
    gates: tuple[tuple[str, int], ...]
    violations_total: int
    violation_counts: tuple[tuple[GateViolationKind, int], ...]
    violations: tuple[GateViolation, ...]
    records_unverifiable: int
    unverifiable: tuple[UnverifiableRecord, ...]
    read_errors: tuple[ReadError, ...] = ()
    strict: bool = False
    #: Per ``action/reason`` (e.g. ``held/no_actuation``), the records: what the gate let
    #: through and what it held, and why.
    reason_counts: tuple[tuple[str, int], ...] = ()

    @property
    def applicable(self) -> bool:
        """True when the bag holds gate records (GATE-v1's precondition)."""
        return self.records_total > 0

    @property
    def violated(self) -> bool:
        """True when some gate record fails GATE-v1."""
        return self.violations_total > 0

    @property
    def holds(self) -> bool:
        """True when the bag holds gate records and none fails (over what was read)."""
        return self.applicable and not self.violated

    @property
    def incomplete_input(self) -> bool:
        """True when part of the bag could not be read (see `read_errors`)."""
        return bool(self.read_errors)

    def to_json(self) -> dict[str, JsonValue]:
        """Return the report as a JSON object (see docs/properties.md for the fields)."""
        return {
            'property_version': self.property_version,
            'applicable': self.applicable,
            'holds': self.holds,
            'records_total': self.records_total,
            'action_counts': dict(self.action_counts),
            'reason_counts': dict(self.reason_counts),
            'gates': dict(self.gates),
            'violations_total': self.violations_total,
            'violation_counts': {kind.value: count for kind, count in self.violation_counts},
            'violations': [violation.to_json() for violation in self.violations],
            'violations_listed_limit': LISTED_LIMIT,
            'records_unverifiable': self.records_unverifiable,
            'unverifiable': [record.to_json() for record in self.unverifiable],
            'incomplete_input': self.incomplete_input,
            'read_errors': read_errors_to_json(self.read_errors),
            'strict': self.strict,
        }

    def summary(self) -> str:
        """Return the one-line verdict, e.g. ``GATE-v1: HOLDS (12 gate records: 8 passed, …)``."""
        if not self.applicable:
            return f'{self.property_version}: not applicable (no gate records)'
        counts = dict(self.action_counts)
        parts = [f'{counts.get("passed", 0)} passed', f'{counts.get("held", 0)} held',
                 f'{counts.get("vehicle_command", 0)} vehicle '
                 f'{"command" if counts.get("vehicle_command", 0) == 1 else "commands"}']
        if counts.get(_UNKNOWN_ACTION):
            parts.append(f'{counts[_UNKNOWN_ACTION]} unknown')
        records = 'gate record' if self.records_total == 1 else 'gate records'
        seen = f'{self.records_total} {records}: {", ".join(parts)}'
        if self.records_unverifiable:
            seen += f', {self.records_unverifiable} unverifiable'
        if not self.violated:
            return f'{self.property_version}: HOLDS ({seen})'
        detail = ', '.join(f'{count} {kind.value}' for kind, count in self.violation_counts)
        first = self.violations[0].record_stamp_ns
        return f'{self.property_version}: VIOLATED ({seen}; {detail}, the first at {first} ns)'


class GateChecker:
    """GATE-v1 over a bag's events: ``record`` and ``update`` as the reader yields them.

    ``record(gate_record)`` per gate record, in bag order; ``update(cycle)`` per cycle; then
    ``result(info)``. `reach` is how many delivered cycles' actuations are kept;
    `timeout_ns` the configured gate timeout G3 is judged with, unless `timeouts` (the gate's
    configuration records: log time, timeout) give the one in force: the latest logged
    before the gate record judged (none yet: `timeout_ns`).
    """

    def __init__(self, *, strict: bool = False, reach: int = GATE_REACH,
                 timeout_ns: int = DEFAULT_TIMEOUT_NS,
                 timeouts: Sequence[tuple[int, int]] = ()) -> None:
        if reach < 1 or timeout_ns < 1 or any(value < 1 for _, value in timeouts):
            raise ValueError(f'reach and timeouts must be at least 1, got {reach}, '
                             f'{timeout_ns}, {timeouts}')
        self._strict, self._reach, self._default_timeout_ns = strict, reach, timeout_ns
        self._timeout_logs = [log_ns for log_ns, _ in timeouts]
        self._timeout_values = [value for _, value in timeouts]
        # Per delivered cycle that has one, in stamp order: its earliest logged actuation
        # that may not pass (stamps apart for bisect).
        self._blocking: list[NewerActuation] = []
        self._blocking_stamps: list[int] = []
        # The greatest log time of the actuations delivered so far.
        self._delivered_log_ns: int | None = None
        # The actuations of the last `reach` delivered cycles that have some, oldest first,
        # and those of older cycles some gate still cites as its latest.
        self._recent: OrderedDict[int, tuple[CitedActuationView, ...]] = OrderedDict()
        self._pinned: dict[int, tuple[CitedActuationView, ...]] = {}
        self._forgotten_up_to: int | None = None
        self._first_cycle_ns: int | None = None
        self._delivered_up_to: int | None = None
        # Records waiting for the cycle they cite, with their gate's latest citation before.
        self._pending: list[tuple[GateRecord, int | None]] = []
        self._latest: dict[str, int] = {}
        self._records = 0
        self._actions: dict[str, int] = {}
        self._reasons: dict[str, int] = {}
        self._gates: dict[str, int] = {}
        self._counts: dict[GateViolationKind, int] = {}
        self._total = 0
        self._listed: list[tuple[int, int, GateViolation]] = []
        self._found = 0
        self._unverifiable_total = 0
        self._unverifiable: list[UnverifiableRecord] = []

    def record(self, record: GateRecord) -> None:
        """Judge one gate record now, or once the cycle it cites has been delivered."""
        self._records += 1
        action = _ACTION_NAMES.get(record.action, _UNKNOWN_ACTION)
        self._actions[action] = self._actions.get(action, 0) + 1
        because = f'{action}/{record.reason}'
        self._reasons[because] = self._reasons.get(because, 0) + 1
        self._gates[record.gate] = self._gates.get(record.gate, 0) + 1
        latest_before = self._latest.get(record.gate)
        if record.has_actuation:
            self._cite(record.gate, record.actuation_stamp_ns)
        needs_chain = record.has_actuation and record.action in (
            GateAction.PASSED, GateAction.VEHICLE_COMMAND)
        if not needs_chain:
            self._add(GATE_V1.judge(record, latest_cited_ns=latest_before,
                                    timeout_ns=self._timeout_at(record.message.log_time_ns),
                                    record_log_time_ns=record.message.log_time_ns))
        elif self._ready(record):
            self._judge_chained(record, latest_before)
        else:
            self._pending.append((record, latest_before))

    def _ready(self, record: GateRecord) -> bool:
        """True once the cited cycle is delivered (and, for PASSED, every actuation before it)."""
        if self._delivered_up_to is None or record.actuation_stamp_ns > self._delivered_up_to:
            return False
        if record.action != GateAction.PASSED:
            return True
        # The newer actuations logged before the record are delivered once one logged after
        # it is (the actuations of one emitter are logged in stamp order: cycles.py).
        return (self._delivered_up_to > record.actuation_stamp_ns
                and self._delivered_log_ns is not None
                and self._delivered_log_ns >= record.message.log_time_ns)

    def update(self, cycle: CycleEvent) -> None:
        """Take one delivered cycle's actuations; judge the records that waited for it."""
        if self._first_cycle_ns is None:
            self._first_cycle_ns = cycle.stamp_ns
        self._delivered_up_to = cycle.stamp_ns
        if cycle.actuations:
            self._recent[cycle.stamp_ns] = tuple(
                CitedActuationView(item.decision_kind, item.command_kind,
                                   item.rationale_sha256, item.message.log_time_ns)
                for item in cycle.actuations)
            latest_log = max(item.message.log_time_ns for item in cycle.actuations)
            if self._delivered_log_ns is None or latest_log > self._delivered_log_ns:
                self._delivered_log_ns = latest_log
            self._keep_blocking(cycle)
            while len(self._recent) > self._reach:
                stamp_ns, actuations = self._recent.popitem(last=False)
                if stamp_ns in self._latest.values():
                    self._pinned[stamp_ns] = actuations
                else:
                    self._forget(stamp_ns)
        if self._pending:
            waiting = []
            for record, latest_before in self._pending:
                if self._ready(record):
                    self._judge_chained(record, latest_before)
                else:
                    waiting.append((record, latest_before))
            self._pending = waiting

    def _keep_blocking(self, cycle: CycleEvent) -> None:
        """Keep the cycle's earliest logged actuation that may not pass, if it has one."""
        blocking = [item for item in cycle.actuations
                    if not may_pass(item.decision_kind, item.command_kind)]
        if not blocking:
            return
        first = min(blocking, key=lambda item: item.message.log_time_ns)
        self._blocking.append(NewerActuation(cycle.stamp_ns, first.message.log_time_ns,
                                             first.decision_kind, first.command_kind))
        self._blocking_stamps.append(cycle.stamp_ns)
        keep = max(self._reach, GATE_REACH)
        if len(self._blocking) > 2 * keep:
            del self._blocking[:keep]
            del self._blocking_stamps[:keep]

    def _newer_blocking(self, record: GateRecord) -> NewerActuation | None:
        """Return the first newer actuation than the cited one that may not pass.

        The first logged before the record beyond the transport bound, else the first by
        stamp (None: there is none).
        """
        index = bisect_right(self._blocking_stamps, record.actuation_stamp_ns)
        first = self._blocking[index] if index < len(self._blocking) else None
        for position in range(index, len(self._blocking)):
            item = self._blocking[position]
            if record.message.log_time_ns - item.log_time_ns > TRANSPORT_BOUND_NS:
                return item
            if item.log_time_ns >= record.message.log_time_ns:
                break
        return first

    def result(self, info: BagInfo) -> GateReport:
        """Return the frozen report for everything seen so far (this ends the stream)."""
        for record, latest_before in self._pending:
            # The cycle it cites never came: the bag holds no actuation with that stamp.
            self._judge_chained(record, latest_before)
        self._pending = []
        self._listed.sort(key=lambda item: (item[0], item[1]))
        return GateReport(
            property_version=GATE_V1.version,
            records_total=self._records,
            action_counts=tuple(sorted(self._actions.items())),
            reason_counts=tuple(sorted(self._reasons.items())),
            gates=tuple(sorted(self._gates.items())),
            violations_total=self._total,
            violation_counts=tuple(sorted(self._counts.items(), key=lambda item: item[0].value)),
            violations=tuple(item[2] for item in self._listed[:LISTED_LIMIT]),
            records_unverifiable=self._unverifiable_total,
            unverifiable=tuple(sorted(self._unverifiable,
                                      key=lambda item: item.record_stamp_ns)[:LISTED_LIMIT]),
            read_errors=info.read_errors,
            strict=self._strict,
        )

    def _cite(self, gate: str, stamp_ns: int) -> None:
        previous = self._latest.get(gate)
        if previous is not None and stamp_ns <= previous:
            return
        self._latest[gate] = stamp_ns
        if previous is not None and previous in self._pinned and (
                previous not in self._latest.values()):
            del self._pinned[previous]
            self._forget(previous)

    def _forget(self, stamp_ns: int) -> None:
        if self._forgotten_up_to is None or stamp_ns > self._forgotten_up_to:
            self._forgotten_up_to = stamp_ns

    def _judge_chained(self, record: GateRecord, latest_before: int | None) -> None:
        stamp_ns = record.actuation_stamp_ns
        cited: Sequence[CitedActuationView] = ()
        lookup = CitedLookup.RECORDED
        known = self._recent.get(stamp_ns, self._pinned.get(stamp_ns))
        if known is not None:
            cited = known
        elif self._forgotten_up_to is not None and stamp_ns <= self._forgotten_up_to:
            lookup = CitedLookup.OUT_OF_REACH
        elif (not self._strict and self._first_cycle_ns is not None
              and stamp_ns < self._first_cycle_ns):
            lookup = CitedLookup.BEFORE_RECORDING
            self._unverifiable_total += 1
            if len(self._unverifiable) < LISTED_LIMIT:
                self._unverifiable.append(
                    UnverifiableRecord(record.stamp_ns, record.gate, stamp_ns))
        newer = self._newer_blocking(record) if record.action == GateAction.PASSED else None
        self._add(GATE_V1.judge(record, cited, lookup=lookup, latest_cited_ns=latest_before,
                                timeout_ns=self._timeout_at(record.message.log_time_ns),
                                record_log_time_ns=record.message.log_time_ns, newer=newer))

    def _timeout_at(self, log_time_ns: int) -> int:
        index = bisect_right(self._timeout_logs, log_time_ns) - 1  # the one logged before
        return self._timeout_values[index] if index >= 0 else self._default_timeout_ns

    def _add(self, violations: Sequence[GateViolation]) -> None:
        for violation in violations:
            self._total += 1
            self._counts[violation.kind] = self._counts.get(violation.kind, 0) + 1
            self._listed.append((violation.record_stamp_ns, self._found, violation))
            self._found += 1
        if len(self._listed) > 2 * LISTED_LIMIT:
            # Keep only the first by record stamp: memory stays bounded.
            self._listed.sort(key=lambda item: (item[0], item[1]))
            del self._listed[LISTED_LIMIT:]

