"""report.html: one self-contained page per flight (inline CSS and SVG, no script, no URL)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

from ghost_verify import LinkRecord

from .episodes import Episode, seconds_text
from .events import lead_of
from .flight import BLOCKS, CONTEXT_FIELDS, CycleRow
from .glance import checks_html, episode_anchor, failures_html, glance_html
from .lanes import distance_lane, events_lane, fix_age_lane, gate_lane, sigma_lane, timeline
from .review import FlightReview
from .svg import Axis

__all__ = ['report_html']

#: Autopilot events listed in the table (all are marked on the lane).
MAX_EVENT_ROWS = 400
#: Colours of the statuses (ghost_review.verdict.Status): a verdict takes its failing check's.
STATUS_COLOURS = {'fail': ('#b71c1c', '#ffebee'), 'limit': ('#bf360c', '#fff3e0'),
                  'pass': ('#1b5e20', '#e8f5e9'), 'info': ('#455a64', '#eceff1')}
_CSS = """
body{font:13px/1.4 system-ui,sans-serif;margin:16px;color:#212121}
h1{font-size:18px;margin:6px 0 8px}h2{font-size:16px;margin:18px 0 6px}
.glance{font-size:15px;margin:0 0 4px}.verdict{font-size:22px;font-weight:700;padding:2px 10px;
border-radius:4px;border:2px solid}.limits{font-weight:600}
.first-failure,.failure{margin:2px 0 2px 4px;font-size:14px}.limit-note{margin:4px 0 4px 4px}
dl{display:grid;grid-template-columns:max-content auto;gap:2px 12px;margin:0}
dt{font-weight:600}dd{margin:0}ul.verdicts{margin:0;padding-left:18px}
svg.lane{display:block;margin:0 0 4px}.lane-head{margin-top:6px}
.lane-title{font-size:11px;font-weight:600;margin-right:12px}
.grid{stroke:#e0e0e0}.tick{font-size:10px;fill:#616161}.boot{fill:#9e9e9e}
.ref{font-size:10px;fill:#616161}.known{stroke:#43a047;stroke-dasharray:4 3}
.uncertain{stroke:#e53935;stroke-dasharray:4 3}.sd{stroke:#9e9e9e;stroke-dasharray:2 3}
.hyst{fill:#ffe0b2;opacity:.6}.drift{fill:#ffcdd2;opacity:.7}.nosigma{fill:#9e9e9e}
.series{fill:none;stroke:#1565c0;stroke-width:1}
.legend .key{display:inline-block;margin-right:12px;font-size:11px;color:#424242}
.swatch{display:inline-block;width:14px;height:10px;margin-right:4px;vertical-align:middle}
table{border-collapse:collapse;margin:4px 0}td,th{border:1px solid #e0e0e0;padding:2px 6px;
vertical-align:top;text-align:left}th{background:#fafafa}code{font-size:11px}
tr:target{outline:3px solid #1565c0}
""" + ''.join(f'.{name}{{color:{ink}}}.verdict.{name}{{background:{paper};border-color:{ink}}}'
              for name, (ink, paper) in STATUS_COLOURS.items())


def _s(value: float) -> str:
    return seconds_text(value, 2)


def _header(review: FlightReview, span_s: float, t0_ns: int) -> str:
    config = review.config.pipeline
    items = [('flight', review.name), ('input', review.source),
             ('vehicle', review.log.vehicle if review.log else 'not stated (no autopilot log)'),
             ('autopilot', f'{review.log.autopilot} {review.log.version}' if review.log
              else 'not stated'),
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
    items += [('input warning', warning) for warning in review.warnings]
    body = ''.join(f'<dt>{escape(k)}</dt><dd>{escape(v)}</dd>' for k, v in items)
    return (f'<h1>Ghost flight review: {escape(review.name)}</h1><dl>{body}<dt>checks</dt>'
            f'<dd>{checks_html(review.glance)}</dd></dl>')


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


def _episode_rows(review: FlightReview, t0_ns: int) -> str:
    traced = {link.timestamp_ns: link for link in review.data.trace.links
              if link.link.value == 'actuation_to_rationale'}
    return ''.join(_episode_row(number, episode, t0_ns, traced)
                   for number, episode in enumerate(review.episodes, 1))


def _episode_row(number: int, episode: Episode, t0_ns: int,
                 traced: Mapping[int, LinkRecord]) -> str:
    start, end = (episode.start_ns - t0_ns) / 1e9, (episode.end_ns - t0_ns) / 1e9
    link = traced.get(episode.actuation_stamp_ns or -1)
    status = None if link is None else link.chain_status.value
    address = (f'<code>{escape(episode.actuation_sha256)}</code> (actuation at '
               f'{(episode.actuation_stamp_ns or 0) / 1e9:.3f} s; link '
               f'{escape(status or "not traced")})' if episode.actuation_sha256 else 'none')
    chain = ' → '.join(f'<span class="cause">{escape(text)}</span>' for text in episode.causes)
    return (f'<tr class="episode" id="{episode_anchor(number)}" '
            f'data-decision="{episode.decision}" '
            f'data-start-ns="{episode.start_ns}" data-end-ns="{episode.end_ns}">'
            f'<td>{number}</td><td>{_s(start)} s<br><span class="tick">'
            f'{episode.start_ns / 1e9:.3f}</span></td><td>{_s(end)} s'
            f'{" (end of log)" if episode.open_ended else ""}<br>'
            f'<span class="tick">{episode.end_ns / 1e9:.3f}</span></td><td>{_s(end - start)} s'
            f'</td><td>{episode.decision}</td><td>{chain}</td><td>{address}</td></tr>')


def _lead_cell(review: FlightReview, event_index: int) -> str:
    event = review.log.events[event_index] if review.log else None
    if event is None:
        return ''
    if event.credited:
        return escape(lead_of(review.data.cycles, event.time_ns).text)
    if event.listed_failsafe:
        return f'listed, not credited ({escape(event.event_class.value)})'
    return ''


def _events_table(review: FlightReview, t0_ns: int) -> str:
    if review.log is None:
        return ''
    rows = []
    for index, event in enumerate(review.log.events[:MAX_EVENT_ROWS]):
        rows.append(f'<tr class="px4-event" data-class="{escape(event.event_class.name)}">'
                    f'<td>{_s((event.time_ns - t0_ns) / 1e9)}</td>'
                    f'<td>{event.time_ns / 1e9:.3f}</td><td>{escape(event.kind)}</td>'
                    f'<td>{escape(event.event_class.value)}</td><td>{escape(event.detail)}</td>'
                    f'<td class="lead">{_lead_cell(review, index)}</td></tr>')
    more = len(review.log.events) - MAX_EVENT_ROWS
    note = f'<p>… and {more} more events (all are marked above)</p>' if more > 0 else ''
    return (f'<h2>{escape(review.log.autopilot)} events</h2><p class="tick">Ghost\'s lead is '
            'measured only against navigation and estimator events (position or velocity '
            'invalid, EKF failsafe, GNSS loss, estimator resets); other failsafes are listed, '
            'not credited.</p>'
            '<table id="events"><tr><th>s</th><th>boot s</th><th>kind</th><th>class</th>'
            '<th>detail</th><th>Ghost lead</th></tr>' + ''.join(rows) + '</table>' + note)


def report_html(review: FlightReview) -> str:
    """The whole report of one flight as one HTML document (the verdict word first)."""
    rows = review.data.cycles
    t0_ns = rows[0].stamp_ns if rows else 0
    span_s = (rows[-1].stamp_ns - t0_ns) / 1e9 if rows else 0.0
    axis = Axis(span_s)
    times = [(row.stamp_ns - t0_ns) / 1e9 for row in rows]
    lanes = [timeline(axis, times, rows, t0_ns), '<h2>On the same time axis</h2>']
    lanes += [sigma_lane(axis, times, rows, block, unit, review) for block, unit in BLOCKS]
    lanes += [distance_lane(axis, times, rows), fix_age_lane(axis, times, rows, review),
              events_lane(axis, review, t0_ns), gate_lane(axis, review, t0_ns)]
    episodes = (f'<h2>Episodes ({len(review.episodes)} not PROCEED)</h2><table id="episodes">'
                '<tr><th>#</th><th>start</th><th>end</th><th>duration</th><th>decision</th>'
                '<th>cause chain</th><th>first actuation (rationale_sha256, as '
                'trace_decisions lists it)</th></tr>' + _episode_rows(review, t0_ns)
                + '</table>')
    return ('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            f'<title>{escape(review.glance.word)}: Ghost review of {escape(review.name)}</title>'
            f'<style>{_CSS}</style></head><body>{glance_html(review, t0_ns)}'
            f'{_header(review, span_s, t0_ns)}{failures_html(review, t0_ns)}{"".join(lanes)}'
            f'{episodes}{_events_table(review, t0_ns)}<p class="tick">One row per cycle: '
            '<a href="decisions.csv">decisions.csv</a>.</p></body></html>\n')
