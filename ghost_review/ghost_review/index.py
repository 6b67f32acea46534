"""index.html: one row per flight, linking to its report (self-contained, no script)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from ghost_core.levels import DecisionKind

from .episodes import lead_text, lead_time, seconds_text
from .review import FlightReview

__all__ = ['decision_shares', 'index_html']

_CSS = """body{font:13px/1.4 system-ui,sans-serif;margin:16px}table{border-collapse:collapse}
td,th{border:1px solid #e0e0e0;padding:3px 6px;vertical-align:top;text-align:left}
th{background:#fafafa}ul{margin:0;padding-left:16px}.vacuous{color:#8d6e63}
.error{color:#c62828}"""


def decision_shares(review: FlightReview) -> tuple[dict[str, float], float]:
    """Per decision kind, its share of the decided cycles (%); decision changes per minute."""
    decided = [row for row in review.data.cycles if row.decision is not None]
    counts: dict[str, int] = {}
    for row in decided:
        counts[str(row.decision)] = counts.get(str(row.decision), 0) + 1
    order = [kind.name for kind in DecisionKind]
    shares = {kind: 100 * counts[kind] / len(decided)
              for kind in sorted(counts, key=lambda k: order.index(k) if k in order else 99)}
    changes = sum(1 for a, b in zip(decided, decided[1:], strict=False)
                  if a.decision != b.decision)
    minutes = (decided[-1].stamp_ns - decided[0].stamp_ns) / 60e9 if decided else 0.0
    return shares, changes / minutes if minutes > 0 else 0.0


def _lead(review: FlightReview) -> str:
    if review.log is None:
        return 'no PX4 log'
    rows = review.data.cycles
    safety = [event for event in review.log.events if event.safety]
    if not safety:
        return 'no PX4 failsafe or position-invalid event'
    parts = []
    for event in safety[:4]:
        text = lead_text(lead_time(rows, event.time_ns), 'none')
        at = (event.time_ns - rows[0].stamp_ns) / 1e9 if rows else 0.0
        parts.append(f'{escape(event.detail)} at {seconds_text(at)} s: {text}')
    more = f'<li>… {len(safety) - 4} more</li>' if len(safety) > 4 else ''
    return '<ul>' + ''.join(f'<li>{part}</li>' for part in parts) + more + '</ul>'


def _row(review: FlightReview) -> str:
    rows = review.data.cycles
    duration = (rows[-1].stamp_ns - rows[0].stamp_ns) / 1e9 if rows else 0.0
    shares, per_minute = decision_shares(review)
    share_text = ', '.join(f'{kind} {value:.1f} %' for kind, value in shares.items())
    verdicts = ''.join(
        f'<li{" class=vacuous" if "vacuous" in line else ""}>{escape(line)}'
        f'{" (vacuous)" if "vacuous" in line else ""}</li>'
        for line in review.verdict_lines if not line.startswith('note:'))
    name = escape(review.name)
    return (f'<tr class="flight" data-name="{name}"><td><a href="{name}/report.html">{name}</a>'
            f'</td><td>{escape(review.log.vehicle if review.log else "not stated")}</td>'
            f'<td>{escape(review.log.px4_version if review.log else "not stated")}</td>'
            f'<td>{duration:.1f} s</td><td>{share_text}</td><td>{per_minute:.2f}</td>'
            f'<td>{len(review.episodes)}</td><td><ul>{verdicts}</ul></td>'
            f'<td>{_lead(review)}</td></tr>')


def index_html(reviews: Sequence[FlightReview], errors: Sequence[str]) -> str:
    """The fleet index of `reviews`, and the inputs that could not be reviewed."""
    rows = ''.join(_row(review) for review in reviews)
    failed = ''.join(f'<li class="error">{escape(error)}</li>' for error in errors)
    return ('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Ghost flight '
            f'review</title><style>{_CSS}</style></head><body><h1>Ghost flight review: '
            f'{len(reviews)} flight{"s" if len(reviews) != 1 else ""}</h1>'
            '<table id="flights"><tr><th>flight</th><th>vehicle</th><th>PX4</th>'
            '<th>duration</th><th>decisions</th><th>changes/min</th><th>episodes</th>'
            '<th>verdicts</th><th>Ghost lead before PX4 safety events</th></tr>'
            f'{rows}</table>' + (f'<h2>Not reviewed</h2><ul>{failed}</ul>' if failed else '')
            + '</body></html>\n')
