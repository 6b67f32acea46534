"""A node parameter as data: name, typed default, description, checks, read-only flag.

Pure (no rclpy): the graph's declaration (``ghost_nodes.node_parameters``,
``ghost_px4.node_parameters``), the parameter page and the offline tools read the same specs
the nodes declare. ``ghost_nodes.node_base.descriptor`` turns a spec into rclpy's
ParameterDescriptor.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
import math
from typing import Any

__all__ = ['at_least', 'at_most', 'below', 'Bound', 'Check', 'INT64_MAX', 'non_negative',
           'one_of', 'OneOf', 'ParamSpec', 'positive']

Check = Callable[[Any], str | None]

#: The widest rclpy integer range (parameters are int64).
INT64_MAX = 2**63 - 1


@dataclass(frozen=True, slots=True)
class Bound:
    """A numeric range check that also becomes the descriptor's inclusive rclpy range.

    rclpy ranges are inclusive, so a strict bound (``> 0``, ``< 1``) is declared as its
    inclusive closure (``[0, ...]``, ``[..., 1]``) and the edge value itself is refused by this
    check, in Ghost's words (the descriptor's ``additional_constraints`` says so). The one
    exception is a strict bound on an integer parameter, which is exact: ``> 0`` is ``[1, ...]``.
    """

    minimum: int | float | None = None
    maximum: int | float | None = None
    strict_minimum: bool = False
    strict_maximum: bool = False

    def __call__(self, value: Any) -> str | None:
        """Why ``value`` is out of range, or None."""
        if self.minimum is not None:
            if self.strict_minimum and not value > self.minimum:
                return f'must be > {self.minimum}, got {value}'
            if not self.strict_minimum and not value >= self.minimum:
                return f'must be >= {self.minimum}, got {value}'
        if self.maximum is not None:
            if self.strict_maximum and not value < self.maximum:
                return f'must be < {self.maximum}, got {value}'
            if not self.strict_maximum and not value <= self.maximum:
                return f'must be <= {self.maximum}, got {value}'
        return None

    def strict_text(self) -> str | None:
        """The part of the bound an inclusive range cannot say (for additional_constraints)."""
        parts = []
        if self.minimum is not None and self.strict_minimum:
            parts.append(f'> {self.minimum} ({self.minimum} itself is refused)')
        if self.maximum is not None and self.strict_maximum:
            parts.append(f'< {self.maximum} ({self.maximum} itself is refused)')
        return '; '.join(parts) or None


def at_least(minimum: int | float) -> Bound:
    """A check that a number is >= ``minimum``."""
    return Bound(minimum=minimum)


def at_most(maximum: int | float) -> Bound:
    """A check that a number is <= ``maximum``."""
    return Bound(maximum=maximum)


def below(maximum: int | float) -> Bound:
    """A check that a number is < ``maximum``."""
    return Bound(maximum=maximum, strict_maximum=True)


#: A check that a number is > 0.
positive = Bound(minimum=0, strict_minimum=True)

#: A check that a number is >= 0.
non_negative = Bound(minimum=0)


@dataclass(frozen=True, slots=True)
class OneOf:
    """A check that a string is one of ``choices`` (rclpy has no string constraint)."""

    choices: tuple[str, ...]

    def __call__(self, value: Any) -> str | None:
        """Why ``value`` is not one of the choices, or None."""
        if value in self.choices:
            return None
        return f'must be one of {sorted(self.choices)}, got {value!r}'


def one_of(choices: Sequence[str]) -> OneOf:
    """A check that a string is one of ``choices``."""
    return OneOf(tuple(choices))


@dataclass(frozen=True)
class ParamSpec:
    """One declared parameter: name, typed default, description, validity checks.

    ``Bound`` checks become the descriptor's ``integer_range``/``floating_point_range`` (so
    ``ros2 param describe`` shows them and rclpy refuses values outside them); what a range
    cannot say (a strict bound, string choices) goes into ``additional_constraints``. Every
    check is also run by Ghost, which words the refusal.
    """

    name: str
    default: Any
    description: str
    checks: tuple[Check, ...] = ()
    read_only: bool = False

    def value_range(self) -> tuple[int | float, int | float] | None:
        """The inclusive (from, to) range the bounds allow, or None when there is none."""
        bounds = [check for check in self.checks if isinstance(check, Bound)]
        if not bounds or isinstance(self.default, bool) or not isinstance(
                self.default, (int, float)):
            return None
        is_int = isinstance(self.default, int)
        low: int | float = -INT64_MAX - 1 if is_int else -math.inf
        high: int | float = INT64_MAX if is_int else math.inf
        for bound in bounds:
            if bound.minimum is not None:
                edge = bound.minimum + 1 if is_int and bound.strict_minimum else bound.minimum
                low = max(low, edge)
            if bound.maximum is not None:
                edge = bound.maximum - 1 if is_int and bound.strict_maximum else bound.maximum
                high = min(high, edge)
        return low, high

    def allowed(self) -> str:
        """What the checks allow, for people: ``(0, inf)``, ``[1, 1048576]``, choices, or ''."""
        for check in self.checks:
            if isinstance(check, OneOf):
                return ', '.join(check.choices)
        value_range = self.value_range()
        if value_range is None:
            return ''
        low, high = value_range
        bounds = [check for check in self.checks if isinstance(check, Bound)]
        exact = isinstance(self.default, int)  # an integer's strict bound is an inclusive one
        open_low = not exact and any(b.strict_minimum and b.minimum == low for b in bounds)
        open_high = not exact and any(b.strict_maximum and b.maximum == high for b in bounds)
        low_text = '-inf' if low in (-math.inf, -INT64_MAX - 1) else str(low)
        high_text = 'inf' if high in (math.inf, INT64_MAX) else str(high)
        return (f'{"(" if open_low or low_text == "-inf" else "["}{low_text}, '
                f'{high_text}{")" if open_high or high_text == "inf" else "]"}')

    def constraints(self) -> str:
        """The constraints an rclpy range cannot express, as text ('' when there are none)."""
        parts = []
        for check in self.checks:
            if isinstance(check, OneOf):
                parts.append('one of ' + ', '.join(check.choices))
            elif isinstance(check, Bound) and not isinstance(self.default, int):
                strict = check.strict_text()
                if strict is not None:
                    parts.append(strict)
        return '; '.join(parts)
