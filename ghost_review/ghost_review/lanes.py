"""The report's plots: one lane per signal on the flight's time axis, each with its legend.

Every band, bar, line and marker a lane draws carries a key (its class, or its data-state or
data-credit for coloured marks) that its legend lists, so nothing drawn is unexplained
(test_report_browser.py checks it in Chromium). Log axes get one grid line and one label per
decade. The normalised distance is drawn on a log axis: on a consistent flight its median can
be a few thousandths of a σ, which a 0-6 linear axis draws flat on the axis (docs/review.md).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from html import escape
import math

from ghost_core.assessment import REASON_ESTIMATOR_INVALID, REASON_NO_COVARIANCE
from ghost_core.calibration import REASON_DOWNGRADE

from .episodes import fix_ages
from .flight import CycleRow
from .review import FlightReview
from .svg import (
    Axis,
    bands,
    DECISION_COLOURS,
    GATE_COLOURS,
    hline,
    LABEL_HEIGHT,
    log_ticks,
    Panel,
    series_path,
    svg,
    time_ticks,
)

__all__ = ['CREDIT_COLOURS', 'distance_lane', 'events_lane', 'fix_age_lane', 'gate_lane',
           'runs', 'sigma_lane', 'timeline']

_NO_SIGMA = {REASON_NO_COVARIANCE: 'no covariance given',
             **{reason: 'the estimator flags it invalid' for reason
                in REASON_ESTIMATOR_INVALID.values()}}
#: Event marks by what the lead does with them (ghost_review.events.CREDITED).
CREDIT_COLOURS = {'credited': '#d32f2f', 'listed-failsafe': '#ef6c00', 'other': '#78909c'}
_CREDIT_TEXT = {'credited': "navigation or estimator event: Ghost's lead is measured",
                'listed-failsafe': 'failsafe of another cause: listed, not credited',
                'other': 'mode change, recovery or message'}
#: Lowest decade the distance axis shows (a distance of 0 is drawn on it).
MIN_DISTANCE = 1e-4
_SERIES = 'stroke:#1565c0;height:2px;margin-top:5px'
_DASH = 'border-top:2px dashed {colour};height:0;margin-top:6px'


def runs(times: Sequence[float], states: Sequence[str | None], end_s: float
         ) -> Iterator[tuple[float, float, str]]:
    """(start s, end s, state) of each run of equal non-None states."""
    start = 0
    for index in range(1, len(states) + 1):
        if index == len(states) or states[index] != states[start]:
            if states[start] is not None:
                stop = times[index] if index < len(times) else end_s
                yield times[start], stop, str(states[start])
            start = index


def _swatch(colour: str) -> str:
    return f'background:{colour}'


def timeline(axis: Axis, times: list[float], rows: Sequence[CycleRow], t0_ns: int) -> str:
    """The decision of every cycle as colour bands, with the bag's own stamps below."""
    found = [(a, b, state, f'{state}: {a:.2f} s to {b:.2f} s') for a, b, state in
             runs(times, [row.decision for row in rows], axis.span_s)]
    keys = [(name, _swatch(colour), name) for name, colour in DECISION_COLOURS.items()]
    body = (time_ticks(axis, t0_ns, 4, 34, boot=True)
            + bands(axis, found, 4, 34, DECISION_COLOURS, 'band'))
    return ('<h2>Decision timeline</h2><p class="tick">seconds since the first cycle; grey '
            "labels: the bag's stamps (PX4 time since boot for a PX4 log)</p>"
            + svg('timeline', 66, 'decision', body, keys))


def sigma_lane(axis: Axis, times: list[float], rows: Sequence[CycleRow], block: str,
               unit: str, review: FlightReview) -> str:
    """σ of one block on a log axis, its thresholds, hysteresis bands and σ-less stretches."""
    values: list[float | None] = []
    missing: list[str | None] = []
    for row in rows:
        entry = row.blocks.get(block) if row.blocks else None
        good = entry is not None and entry[2] not in _NO_SIGMA and math.isfinite(entry[1]) \
            and entry[1] > 0
        values.append(entry[1] if good and entry is not None else None)
        missing.append(entry[2] if entry is not None and entry[2] in _NO_SIGMA else None)
    config = review.config.pipeline
    limits = getattr(config.thresholds, block) if config is not None else None
    seen = [v for v in values if v is not None]
    marks = seen + ([limits.known_max_std, limits.uncertain_max_std] if limits else [])
    low = 10 ** math.floor(math.log10(min(marks) * 0.5)) if marks else 0.01
    high = min(10 ** math.ceil(math.log10(max(marks) * 2)) if marks else 10.0, low * 1e6)
    panel = Panel(low, high, log=True)
    body = time_ticks(axis, 0, panel.top, panel.height, boot=False) + log_ticks(panel, unit)
    keys = [('series', _SERIES.replace('stroke', 'background'), f'largest σ of the {block} '
             'block')]
    if limits is not None and config is not None:
        margin = config.thresholds.hysteresis.recovery_margin
        for bound in (limits.known_max_std, limits.uncertain_max_std):
            y0, y1 = panel.y(bound), panel.y(bound * (1 - margin))
            body += (f'<rect class="hyst" x="{axis.x(0):.1f}" y="{y0:.1f}" width="{980}" '
                     f'height="{max(y1 - y0, 0.5):.1f}"><title>hysteresis band: recovery '
                     f'needs σ ≤ {bound * (1 - margin):.3g} {unit}</title></rect>')
        # Close thresholds (velocity's 0.5 and 0.7 m/s): KNOWN's label goes under its line.
        close = panel.y(limits.known_max_std) - panel.y(limits.uncertain_max_std) < LABEL_HEIGHT
        body += hline(panel, limits.known_max_std, f'KNOWN ≤ {limits.known_max_std:g}', 'known',
                      below=close)
        body += hline(panel, limits.uncertain_max_std,
                      f'UNKNOWN > {limits.uncertain_max_std:g}', 'uncertain')
        keys += [('known', _DASH.format(colour='#43a047'), 'KNOWN threshold'),
                 ('uncertain', _DASH.format(colour='#e53935'), 'UNKNOWN threshold'),
                 ('hyst', 'background:#ffe0b2', f'hysteresis band: recovery needs σ '
                  f'{100 * margin:g} % under the threshold')]
    gaps = [(a, b, state, f'{block}: {state}') for a, b, state in
            runs(times, missing, axis.span_s)]
    body += bands(axis, gaps, panel.top + panel.height - 6, 6, {}, 'nosigma')
    if gaps:
        why = sorted({_NO_SIGMA[state] for _, _, state, _ in gaps})
        keys.append(('nosigma', 'background:#9e9e9e', f'no σ to draw: {" or ".join(why)}'))
    body += f'<path class="series" d="{series_path(axis, panel, times, values)}"/>'
    return svg(f'sigma-{block}', panel.top + panel.height + 16, f'σ {block} ({unit}, log)',
               body, keys)


def distance_lane(axis: Axis, times: list[float], rows: Sequence[CycleRow]) -> str:
    """The normalised distance of each paired outcome, on a log axis, with the drift windows."""
    values = [row.normalised_distance for row in rows]
    seen = [v for v in values if v is not None and math.isfinite(v) and v > 0]
    low = max(10 ** math.floor(math.log10(min(seen))), MIN_DISTANCE) if seen else 0.1
    high = max(10 ** math.ceil(math.log10(max(seen))), 10.0) if seen else 10.0
    panel = Panel(min(low, 0.1), min(high, 1e4), log=True)
    drift = [(a, b, state, f'drift detected (calibrated downgrade): {a:.2f} s to {b:.2f} s')
             for a, b, state in runs(times, ['drift' if row.adjustment_reason ==
                                             REASON_DOWNGRADE else None for row in rows],
                                     axis.span_s)]
    body = (time_ticks(axis, 0, panel.top, panel.height, boot=False) + log_ticks(panel, 'σ')
            + bands(axis, drift, panel.top, panel.height, {'drift': '#ffcdd2'}, 'drift'))
    for number, level in enumerate((1, 3, 5)):
        # On a log axis 1σ, 3σ and 5σ are a few pixels apart: their labels stand side by side.
        body += hline(panel, level, f'{level}σ', 'sd', inset=24 * number)
    body += f'<path class="series" d="{series_path(axis, panel, times, values)}"/>'
    keys = [('series', _SERIES.replace('stroke', 'background'),
             'normalised distance of each outcome paired with a fix'),
            ('sd', _DASH.format(colour='#9e9e9e'), '1σ, 3σ and 5σ (the drift bins)')]
    if drift:
        keys.append(('drift', 'background:#ffcdd2', 'drift detected: the calibrator '
                     'downgraded (≥ K outcomes beyond 3σ in W)'))
    median = sorted(seen)[len(seen) // 2] if seen else None
    title = 'normalised distance (σ, log' + (f'; median {median:.2g}σ)' if median else ')')
    return svg('distance', panel.top + panel.height + 16, title, body, keys)


def fix_age_lane(axis: Axis, times: list[float], rows: Sequence[CycleRow],
                 review: FlightReview) -> str:
    """Seconds since the last fix an outcome used, against the unconfirmed horizon."""
    ages = fix_ages(rows)
    config = review.config.pipeline
    horizon = config.thresholds.unconfirmed_horizon_ns / 1e9 if config is not None else 0.0
    seen = [a for a in ages if a is not None]
    panel = Panel(0.0, max(max(seen, default=1.0), horizon, 0.5) * 1.1, height=70)
    body = time_ticks(axis, 0, panel.top, panel.height, boot=False)
    keys = [('series', _SERIES.replace('stroke', 'background'), 'age of the last fix')]
    if horizon:
        body += hline(panel, horizon, f'horizon {horizon:g} s', 'uncertain')
        keys.append(('uncertain', _DASH.format(colour='#e53935'),
                     'unconfirmed horizon: older, the belief is unconfirmed'))
    body += f'<path class="series" d="{series_path(axis, panel, times, ages)}"/>'
    body += (f'<text class="tick" x="{106}" y="{panel.top + 3}" text-anchor="end">'
             f'{panel.high:.1f} s</text><text class="tick" x="106" '
             f'y="{panel.top + panel.height + 3}" text-anchor="end">0</text>')
    title = 'age of the last fix (s)' + ('' if seen else ': no fix used')
    return svg('fix-age', panel.top + panel.height + 16, title, body, keys)


def _credit(event_credited: bool, listed: bool) -> str:
    return 'credited' if event_credited else 'listed-failsafe' if listed else 'other'


def events_lane(axis: Axis, review: FlightReview, t0_ns: int) -> str:
    """The autopilot's events, one row per kind, coloured by what the lead does with them."""
    if review.log is None:
        return ''
    marks: dict[tuple[int, str, str], list[str]] = {}
    for event in review.log.events:
        t = (event.time_ns - t0_ns) / 1e9
        credit = _credit(event.credited, event.listed_failsafe)
        marks.setdefault((round(axis.x(t)), event.kind, credit), []).append(
            f'{t:.2f} s: {event.kind} ({event.event_class.value}): {event.detail}')
    kinds = sorted({kind for _, kind, _ in marks})
    top = 4
    body = time_ticks(axis, 0, top, 16 * max(len(kinds), 1), boot=False)
    for (x, kind, credit), tips in marks.items():
        y = top + 16 * kinds.index(kind)
        body += (f'<rect class="event" data-kind="{kind}" data-credit="{credit}" x="{x - 1}" '
                 f'y="{y}" width="3" height="13" fill="{CREDIT_COLOURS[credit]}"><title>'
                 f'{escape(chr(10).join(tips[:20]))}</title></rect>')
    body += ''.join(f'<text class="ref" x="4" y="{top + 11 + 16 * i}">{kind}</text>'
                    for i, kind in enumerate(kinds))
    used = {credit for _, _, credit in marks}
    keys = [(credit, _swatch(colour), _CREDIT_TEXT[credit])
            for credit, colour in CREDIT_COLOURS.items() if credit in used]
    return svg('px4-events', top + 16 * max(len(kinds), 1) + 20,
               f'{review.log.autopilot} events', body, keys)


def gate_lane(axis: Axis, review: FlightReview, t0_ns: int) -> str:
    """The command gate's records as colour bands (what it passed, held or sent)."""
    gates = review.data.gates
    if not gates:
        return ''
    times = [(gate.stamp_ns - t0_ns) / 1e9 for gate in gates]
    found = [(a, b, state, f'gate {state}: {a:.2f} s to {b:.2f} s') for a, b, state in
             runs(times, [gate.action for gate in gates], max(times[-1], axis.span_s))]
    body = time_ticks(axis, 0, 4, 20, boot=False) + bands(axis, found, 4, 20, GATE_COLOURS,
                                                            'gate')
    shown = sorted({state for _, _, state, _ in found})
    keys = [(state, _swatch(GATE_COLOURS.get(state, '#9e9e9e')), f'gate {state}')
            for state in shown]
    return svg('gate', 40, f'command gate ({len(gates)} records)', body, keys)
