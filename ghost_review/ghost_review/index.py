"""index.html: one row per flight, its verdict word first, linking to its report (no script).

A row is a few lines high whatever the flight (the checks are in the report; the row names
only the verdict, its limits or its first failure, and the lead before the navigation and
estimator events), so a fleet of four fits on one 1400x1800 screen.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from ghost_core.levels import DecisionKind

from .episodes import seconds_text
from .events import lead_of
from .glance import target_of
from .report import STATUS_COLOURS
from .review import FlightReview

__all__ = ['MAX_LEADS', 'decision_shares', 'index_html']

#: Credited events listed per flight (the report lists them all).
MAX_LEADS = 3
#: Listed (not credited) failsafes named per flight.
MAX_LISTED = 2
#: The first failure is shortened to this many characters in the index.
MAX_FAILURE_CHARS = 110
_CSS = """body{font:13px/1.35 system-ui,sans-serif;margin:16px}table{border-collapse:collapse}
h1{font-size:18px;margin:0 0 8px}
td,th{border:1px solid #e0e0e0;padding:3px 6px;vertical-align:top;text-align:left}
th{background:#fafafa}ul{margin:0;padding-left:14px}.error{color:#c62828}
.verdict{font-weight:700;padding:1px 6px;border-radius:3px;border:1px solid;white-space:nowrap}
""" + ''.join(f'.{name}{{color:{ink}}}.verdict.{name}{{background:{paper};border-color:{ink}}}'
              for name, (ink, paper) in STATUS_COLOURS.items())


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
        return 'no autopilot log'
    rows = review.data.cycles
    t0 = rows[0].stamp_ns if rows else 0
    credited = [event for event in review.log.events if event.credited]
    listed = [event for event in review.log.events if event.listed_failsafe]
    parts = []
    for event in credited[:MAX_LEADS]:
        at = seconds_text((event.time_ns - t0) / 1e9)
        parts.append(f'{escape(event.event_class.value)} at {at} s: '
                     f'{escape(lead_of(rows, event.time_ns).text)}')
    if len(credited) > MAX_LEADS:
        parts.append(f'… {len(credited) - MAX_LEADS} more (in the report)')
    if not credited:
        parts.append('no navigation or estimator event')
    for event in listed[:MAX_LISTED]:
        at = seconds_text((event.time_ns - t0) / 1e9)
        parts.append(f'listed, not credited: {escape(event.event_class.value)} at {at} s')
    if len(listed) > MAX_LISTED:
        parts.append(f'… {len(listed) - MAX_LISTED} more failsafes listed')
    return '<ul>' + ''.join(f'<li>{part}</li>' for part in parts) + '</ul>'


def _why(review: FlightReview) -> str:
    """The first failure (linked to where it was), or the limits named."""
    verdict = review.glance
    name = escape(review.name)
    if verdict.failures:
        check = verdict.failures[0]
        text = check.text if len(check.text) <= MAX_FAILURE_CHARS else (
            check.text[:MAX_FAILURE_CHARS - 1] + '…')
        anchor = 'glance' if check.stamp_ns is None else target_of(check.stamp_ns,
                                                                   review.episodes)[0]
        return (f'<a class="failure-link {verdict.status.value}" '
                f'href="{name}/report.html#{anchor}">{escape(text)}</a>')
    return '; '.join(escape(limit) for limit in verdict.named_limits) or 'every check holds'


def _row(review: FlightReview) -> str:
    rows = review.data.cycles
    duration = (rows[-1].stamp_ns - rows[0].stamp_ns) / 1e9 if rows else 0.0
    shares, per_minute = decision_shares(review)
    share_text = ', '.join(f'{kind} {value:.1f} %' for kind, value in shares.items())
    verdict = review.glance
    name = escape(review.name)
    vehicle = (f'{escape(review.log.vehicle)}<br>{escape(review.log.autopilot)} '
               f'{escape(review.log.version)}'
               if review.log else 'not stated')
    return (f'<tr class="flight" data-name="{name}" data-verdict="{escape(verdict.word)}">'
            f'<td><span class="verdict {verdict.status.value}">{escape(verdict.word)}</span>'
            f'</td><td><a href="{name}/report.html">{name}</a></td><td>{vehicle}</td>'
            f'<td>{duration:.1f} s</td><td>{share_text}</td>'
            f'<td>{per_minute:.2f}</td><td>{len(review.episodes)}</td><td>{_why(review)}</td>'
            f'<td>{_lead(review)}</td></tr>')


def index_html(reviews: Sequence[FlightReview], errors: Sequence[str]) -> str:
    """The fleet index of `reviews`, and the inputs that could not be reviewed."""
    rows = ''.join(_row(review) for review in reviews)
    failed = ''.join(f'<li class="error">{escape(error)}</li>' for error in errors)
    words = [review.glance.word for review in reviews]
    counts = ', '.join(f'{words.count(word)} {word}' for word in dict.fromkeys(words))
    return ('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Ghost flight '
            f'review</title><style>{_CSS}</style></head><body><h1>Ghost flight review: '
            f'{len(reviews)} flight{"s" if len(reviews) != 1 else ""} ({escape(counts)})</h1>'
            '<table id="flights"><tr><th>verdict</th><th>flight</th><th>vehicle, autopilot</th>'
            '<th>duration</th><th>decisions</th><th>changes/min</th><th>episodes</th>'
            '<th>first failure, or limits</th><th>Ghost lead before navigation and estimator '
            'events</th></tr>'
            f'{rows}</table>' + (f'<h2>Not reviewed</h2><ul>{failed}</ul>' if failed else '')
            + '</body></html>\n')
