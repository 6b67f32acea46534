"""The top of a report: the verdict word first, then the first failure, linked to where it was.

A failure's cycle is linked to its episode's row when an episode spans it, else to the cycle's
own row in "Where the checks failed", which lists every failing check's first cycle with what
that cycle recorded. The limits of a verified flight are named beside the word, and a
property whose precondition never held says so there, not only in the docs.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from .episodes import Episode, seconds_text
from .flight import CycleRow
from .review import FlightReview
from .verdict import Check, Verdict

__all__ = ['checks_html', 'episode_anchor', 'failures_html', 'glance_html', 'target_of']


def episode_anchor(number: int) -> str:
    """The id of episode `number`'s row (1-based, as the table numbers them)."""
    return f'episode-{number}'


def _cycle_anchor(stamp_ns: int) -> str:
    return f'cycle-{stamp_ns}'


def target_of(stamp_ns: int, episodes: Sequence[Episode]) -> tuple[str, int | None]:
    """(anchor, episode number) of where a failure at `stamp_ns` is shown."""
    for number, episode in enumerate(episodes, 1):
        if episode.start_ns <= stamp_ns < episode.end_ns or (
                episode.open_ended and stamp_ns == episode.end_ns):
            return episode_anchor(number), number
    return _cycle_anchor(stamp_ns), None


def _where(check: Check, review: FlightReview, t0_ns: int) -> str:
    if check.stamp_ns is None:
        return 'the report does not name a cycle'
    anchor, number = target_of(check.stamp_ns, review.episodes)
    at = f'{seconds_text((check.stamp_ns - t0_ns) / 1e9, 2)} s'
    if number is None:
        what = f'cycle at {at} ({check.stamp_ns} ns)'
    else:
        episode = review.episodes[number - 1]
        what = f'episode {number} ({episode.decision}), cycle at {at}'
    return f'<a class="failure-link" href="#{anchor}">{escape(what)}</a>'


def glance_html(review: FlightReview, t0_ns: int) -> str:
    """The first thing on the page: the verdict word, then the failure or the limits."""
    verdict = review.glance
    word = (f'<span id="verdict" class="verdict {verdict.status.value}">'
            f'{escape(verdict.word)}</span>')
    beside = ''
    if verdict.limits:
        beside = f' <span class="limits">{escape("; ".join(verdict.named_limits))}</span>'
    lines = [f'<p class="glance">{word}{beside}</p>']
    for number, check in enumerate(verdict.failures):
        css = 'first-failure' if number == 0 else 'failure'
        lines.append(f'<p class="{css} fail"><b>{escape(check.text)}</b> at '
                     f'{_where(check, review, t0_ns)}</p>')
    if review.fixes_note:
        lines.append(f'<p class="limit-note limit">{escape(review.fixes_note)}</p>')
    return f'<header id="glance">{"".join(lines)}</header>'


def checks_html(verdict: Verdict) -> str:
    """Every line verify_all printed, coloured by its status (once: no added badge)."""
    items = ''.join(f'<li class="check {check.status.value}" data-check="{escape(check.name)}">'
                    f'{escape(check.text)}</li>' for check in verdict.checks)
    return f'<ul class="verdicts" id="verdicts">{items}</ul>'


def _cycle_text(row: CycleRow | None) -> str:
    if row is None:
        return 'no cycle of the bag has this stamp'
    parts = [f'decision {row.decision or "none"}', f'raw {row.raw_level or "none"}',
             f'adjusted {row.adjusted_level or "none"}', f'command {row.command or "none"}']
    return ', '.join(parts)


def failures_html(review: FlightReview, t0_ns: int) -> str:
    """'Where the checks failed': one row per failing check's first cycle ('' when none)."""
    failures = [check for check in review.glance.failures if check.stamp_ns is not None]
    if not failures:
        return ''
    rows = {row.stamp_ns: row for row in review.data.cycles}
    out, seen = [], set()
    for check in failures:
        stamp = check.stamp_ns
        assert stamp is not None
        anchor, number = target_of(stamp, review.episodes)
        episode = (f'<a href="#{anchor}">episode {number}</a>' if number is not None
                   else 'none (Ghost proceeded)')
        ident = '' if stamp in seen else f' id="{_cycle_anchor(stamp)}"'
        seen.add(stamp)
        out.append(f'<tr class="failure-cycle fail"{ident} data-stamp-ns="{stamp}"><td>'
                   f'{seconds_text((stamp - t0_ns) / 1e9, 2)} s<br><span class="tick">'
                   f'{stamp / 1e9:.3f}</span></td><td>{escape(check.text)}</td>'
                   f'<td>{escape(_cycle_text(rows.get(stamp)))}</td><td>{episode}</td></tr>')
    return ('<h2 id="failures">Where the checks failed</h2><table><tr><th>cycle</th>'
            '<th>check (its first failure)</th><th>what the cycle recorded</th>'
            '<th>episode</th></tr>' + ''.join(out) + '</table>')

