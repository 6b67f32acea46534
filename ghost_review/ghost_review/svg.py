"""Static inline SVG for the report: one time axis, lanes, and decimated series.

A series is drawn as the minimum and maximum of its samples in each pixel column, so a long
flight costs at most two points per column and no spike is lost. Colour bands and markers are
exact (one element per change or event).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape
import math

__all__ = ['DECISION_COLOURS', 'Axis', 'bands', 'decades', 'hline', 'LABEL_HEIGHT', 'legend',
           'log_ticks', 'nice_ticks', 'Panel', 'series_path']

#: Plot area: left margin for labels, width in pixels.
LEFT, WIDTH, RIGHT = 110, 980, 20
DECISION_COLOURS = {
    'PROCEED': '#43a047', 'HOLD': '#fb8c00', 'YIELD_TO_PILOT': '#8e24aa',
    'ENGAGE_RTL': '#1e88e5', 'ENGAGE_LAND': '#6d4c41', 'ENGAGE_KILL': '#212121',
    'ABSTAIN_UNCERTAIN': '#e53935',
}
GATE_COLOURS = {'PASSED': '#43a047', 'HELD': '#fb8c00', 'VEHICLE_COMMAND': '#1e88e5'}


def nice_ticks(low: float, high: float, count: int = 8) -> list[float]:
    """Round tick values covering [low, high], about `count` of them."""
    span = high - low
    if span <= 0:
        return [low]
    raw = span / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(low / step) * step
    return [first + i * step for i in range(int((high - first) / step + 1e-9) + 1)]


@dataclass(frozen=True, slots=True)
class Axis:
    """The shared time axis: seconds since the flight's start, 0 .. span_s."""

    span_s: float

    def x(self, t_s: float) -> float:
        """Pixel x of a time (clamped to the plot area)."""
        span = self.span_s if self.span_s > 0 else 1.0
        return LEFT + min(max(t_s / span, 0.0), 1.0) * WIDTH


@dataclass(frozen=True, slots=True)
class Panel:
    """A y scale on one lane: linear or log10 between low and high, `height` pixels."""

    low: float
    high: float
    height: int = 110
    log: bool = False
    #: Room above the plot (for the top decade's label).
    top: int = 8

    def y(self, value: float) -> float:
        """Pixel y of a value (clamped to the lane)."""
        if self.log:
            value = math.log10(max(value, self.low))
            low, high = math.log10(self.low), math.log10(self.high)
        else:
            low, high = self.low, self.high
        fraction = 0.0 if high <= low else (value - low) / (high - low)
        return self.top + (1.0 - min(max(fraction, 0.0), 1.0)) * self.height


def _f(value: float) -> str:
    return f'{value:.1f}'


def series_path(axis: Axis, panel: Panel, times: Sequence[float],
                values: Sequence[float | None]) -> str:
    """SVG path data: per pixel column the min and max of the samples; None breaks the line."""
    commands: list[str] = []
    column: int | None = None
    low = high = 0.0
    pen_down = False

    def flush() -> None:
        nonlocal pen_down
        if column is None:
            return
        x = _f(LEFT + column)
        y_low, y_high = _f(panel.y(low)), _f(panel.y(high))
        commands.append(f'{"L" if pen_down else "M"}{x} {y_low}')
        if y_high != y_low:
            commands.append(f'L{x} {y_high}')
        pen_down = True

    for t, value in zip(times, values, strict=True):
        if value is None or not math.isfinite(value):
            flush()
            column, pen_down = None, False
            continue
        here = int(axis.x(t) - LEFT)
        if here != column:
            flush()
            column, low, high = here, value, value
        else:
            low, high = min(low, value), max(high, value)
    flush()
    return ''.join(commands)


#: Vertical room a reference line's label takes (px; the .ref text is 10 px).
LABEL_HEIGHT = 12


def hline(panel: Panel, value: float, label: str, css: str, *, below: bool = False,
          inset: int = 0) -> str:
    """A horizontal reference line, labelled above it (or below) at its right end.

    `inset`: the label stands that many pixels left of the end (labels of close lines).
    """
    y = _f(panel.y(value))
    text_y = float(y) + LABEL_HEIGHT - 1 if below else float(y) - 2
    return (f'<line class="{css}" x1="{LEFT}" x2="{LEFT + WIDTH}" y1="{y}" y2="{y}"/>'
            f'<text class="ref" x="{LEFT + WIDTH - 2 - inset}" y="{text_y:.1f}" '
            f'text-anchor="end">{escape(label)}</text>')


def bands(axis: Axis, runs: Iterable[tuple[float, float, str, str]], y: float, height: float,
          colours: dict[str, str], css: str) -> str:
    """One rect per run (start s, end s, state, tooltip), coloured by state."""
    out = []
    for start, end, state, tip in runs:
        x0, x1 = axis.x(start), axis.x(end)
        out.append(f'<rect class="{css}" data-state="{escape(state)}" x="{x0:.2f}" '
                   f'y="{y:.1f}" width="{max(x1 - x0, 0.5):.2f}" height="{height:.1f}" '
                   f'fill="{colours.get(state, "#9e9e9e")}"><title>{escape(tip)}</title></rect>')
    return ''.join(out)


def time_ticks(axis: Axis, t0_ns: int, y: float, height: float, boot: bool) -> str:
    """Vertical grid lines with 'seconds since start' labels (and boot-time labels)."""
    out = []
    for tick in nice_ticks(0.0, axis.span_s):
        x = axis.x(tick)
        out.append(f'<line class="grid" x1="{x:.1f}" x2="{x:.1f}" y1="0" y2="{y + height:.1f}"/>'
                   f'<text class="tick" x="{x:.1f}" y="{y + height + 12:.1f}" '
                   f'text-anchor="middle">{tick:g} s</text>')
        if boot:
            out.append(f'<text class="tick boot" x="{x:.1f}" y="{y + height + 24:.1f}" '
                       f'text-anchor="middle">{t0_ns / 1e9 + tick:.1f}</text>')
    return ''.join(out)


def svg(element_id: str, height: float, title: str, body: str,
        keys: Iterable[tuple[str, str, str]] = ()) -> str:
    """A lane: its title and legend (``legend``) on one line, then its inline <svg>."""
    return (f'<div class="lane-head"><span class="lane-title">{escape(title)}</span>'
            f'{legend(element_id, keys)}</div>'
            f'<svg id="{element_id}" class="lane" width="{LEFT + WIDTH + RIGHT}" '
            f'height="{height:.0f}" viewBox="0 0 {LEFT + WIDTH + RIGHT} {height:.0f}" '
            f'role="img" aria-label="{escape(title)}">{body}</svg>')


def decades(low: float, high: float) -> list[float]:
    """Every power of ten from `low` to `high` (both > 0), in order."""
    first, last = math.ceil(math.log10(low) - 1e-9), math.floor(math.log10(high) + 1e-9)
    return [10.0 ** power for power in range(first, last + 1)]


def _decade_label(value: float) -> str:
    return f'{value:.0e}'.replace('e+0', 'e').replace('e-0', 'e-') if (
        value < 1e-3 or value >= 1e4) else f'{value:g}'


def log_ticks(panel: Panel, unit: str = '') -> str:
    """A grid line and one label at each decade of a log panel (the unit on the top one)."""
    out = []
    ticks = decades(panel.low, panel.high)
    for value in ticks:
        y = _f(panel.y(value))
        label = _decade_label(value) + (f' {unit}' if unit and value == ticks[-1] else '')
        out.append(f'<line class="grid decade" x1="{LEFT}" x2="{LEFT + WIDTH}" y1="{y}" '
                   f'y2="{y}"/><text class="tick decade" x="{LEFT - 4}" y="{float(y) + 3:.1f}" '
                   f'text-anchor="end">{escape(label)}</text>')
    return ''.join(out)


def legend(lane: str, keys: Iterable[tuple[str, str, str]]) -> str:
    """The legend of one lane: (key, CSS of its swatch, what it means) per mark drawn.

    `key` is what the lane's marks carry (their class, or their data-state for coloured
    bands), so a test can match every mark to its entry.
    """
    items = ''.join(f'<span class="key" data-key="{escape(key)}"><i class="swatch" '
                    f'style="{escape(style)}"></i>{escape(text)}</span>'
                    for key, style, text in keys)
    return f'<span class="legend" data-lane="{escape(lane)}">{items}</span>'
