"""Episodes (maximal runs of one non-PROCEED decision) and their cause chains.

Pure: computed from the cycle rows alone. Every cause text is built from a recorded reason
(the assessor's, the calibrator's, the policy's; docs/review.md lists them) and the numbers the
same cycle records; a threshold or horizon is quoted only when the configuration is known.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ghost_core.assessment import (
    REASON_BEYOND_UNCERTAIN,
    REASON_ESTIMATOR_INVALID,
    REASON_HEADING_BEYOND_UNCERTAIN,
    REASON_HYSTERESIS,
    REASON_NO_COVARIANCE,
    REASON_UNCONFIRMED,
    REASON_WITHIN_UNCERTAIN,
    ThresholdsConfig,
)
from ghost_core.calibration import REASON_DOWNGRADE

from .flight import BLOCKS, CycleRow

__all__ = ['MAX_PHASES', 'Episode', 'cycle_cause', 'drift_text', 'episodes', 'fix_ages',
           'seconds_text']

#: Cause changes listed per episode; the rest are counted.
MAX_PHASES = 8
_PROCEED = 'PROCEED'
_UNITS = dict(BLOCKS)
_INVALID = {reason: block for block, reason in REASON_ESTIMATOR_INVALID.items()}
_HELD = 'held by hysteresis until'


@dataclass(frozen=True, slots=True)
class Episode:
    """One maximal run of cycles with the same non-PROCEED decision.

    `end_ns` is the stamp of the first cycle decided otherwise, or, when the run lasts to the
    end of the recording (`open_ended`), the stamp of its last cycle. `first`/`last` index
    the decided cycles it spans. `actuation_sha256` is the rationale address the first
    actuation of the episode carries (what trace_decisions lists for it).
    """

    decision: str
    start_ns: int
    end_ns: int
    open_ended: bool
    first: int
    last: int
    causes: tuple[str, ...]
    actuation_sha256: str
    actuation_stamp_ns: int | None


def fix_ages(rows: Sequence[CycleRow]) -> list[float | None]:
    """Per cycle, seconds since the latest fix an outcome used at or before it (None: none)."""
    ages: list[float | None] = []
    last: int | None = None
    for row in rows:
        if row.fix_stamp_ns is not None and (last is None or row.fix_stamp_ns > last):
            last = row.fix_stamp_ns
        ages.append(None if last is None else (row.stamp_ns - last) / 1e9)
    return ages


def _block_text(block: str, sigma: float, reason: str, thresholds: ThresholdsConfig | None,
                age: float | None) -> str:
    unit = _UNITS.get(block, '')
    limits = None if thresholds is None else getattr(thresholds, block, None)
    if reason in (REASON_WITHIN_UNCERTAIN, REASON_BEYOND_UNCERTAIN):
        text = f'{block} σ {sigma:.3g} {unit}'
        if limits is None:
            return f'{text} ({reason})'
        bound = (limits.known_max_std if reason == REASON_WITHIN_UNCERTAIN
                 else limits.uncertain_max_std)
        return f'{text} > {bound:g} {unit}'
    if reason == REASON_HEADING_BEYOND_UNCERTAIN:
        text = f'{block} heading σ {sigma:.3g} {unit}'
        return f'{text} ({reason})' if limits is None else (
            f'{text} > {limits.uncertain_max_std:g} {unit}')
    if reason == REASON_NO_COVARIANCE:
        return f'{block}: no covariance information'
    if reason in _INVALID:
        return f'{block}: the estimator flags it invalid'
    if reason == REASON_UNCONFIRMED:
        text = f'{block} unconfirmed: last fix {age:.1f} s old' if age is not None else (
            f'{block} unconfirmed: no fix yet')
        if thresholds is not None and thresholds.unconfirmed_horizon_ns:
            text += f' > horizon {thresholds.unconfirmed_horizon_ns / 1e9:g} s'
        return text
    if reason == REASON_HYSTERESIS:
        return f'{block} held by hysteresis'
    return f'{block}: {reason}'


def drift_text(row: CycleRow) -> str:
    """The drift condition as SPEC §6 counts it: outcomes beyond 3σ (3-5σ plus beyond 5σ)."""
    within, beyond = row.beyond_3_std or 0, row.beyond_5_std or 0
    split = []
    if within:
        split.append(f'{within} in 3-5σ')
    if beyond:
        split.append(f'{beyond} beyond 5σ')
    return (f'drift: {within + beyond} of K={row.downgrade_threshold} beyond 3σ in '
            f'W={row.window_size}' + (f' ({", ".join(split)})' if split else ''))


def cycle_cause(row: CycleRow, thresholds: ThresholdsConfig | None,
                age: float | None) -> tuple[tuple[object, ...], str]:
    """(key, text) of why this cycle was not KNOWN: the same key means the same cause."""
    parts: list[str] = []
    reasons: tuple[tuple[str, str], ...] = ()
    if row.raw_level is None or row.blocks is None:
        parts.append(f'no raw assessment (decision reason {row.decision_reason or "unknown"})')
    elif row.raw_level != 'KNOWN':
        reasons = tuple(sorted((name, reason) for name, (level, _, reason)
                               in row.blocks.items() if level == row.raw_level))
        texts = [_block_text(name, row.blocks[name][1], reason, thresholds, age)
                 for name, reason in reasons]
        parts.append(f'raw {row.raw_level}: ' + '; '.join(texts))
    drift = row.adjustment_reason == REASON_DOWNGRADE
    if drift:
        parts.append(drift_text(row))
    if not parts:
        parts.append(f'decision reason {row.decision_reason or "unknown"}')
    return (row.raw_level, reasons, drift, row.decision_reason), '; '.join(parts)


def _phase_text(key: tuple[object, ...], text: str, start_s: float, end_s: float,
                first: bool) -> str:
    reasons = key[1]
    drift = key[2]
    only = {reason for _, reason in reasons} if isinstance(reasons, tuple) else set()
    if only == {REASON_HYSTERESIS} and not drift:
        return f'{_HELD} {end_s:.1f} s'
    if only == {REASON_UNCONFIRMED} and not drift and not first:
        return f'unconfirmed for {end_s - start_s:.1f} s'
    return text if first else f'{text} for {end_s - start_s:.1f} s'


def _chain(rows: Sequence[CycleRow], ages: Sequence[float | None], first: int, last: int,
           end_ns: int, t0_ns: int, thresholds: ThresholdsConfig | None) -> tuple[str, ...]:
    phases: list[tuple[tuple[object, ...], str, int, int]] = []
    for index in range(first, last + 1):
        key, text = cycle_cause(rows[index], thresholds, ages[index])
        if phases and phases[-1][0] == key:
            phases[-1] = (*phases[-1][:3], index)
        else:
            phases.append((key, text, index, index))
    texts: list[str] = []
    for number, (key, text, start, stop) in enumerate(phases[:MAX_PHASES]):
        stop_ns = rows[stop + 1].stamp_ns if stop < last else end_ns
        phase = _phase_text(key, text, (rows[start].stamp_ns - t0_ns) / 1e9,
                            (stop_ns - t0_ns) / 1e9, number == 0)
        # Blocks held one after the other are one hold, until the last of them recovers.
        if texts and phase.startswith(_HELD) and texts[-1].startswith(_HELD):
            texts[-1] = phase
        else:
            texts.append(phase)
    if len(phases) > MAX_PHASES:
        texts.append(f'… {len(phases) - MAX_PHASES} more cause changes')
    return tuple(texts)


def episodes(rows: Sequence[CycleRow], thresholds: ThresholdsConfig | None
             ) -> tuple[Episode, ...]:
    """Every episode of the decided cycles of `rows` (in stamp order), with its cause chain."""
    decided = [row for row in rows if row.decision is not None]
    if not decided:
        return ()
    ages = fix_ages(decided)
    t0 = rows[0].stamp_ns
    found: list[Episode] = []
    index = 0
    while index < len(decided):
        kind = decided[index].decision
        stop = index
        while stop + 1 < len(decided) and decided[stop + 1].decision == kind:
            stop += 1
        if kind != _PROCEED and kind is not None:
            open_ended = stop + 1 == len(decided)
            end_ns = decided[stop].stamp_ns if open_ended else decided[stop + 1].stamp_ns
            actuated = next((row for row in decided[index:stop + 1] if row.rationale_sha256),
                            None)
            found.append(Episode(
                kind, decided[index].stamp_ns, end_ns, open_ended, index, stop,
                _chain(decided, ages, index, stop, end_ns, t0, thresholds),
                actuated.rationale_sha256 if actuated else '',
                actuated.stamp_ns if actuated else None))
        index = stop + 1
    return tuple(found)


def seconds_text(seconds: float, digits: int = 1, *, sign: bool = False) -> str:
    """`seconds` with `digits` decimals (a + for positive with `sign`); never '-0.0'."""
    text = f'{seconds:+.{digits}f}' if sign else f'{seconds:.{digits}f}'
    return text if float(text) != 0 else f'{0:.{digits}f}'
