"""Field checks shared by the contracts; each names the field and the bad value when it fails."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import IntEnum
from functools import partial
import math
import numbers
import re
from typing import Any, cast, TypeVar

from ghost_core.errors import ContractError
from ghost_core.hashing import SHA256_HEX_PATTERN

__all__ = [
    'FieldCheck',
    'MAX_STAMP_NS',
    'SCHEMA_VERSION',
    'TAXONOMY_PATTERN',
    'UINT32_MAX',
    'boolean',
    'distance',
    'enum_member',
    'failure',
    'finite_at_least',
    'finite_float',
    'instance',
    'integer',
    'integer_in',
    'layout_version',
    'layout_version_of',
    'member_of',
    'optional_sha256',
    'optional_stamp',
    'optional_taxonomy',
    'schema_version',
    'sha256',
    'stamp',
    'stamps',
    'taxonomy',
    'text',
    'vector',
    'vector_of',
]

UINT32_MAX = 2**32 - 1
#: builtin_interfaces/Time.sec is an int32, so a stamp must fit in it.
MAX_STAMP_NS = 2**31 * 10**9 - 1
#: Layout version of every ghost message (SPEC section 3).
SCHEMA_VERSION = 1
#: Taxonomy strings (SPEC section 3): ^[a-z][a-z0-9_]*$, 1-64 characters.
TAXONOMY_PATTERN = re.compile(r'[a-z][a-z0-9_]{0,63}')

EnumT = TypeVar('EnumT', bound=IntEnum)
T = TypeVar('T')

#: A field check: (owner, field name, value) -> the value normalised; a ContractError naming
#: the field when it is not valid. The contracts name one per field in its annotation.
FieldCheck = Callable[[str, str, Any], Any]


def failure(owner: str, name: str, requirement: str, value: object) -> ContractError:
    """Build the error for `owner.name`, stating what it must be and what it was."""
    return ContractError(f'{owner}.{name} must be {requirement}, got {value!r}')


def _as_int(value: object) -> int | None:
    if type(value) is int:  # the common case, without the abstract-class check
        return value
    # bool is an int subclass, but True is not a count, a stamp nor a level.
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        return None
    return int(value)


def _as_float(value: object) -> float | None:
    if type(value) is float:
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    return float(value)


def integer(
    owner: str, name: str, value: object, minimum: int = 0, maximum: int = UINT32_MAX
) -> int:
    """Return `value` as an int in [minimum, maximum]."""
    result = _as_int(value)
    if result is None or not minimum <= result <= maximum:
        raise failure(owner, name, f'an integer in [{minimum}, {maximum}]', value)
    return result


def stamp(owner: str, name: str, value: object) -> int:
    """Return `value` as a stamp in integer nanoseconds that fits builtin_interfaces/Time."""
    return integer(owner, name, value, 0, MAX_STAMP_NS)


def optional_stamp(owner: str, name: str, value: object) -> int | None:
    """Return `value` when it is None (no such input) or a stamp (see ``stamp``)."""
    return None if value is None else stamp(owner, name, value)


def stamps(owner: str, name: str, value: object) -> tuple[int, ...]:
    """Return `value` as a tuple of stamps (see ``stamp``), from any sequence of integers."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (tuple, list)):
        raise failure(owner, name, 'a sequence of stamps (integer ns)', value)
    return tuple(stamp(owner, f'{name}[{index}]', item) for index, item in enumerate(value))


def schema_version(owner: str, value: object) -> int:
    """Return `value` when it is the one supported layout version."""
    if _as_int(value) != SCHEMA_VERSION:
        raise failure(owner, 'schema_version', f'{SCHEMA_VERSION}', value)
    return SCHEMA_VERSION


def finite_float(owner: str, name: str, value: object, minimum: float = -math.inf) -> float:
    """Return `value` as a finite float >= minimum."""
    result = _as_float(value)
    if result is None or not math.isfinite(result) or result < minimum:
        requirement = 'a finite number'
        if minimum > -math.inf:
            requirement += f' >= {minimum}'
        raise failure(owner, name, requirement, value)
    return result


def distance(owner: str, name: str, value: object) -> float:
    """Return `value` as a float >= 0 that is not NaN (+inf is legitimate)."""
    result = _as_float(value)
    if result is None or math.isnan(result) or result < 0.0:
        raise failure(owner, name, 'a number >= 0 (+inf allowed, NaN not)', value)
    return result


def vector(owner: str, name: str, value: object, length: int) -> tuple[float, ...]:
    """Return `value` as a tuple of `length` finite floats."""
    # tuple and list first: the common cases, without the abstract-class check.
    if not isinstance(value, (tuple, list)) and (
            isinstance(value, (str, bytes)) or not isinstance(value, Sequence)):
        raise failure(owner, name, f'a sequence of {length} finite numbers', value)
    items = [_as_float(item) for item in cast(Sequence[object], value)]
    result = tuple(item for item in items if item is not None and math.isfinite(item))
    if len(items) != length or len(result) != length:
        raise failure(owner, name, f'a sequence of {length} finite numbers', value)
    return result


def taxonomy(owner: str, name: str, value: object) -> str:
    """Return `value` when it is a taxonomy string (^[a-z][a-z0-9_]*$, 1-64 characters)."""
    if not isinstance(value, str) or TAXONOMY_PATTERN.fullmatch(value) is None:
        raise failure(owner, name, 'a taxonomy string matching ^[a-z][a-z0-9_]*$ (1-64)', value)
    return value


def optional_taxonomy(owner: str, name: str, value: object) -> str | None:
    """Return `value` when it is None (not stated; '' on the wire) or a taxonomy string."""
    if value is None:
        return None
    if not isinstance(value, str) or TAXONOMY_PATTERN.fullmatch(value) is None:
        raise failure(owner, name, 'None or a taxonomy string matching ^[a-z][a-z0-9_]*$ (1-64)',
                      value)
    return value


def sha256(owner: str, name: str, value: object) -> str:
    """Return `value` when it is a content address (64 lowercase hex digits)."""
    if not isinstance(value, str) or SHA256_HEX_PATTERN.fullmatch(value) is None:
        raise failure(owner, name, '64 lowercase hex digits', value)
    return value


def optional_sha256(owner: str, name: str, value: object) -> str | None:
    """Return `value` when it is None (nothing claimed) or a content address."""
    if value is None:
        return None
    if not isinstance(value, str) or SHA256_HEX_PATTERN.fullmatch(value) is None:
        raise failure(owner, name, 'None or 64 lowercase hex digits', value)
    return value


def text(owner: str, name: str, value: object) -> str:
    """Return `value` when it is a string."""
    if not isinstance(value, str):
        raise failure(owner, name, 'a string', value)
    return value


def boolean(owner: str, name: str, value: object) -> bool:
    """Return `value` when it is a bool."""
    if not isinstance(value, bool):
        raise failure(owner, name, 'a bool', value)
    return value


def enum_member(owner: str, name: str, value: object, enum: type[EnumT]) -> EnumT:
    """Return `value` as a member of the closed catalogue `enum`."""
    number = _as_int(value)
    # Enum's own value map: a dict lookup, where building the set of values per call was not.
    if number is not None and number in enum._value2member_map_:
        return enum(number)
    members = ', '.join(f'{member.name}={member.value}' for member in enum)
    raise failure(owner, name, f'one of {enum.__name__} ({members})', value)


def instance(owner: str, name: str, value: object, kind: type[T]) -> T:
    """Return `value` when it is an instance of `kind`."""
    if not isinstance(value, kind):
        raise failure(owner, name, f'a {kind.__name__}', value)
    return value


# --- field checks with their bounds bound (for a contract field's annotation) -----------------
# functools.partial, not closures: the bound call runs in C, with no Python frame of its own.

def integer_in(minimum: int = 0, maximum: int = UINT32_MAX) -> FieldCheck:
    """Return the check of an int in [minimum, maximum]."""
    return partial(integer, minimum=minimum, maximum=maximum)


def finite_at_least(minimum: float) -> FieldCheck:
    """Return the check of a finite float >= minimum."""
    return partial(finite_float, minimum=minimum)


def vector_of(length: int) -> FieldCheck:
    """Return the check of a tuple of `length` finite floats."""
    return partial(vector, length=length)


def member_of(enum: type[EnumT]) -> FieldCheck:
    """Return the check of a member of the closed catalogue `enum`."""
    return partial(enum_member, enum=enum)


def layout_version(owner: str, _name: str, value: object) -> int:
    """The schema_version field's check (see ``schema_version``)."""
    return schema_version(owner, value)


def _layout_version_is(owner: str, _name: str, value: object, version: int) -> int:
    if _as_int(value) != version:
        raise failure(owner, 'schema_version', f'{version}', value)
    return version


def layout_version_of(version: int) -> FieldCheck:
    """The schema_version check of a message whose layout changed (SPEC §5 v1.2: version 2)."""
    return partial(_layout_version_is, version=version)
