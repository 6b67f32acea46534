"""One Ghost bag read into one row per cycle, plus its gate records and decision trace.

The bag is read once, through ghost_verify's public reader (``GhostBag.events``), and the same
cycles feed ghost_verify's ``DecisionTracer``, so the content addresses shown are the ones
``trace_decisions`` reports. Every value comes from a recorded message; what a cycle lacks is
None (shown as empty or 'unknown').
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import os

from ghost_core import levels
from ghost_core.levels import ActuatorCommandKind, DecisionKind, SelfAssessmentLevel
from ghost_verify import CycleEvent, DecisionTracer, DecisionTraceReport, GhostBag
from ghost_verify.events import GateRecord, GhostMessage

__all__ = ['BLOCKS', 'CONTEXT_FIELDS', 'CycleRow', 'FlightData', 'GateRow', 'read_flight']

#: The judged blocks of a belief, with the unit of their σ.
BLOCKS = (('position', 'm'), ('velocity', 'm/s'), ('orientation', 'rad'))
#: Fields of the decision context (SPEC §3) shown when the rationale records them.
CONTEXT_FIELDS = ('flight_status', 'mission_status', 'perception_mode')
#: The ghost_core.levels catalogue naming a context field's values (read when it exists).
_CATALOGUES = {'flight_status': 'FlightStatus', 'mission_status': 'MissionStatus'}


@dataclass(frozen=True, slots=True)
class CycleRow:
    """What one cycle recorded (None: the cycle has no such message)."""

    stamp_ns: int
    raw_level: str | None = None
    #: block -> (level name, σ, reason) of the raw assessment.
    blocks: Mapping[str, tuple[str, float, str]] | None = None
    adjusted_level: str | None = None
    adjustment_reason: str | None = None
    min_outcomes: int | None = None
    downgrade_threshold: int | None = None
    window_size: int | None = None
    outcomes_considered: int | None = None
    #: The history's counts in the 3-5 σ bin and beyond 5 σ (SPEC §3: disjoint bins).
    beyond_3_std: int | None = None
    beyond_5_std: int | None = None
    #: Normalised distance of this cycle's outcome, when it was paired with a fix.
    normalised_distance: float | None = None
    #: Observation stamp of the fix this cycle's outcome used, when paired.
    fix_stamp_ns: int | None = None
    decision: str | None = None
    decision_reason: str | None = None
    command: str | None = None
    assessment_sha256: str = ''
    calibrated_sha256: str = ''
    rationale_sha256: str = ''
    context: Mapping[str, str] | None = None

    @property
    def raw_reason(self) -> str:
        """The reasons of the blocks at the overall raw level ('position:reason;...')."""
        if self.blocks is None or self.raw_level is None:
            return ''
        return ';'.join(f'{name}:{reason}' for name, (level, _, reason) in self.blocks.items()
                        if level == self.raw_level)


@dataclass(frozen=True, slots=True)
class GateRow:
    """One command gate record: when it was sent, what, and why."""

    stamp_ns: int
    action: str
    reason: str


@dataclass(frozen=True, slots=True)
class FlightData:
    """A Ghost bag as the review needs it: cycles in stamp order, gate records, the trace."""

    cycles: tuple[CycleRow, ...]
    gates: tuple[GateRow, ...]
    trace: DecisionTraceReport
    #: The thresholds' content address the first raw assessment records (None: none).
    thresholds_sha256: str | None = None


def _name(enum: type[DecisionKind] | type[SelfAssessmentLevel] | type[ActuatorCommandKind],
          value: object) -> str:
    try:
        return enum(int(value)).name  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return str(value)


def _mapping(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def _stamp(value: object) -> int | None:
    time = _mapping(value)
    sec, nanosec = time.get('sec'), time.get('nanosec')
    if isinstance(sec, int) and isinstance(nanosec, int):
        return sec * 1_000_000_000 + nanosec
    return None


def _context_value(key: str, value: object) -> str:
    """The name of a context value (its ghost_core.levels catalogue when there is one)."""
    catalogue = getattr(levels, _CATALOGUES.get(key, ''), None)
    if catalogue is not None and isinstance(value, int):
        try:
            return str(catalogue(value).name)
        except ValueError:
            return str(value)
    return str(value) if value not in ('', None) else 'unknown'


def _context(msg: Mapping[str, object]) -> dict[str, str] | None:
    """The decision context fields a rationale records, wherever it nests them; None: none."""
    found: dict[str, str] = {}
    stack = [msg]
    while stack:
        current = stack.pop()
        for key, value in current.items():
            if key in CONTEXT_FIELDS and not isinstance(value, Mapping):
                found.setdefault(key, _context_value(key, value))
            elif isinstance(value, Mapping):
                stack.append(value)
    return found or None


def _raw_fields(msg: Mapping[str, object]) -> dict[str, object]:
    blocks = {}
    for name, _ in BLOCKS:
        block = _mapping(msg.get(name))
        sigma = block.get('max_std')
        blocks[name] = (_name(SelfAssessmentLevel, block.get('level')),
                        float(sigma) if isinstance(sigma, (int, float)) else float('nan'),
                        str(block.get('reason', '')))
    return {'raw_level': _name(SelfAssessmentLevel, msg.get('overall_level')),
            'blocks': blocks}


def _calibrated_fields(msg: Mapping[str, object]) -> dict[str, object]:
    history = _mapping(msg.get('calibration_history'))
    return {
        'adjusted_level': _name(SelfAssessmentLevel, msg.get('adjusted_overall_level')),
        'adjustment_reason': str(msg.get('adjustment_reason', '')),
        'min_outcomes': msg.get('min_outcomes'),
        'downgrade_threshold': msg.get('downgrade_threshold'),
        'window_size': history.get('window_size'),
        'outcomes_considered': history.get('outcomes_considered'),
        'beyond_3_std': history.get('count_beyond_3_std'),
        'beyond_5_std': history.get('count_beyond_5_std'),
    }


def _outcome_fields(msg: Mapping[str, object]) -> dict[str, object]:
    if not msg.get('observed'):
        return {}
    distance = msg.get('position_normalised_distance')
    return {'normalised_distance': float(distance) if isinstance(distance, (int, float))
            else None,
            'fix_stamp_ns': _stamp(msg.get('observation_stamp'))}


def _rationale_fields(msg: Mapping[str, object]) -> dict[str, object]:
    decision = _mapping(msg.get('decision'))
    return {'decision': _name(DecisionKind, decision.get('kind')),
            'decision_reason': str(decision.get('reason', '')),
            'assessment_sha256': str(msg.get('self_assessment_sha256', '')),
            'calibrated_sha256': str(msg.get('calibrated_assessment_sha256', '')),
            'context': _context(msg)}


def _actuation_fields(msg: Mapping[str, object]) -> dict[str, object]:
    fields: dict[str, object] = {
        'command': _name(ActuatorCommandKind, _mapping(msg.get('command')).get('kind')),
        'rationale_sha256': str(msg.get('rationale_sha256', ''))}
    decision = _mapping(msg.get('decision'))
    if 'kind' in decision:
        fields['decision'] = _name(DecisionKind, decision.get('kind'))
    return fields


def _row(cycle: CycleEvent) -> CycleRow:
    fields: dict[str, object] = {}
    # The first message of each stream (a well-formed bag has one); the rationale's decision
    # wins over the one the actuation carries inline.
    for views, extract in ((cycle.actuations, _actuation_fields),
                           (cycle.raw_assessments, _raw_fields),
                           (cycle.calibrated, _calibrated_fields),
                           (cycle.outcomes, _outcome_fields),
                           (cycle.rationales, _rationale_fields)):
        if views:
            first = views[0]
            message = first if isinstance(first, GhostMessage) else first.message
            fields.update(extract(message.msg))
    return CycleRow(cycle.stamp_ns, **fields)  # type: ignore[arg-type]


def read_flight(bag: str | os.PathLike[str]) -> FlightData:
    """Read a Ghost bag once: its cycles by stamp, its gate records and its decision trace.

    Raises ghost_bag.errors.BagError (from ghost_verify's reader) when the bag cannot be read
    or holds no ghost topics.
    """
    reader = GhostBag(bag)
    tracer = DecisionTracer()
    rows: list[CycleRow] = []
    gates: list[GateRow] = []
    thresholds: str | None = None
    for event in reader.events():
        if isinstance(event, GateRecord):
            gates.append(GateRow(event.stamp_ns, _gate_action(event.action), event.reason))
            continue
        tracer.update(event)
        rows.append(_row(event))
        if thresholds is None and event.raw_assessments:
            thresholds = str(event.raw_assessments[0].message.msg.get('thresholds_sha256', ''))
    rows.sort(key=lambda row: row.stamp_ns)
    gates.sort(key=lambda gate: gate.stamp_ns)
    return FlightData(tuple(rows), tuple(gates), tracer.result(reader.info), thresholds)


def _gate_action(action: int) -> str:
    from ghost_core.gate import GateAction

    try:
        return GateAction(action).name
    except ValueError:
        return str(action)
