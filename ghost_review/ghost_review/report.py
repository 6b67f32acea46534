"""report.html: one self-contained page per flight (inline CSS and SVG, no script, no URL)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from html import escape
import math

from ghost_core.assessment import REASON_ESTIMATOR_INVALID, REASON_NO_COVARIANCE
from ghost_core.calibration import REASON_DOWNGRADE
from ghost_verify import LinkRecord

from .episodes import Episode, fix_ages, lead_text, lead_time, seconds_text
from .flight import BLOCKS, CONTEXT_FIELDS, CycleRow
from .review import FlightReview
from .svg import (
    Axis,
    bands,
    DECISION_COLOURS,
    GATE_COLOURS,
    hline,
    LABEL_HEIGHT,
    Panel,
    series_path,
    svg,
    time_ticks,
)

__all__ = ['report_html']

_NO_SIGMA = {REASON_NO_COVARIANCE, *REASON_ESTIMATOR_INVALID.values()}
_EVENT_COLOURS = {'failsafe': '#d32f2f', 'nav_state': '#1e88e5', 'position_invalid': '#e65100',
                  'position_valid': '#2e7d32', 'ekf_reset': '#6a1b9a', 'log_message': '#546e7a'}
#: PX4 events listed in the table (all are marked on the lane).
MAX_EVENT_ROWS = 400
_CSS = """
body{font:13px/1.4 system-ui,sans-serif;margin:16px;color:#212121}
h1{font-size:20px;margin:0 0 8px}h2{font-size:16px;margin:18px 0 6px}
dl{display:grid;grid-template-columns:max-content auto;gap:2px 12px;margin:0}
dt{font-weight:600}dd{margin:0}ul.verdicts{margin:0;padding-left:18px}
.vacuous{color:#8d6e63}.badge{background:#efebe9;border-radius:3px;padding:0 4px;font-size:11px}
svg.lane{display:block;margin:2px 0}.lane-title{font-size:11px;font-weight:600}
.grid{stroke:#e0e0e0}.tick{font-size:10px;fill:#616161}.boot{fill:#9e9e9e}
.ref{font-size:10px;fill:#616161}.known{stroke:#43a047;stroke-dasharray:4 3}
.uncertain{stroke:#e53935;stroke-dasharray:4 3}.sd{stroke:#9e9e9e;stroke-dasharray:2 3}
.hyst{fill:#fff3e0}.drift{fill:#ffcdd2;opacity:.7}.nosigma{fill:#cfd8dc}
.series{fill:none;stroke:#1565c0;stroke-width:1}
table{border-collapse:collapse;margin:4px 0}td,th{border:1px solid #e0e0e0;padding:2px 6px;
vertical-align:top;text-align:left}th{background:#fafafa}code{font-size:11px}
.legend span{display:inline-block;padding:0 6px;margin-right:4px;color:#fff;border-radius:3px}
"""


def _s(value: float) -> str:
    return seconds_text(value, 2)


def _header(review: FlightReview, span_s: float, t0_ns: int) -> str:
    config = review.config.pipeline
    items = [('flight', review.name), ('input', review.source),
             ('vehicle', review.log.vehicle if review.log else 'not stated (no PX4 log)'),
             ('PX4 version', review.log.px4_version if review.log else 'not stated'),
             ('log span', f'{span_s:.1f} s, stamps {t0_ns / 1e9:.3f} s to '
                          f'{t0_ns / 1e9 + span_s:.3f} s (boot time for a PX4 log); '
                          f'{len(review.data.cycles)} cycles')]
    rows = review.data.cycles
    mkw = next(((r.min_outcomes, r.downgrade_threshold, r.window_size) for r in rows
                if r.min_outcomes is not None), None)
    setting = f'accuracy profile {review.config.profile}'
    if mkw is not None:
        setting += f'; M={mkw[0]}, K={mkw[1]}, W={mkw[2]} (recorded)'
    if config is not None:
        t = config.thresholds
        setting += '; thresholds ' + ', '.join(
            f'{name} KNOWN ≤ {getattr(t, name).known_max_std:g} {unit}, UNKNOWN > '
            f'{getattr(t, name).uncertain_max_std:g} {unit}' for name, unit in BLOCKS)
        setting += (f'; unconfirmed horizon {t.unconfirmed_horizon_ns / 1e9:g} s; hysteresis '
                    f'margin {t.hysteresis.recovery_margin:g}')
    setting += f' (source: {review.config.source})'
    items.append(('configuration', setting))
    items.append(('decision context', _context_summary(rows)))
    body = ''.join(f'<dt>{escape(k)}</dt><dd>{escape(v)}</dd>' for k, v in items)
    verdicts = ''.join(
        f'<li class="verdict{" vacuous" if "vacuous" in line else ""}">{escape(line)}'
        f'{" <span class=badge>vacuous</span>" if "vacuous" in line else ""}</li>'
        for line in review.verdict_lines)
    return (f'<h1>Ghost flight review: {escape(review.name)}</h1><dl>{body}<dt>verdicts</dt>'
            f'<dd><ul class="verdicts" id="verdicts">{verdicts}</ul></dd></dl>')


def _context_summary(rows: Sequence[CycleRow]) -> str:
    decided = [row for row in rows if row.decision is not None]
    parts = []
    for name in CONTEXT_FIELDS:
        counts: dict[str, int] = {}
        for row in decided:
            value = (row.context or {}).get(name, 'unknown')
            counts[value] = counts.get(value, 0) + 1
        shown = ', '.join(f'{value} {100 * n / max(len(decided), 1):.0f} %'
                          for value, n in sorted(counts.items()))
        parts.append(f'{name}: {shown or "unknown"}')
    return '; '.join(parts)


def _runs(times: Sequence[float], states: Sequence[str | None], end_s: float
          ) -> Iterator[tuple[float, float, str]]:
    """(start s, end s, state) of each run of equal non-None states."""
    start = 0
    for index in range(1, len(states) + 1):
        if index == len(states) or states[index] != states[start]:
            if states[start] is not None:
                stop = times[index] if index < len(times) else end_s
                yield times[start], stop, str(states[start])
            start = index


def _timeline(axis: Axis, times: list[float], rows: Sequence[CycleRow], t0_ns: int) -> str:
    runs = [(a, b, state, f'{state}: {a:.2f} s to {b:.2f} s') for a, b, state in
            _runs(times, [row.decision for row in rows], axis.span_s)]
    legend = ''.join(f'<span style="background:{colour}">{name}</span>'
                     for name, colour in DECISION_COLOURS.items())
    body = (time_ticks(axis, t0_ns, 22, 34, boot=True)
            + bands(axis, runs, 22, 34, DECISION_COLOURS, 'band'))
    return (f'<h2>Decision timeline</h2><div class="legend">{legend}</div>'
            f'<p class="tick">seconds since the first cycle; grey labels: the bag\'s stamps '
            f'(PX4 time since boot for a PX4 log)</p>' + svg('timeline', 84, 'decision', body))


def _sigma_lane(axis: Axis, times: list[float], rows: Sequence[CycleRow], block: str,
                unit: str, review: FlightReview) -> str:
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
    body = time_ticks(axis, 0, panel.top, panel.height, boot=False)
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
    gaps = [(a, b, state, f'{block}: {state}') for a, b, state in
            _runs(times, missing, axis.span_s)]
    body += bands(axis, gaps, panel.top + panel.height - 6, 6, {}, 'nosigma')
    body += f'<path class="series" d="{series_path(axis, panel, times, values)}"/>'
    body += (f'<text class="ref" x="4" y="30">{panel.high:g} {unit}</text>'
             f'<text class="ref" x="4" y="{panel.top + panel.height}">{panel.low:g}</text>')
    return svg(f'sigma-{block}', panel.top + panel.height + 16, f'σ {block} ({unit}, log)', body)


def _distance_lane(axis: Axis, times: list[float], rows: Sequence[CycleRow]) -> str:
    values = [row.normalised_distance for row in rows]
    seen = [v for v in values if v is not None and math.isfinite(v)]
    panel = Panel(0.0, max(6.0, min(max(seen, default=0.0) * 1.1, 20.0)))
    drift = [(a, b, state, f'drift detected (calibrated downgrade): {a:.2f} s to {b:.2f} s')
             for a, b, state in _runs(times, ['drift' if row.adjustment_reason ==
                                              REASON_DOWNGRADE else None for row in rows],
                                      axis.span_s)]
    body = (time_ticks(axis, 0, panel.top, panel.height, boot=False)
            + bands(axis, drift, panel.top, panel.height, {'drift': '#ffcdd2'}, 'drift'))
    for level in (1, 3, 5):
        body += hline(panel, level, f'{level}σ', 'sd')
    body += f'<path class="series" d="{series_path(axis, panel, times, values)}"/>'
    return svg('distance', panel.top + panel.height + 16,
               f'normalised distance (clipped at {panel.high:g})', body)


def _fix_age_lane(axis: Axis, times: list[float], rows: Sequence[CycleRow],
                  review: FlightReview) -> str:
    ages = fix_ages(rows)
    config = review.config.pipeline
    horizon = config.thresholds.unconfirmed_horizon_ns / 1e9 if config is not None else 0.0
    seen = [a for a in ages if a is not None]
    panel = Panel(0.0, max(max(seen, default=1.0), horizon, 0.5) * 1.1, height=70)
    body = time_ticks(axis, 0, panel.top, panel.height, boot=False)
    if horizon:
        body += hline(panel, horizon, f'horizon {horizon:g} s', 'uncertain')
    body += f'<path class="series" d="{series_path(axis, panel, times, ages)}"/>'
    title = 'age of the last fix (s)' + ('' if seen else ': no fix used')
    return svg('fix-age', panel.top + panel.height + 16, title, body)


def _events_lane(axis: Axis, review: FlightReview, t0_ns: int) -> str:
    if review.log is None:
        return ''
    marks: dict[tuple[int, str], list[str]] = {}
    for event in review.log.events:
        t = (event.time_ns - t0_ns) / 1e9
        marks.setdefault((round(axis.x(t)), event.kind), []).append(
            f'{t:.2f} s: {event.kind}: {event.detail}')
    kinds = sorted({kind for _, kind in marks})
    body = time_ticks(axis, 0, 20, 16 * max(len(kinds), 1), boot=False)
    for (x, kind), tips in marks.items():
        y = 20 + 16 * kinds.index(kind)
        body += (f'<rect class="event" data-kind="{kind}" x="{x - 1}" y="{y}" width="3" '
                 f'height="13" fill="{_EVENT_COLOURS.get(kind, "#000")}"><title>'
                 f'{escape(chr(10).join(tips[:20]))}</title></rect>')
    body += ''.join(f'<text class="ref" x="4" y="{32 + 16 * i}">{kind}</text>'
                    for i, kind in enumerate(kinds))
    return svg('px4-events', 16 * max(len(kinds), 1) + 38, 'PX4 events', body)


def _gate_lane(axis: Axis, review: FlightReview, t0_ns: int) -> str:
    gates = review.data.gates
    if not gates:
        return ''
    times = [(gate.stamp_ns - t0_ns) / 1e9 for gate in gates]
    runs = [(a, b, state, f'gate {state}: {a:.2f} s to {b:.2f} s') for a, b, state in
            _runs(times, [gate.action for gate in gates], max(times[-1], axis.span_s))]
    body = time_ticks(axis, 0, 20, 20, boot=False) + bands(axis, runs, 20, 20, GATE_COLOURS,
                                                             'gate')
    return svg('gate', 56, f'command gate ({len(gates)} records)', body)


def _episode_rows(review: FlightReview, t0_ns: int) -> str:
    traced = {link.timestamp_ns: link for link in review.data.trace.links
              if link.link.value == 'actuation_to_rationale'}
    out = []
    for number, episode in enumerate(review.episodes, 1):
        out.append(_episode_row(number, episode, t0_ns, traced))
    return ''.join(out)


def _episode_row(number: int, episode: Episode, t0_ns: int,
                 traced: Mapping[int, LinkRecord]) -> str:
    start, end = (episode.start_ns - t0_ns) / 1e9, (episode.end_ns - t0_ns) / 1e9
    link = traced.get(episode.actuation_stamp_ns or -1)
    status = None if link is None else link.chain_status.value
    address = (f'<code>{escape(episode.actuation_sha256)}</code> (actuation at '
               f'{(episode.actuation_stamp_ns or 0) / 1e9:.3f} s; link '
               f'{escape(status or "not traced")})' if episode.actuation_sha256 else 'none')
    chain = ' → '.join(f'<span class="cause">{escape(text)}</span>' for text in episode.causes)
    return (f'<tr class="episode" data-decision="{episode.decision}" '
            f'data-start-ns="{episode.start_ns}" data-end-ns="{episode.end_ns}">'
            f'<td>{number}</td><td>{_s(start)} s<br><span class="tick">'
            f'{episode.start_ns / 1e9:.3f}</span></td><td>{_s(end)} s'
            f'{" (end of log)" if episode.open_ended else ""}<br>'
            f'<span class="tick">{episode.end_ns / 1e9:.3f}</span></td><td>{_s(end - start)} s'
            f'</td><td>{episode.decision}</td><td>{chain}</td><td>{address}</td></tr>')


def _events_table(review: FlightReview, t0_ns: int) -> str:
    if review.log is None:
        return ''
    rows = []
    for event in review.log.events[:MAX_EVENT_ROWS]:
        lead = '' if not event.safety else lead_text(
            lead_time(review.data.cycles, event.time_ns),
            'none (PROCEED then and after, or before the first decision)')
        rows.append(f'<tr><td>{_s((event.time_ns - t0_ns) / 1e9)}</td>'
                    f'<td>{event.time_ns / 1e9:.3f}</td><td>{escape(event.kind)}</td>'
                    f'<td>{escape(event.detail)}</td><td>{lead}</td></tr>')
    more = len(review.log.events) - MAX_EVENT_ROWS
    note = f'<p>… and {more} more events (all are marked above)</p>' if more > 0 else ''
    return ('<h2>PX4 events</h2><table id="events"><tr><th>s</th><th>boot s</th><th>kind</th>'
            '<th>detail</th><th>Ghost lead (safety events)</th></tr>' + ''.join(rows)
            + '</table>' + note)


def report_html(review: FlightReview) -> str:
    """The whole report of one flight as one HTML document."""
    rows = review.data.cycles
    t0_ns = rows[0].stamp_ns if rows else 0
    span_s = (rows[-1].stamp_ns - t0_ns) / 1e9 if rows else 0.0
    axis = Axis(span_s)
    times = [(row.stamp_ns - t0_ns) / 1e9 for row in rows]
    lanes = [_timeline(axis, times, rows, t0_ns), '<h2>On the same time axis</h2>']
    lanes += [_sigma_lane(axis, times, rows, block, unit, review) for block, unit in BLOCKS]
    lanes += [_distance_lane(axis, times, rows), _fix_age_lane(axis, times, rows, review),
              _events_lane(axis, review, t0_ns), _gate_lane(axis, review, t0_ns)]
    episodes = (f'<h2>Episodes ({len(review.episodes)} not PROCEED)</h2><table id="episodes">'
                '<tr><th>#</th><th>start</th><th>end</th><th>duration</th><th>decision</th>'
                '<th>cause chain</th><th>first actuation (rationale_sha256, as '
                'trace_decisions lists it)</th></tr>' + _episode_rows(review, t0_ns)
                + '</table>')
    return ('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            f'<title>Ghost review: {escape(review.name)}</title><style>{_CSS}</style></head>'
            f'<body>{_header(review, span_s, t0_ns)}{"".join(lanes)}{episodes}'
            f'{_events_table(review, t0_ns)}<p class="tick">One row per cycle: '
            '<a href="decisions.csv">decisions.csv</a>.</p></body></html>\n')
