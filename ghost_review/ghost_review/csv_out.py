"""decisions.csv: one row per cycle, time first (PlotJuggler, pandas); docs/review.md."""

from __future__ import annotations

from collections.abc import Sequence
import csv
import io
import math

from ghost_core.assessment import ThresholdsConfig
from ghost_core.levels import ActuatorCommandKind, DecisionKind, SelfAssessmentLevel

from .episodes import cycle_cause, fix_ages
from .flight import BLOCKS, CONTEXT_FIELDS, CycleRow

__all__ = ['COLUMNS', 'decisions_csv']

#: The columns, in order (docs/review.md says what each holds).
COLUMNS = (
    'time_s', 'stamp_ns',
    'raw_level', 'raw_level_code', 'raw_reason',
    'adjusted_level', 'adjusted_level_code', 'adjustment_reason',
    'decision', 'decision_code', 'decision_reason', 'command', 'command_code', 'cause',
    'normalised_distance', 'beyond_3_std', 'beyond_5_std', 'window_size', 'fix_age_s',
    *(f'{name}_sigma' for name, _ in BLOCKS),
    *CONTEXT_FIELDS,
    'assessment_sha256', 'calibrated_sha256', 'rationale_sha256',
)


def _code(enum: type[SelfAssessmentLevel] | type[DecisionKind] | type[ActuatorCommandKind],
          name: str | None) -> str:
    if name is None or name not in enum.__members__:
        return ''
    return str(int(enum[name]))


def _number(value: float | int | None) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ''
    return f'{value:.6g}' if isinstance(value, float) else str(value)


def _cause(row: CycleRow, thresholds: ThresholdsConfig | None, age: float | None) -> str:
    """Why the cycle was not KNOWN, as the episodes say it ('' for a KNOWN cycle)."""
    if row.raw_level == 'KNOWN' and row.adjusted_level == 'KNOWN':
        return ''
    return cycle_cause(row, thresholds, age)[1]


def decisions_csv(rows: Sequence[CycleRow], thresholds: ThresholdsConfig | None = None) -> str:
    """The CSV text of `rows` (in stamp order); empty cells where a cycle recorded nothing.

    `thresholds`: the configuration the bag confirms (the causes quote it), None when unknown.
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator='\n')
    writer.writerow(COLUMNS)
    t0 = rows[0].stamp_ns if rows else 0
    for row, age in zip(rows, fix_ages(rows), strict=True):
        context = row.context or {}
        sigmas = [_number(row.blocks[name][1]) if row.blocks else '' for name, _ in BLOCKS]
        writer.writerow((
            f'{(row.stamp_ns - t0) / 1e9:.9f}', row.stamp_ns,
            row.raw_level or '', _code(SelfAssessmentLevel, row.raw_level), row.raw_reason,
            row.adjusted_level or '', _code(SelfAssessmentLevel, row.adjusted_level),
            row.adjustment_reason or '',
            row.decision or '', _code(DecisionKind, row.decision), row.decision_reason or '',
            row.command or '', _code(ActuatorCommandKind, row.command),
            _cause(row, thresholds, age),
            _number(row.normalised_distance), _number(row.beyond_3_std),
            _number(row.beyond_5_std),
            _number(row.window_size), _number(age), *sigmas,
            *(context.get(name, 'unknown') for name in CONTEXT_FIELDS),
            row.assessment_sha256, row.calibrated_sha256, row.rationale_sha256,
        ))
    return out.getvalue()
