"""The canonical JSON and the SHA-256 content address of SPEC section 4."""

from __future__ import annotations

from collections.abc import Callable, Mapping
import hashlib
import json
import re
from typing import Any, cast, Generic, TypeVar

__all__ = ['IdentityMemo', 'SHA256_HEX_PATTERN', 'canonical_json', 'content_address',
           'hash_form', 'is_sha256_hex']

_K = TypeVar('_K')
_V = TypeVar('_V')

#: A content address: 64 lowercase hexadecimal digits.
SHA256_HEX_PATTERN = re.compile(r'[0-9a-f]{64}')


def canonical_json(obj: object) -> str:
    """Return the canonical JSON text of `obj` (sorted keys, no spaces, UTF-8 kept, NaN allowed).

    This is exactly the serialisation SPEC section 4 names; it must never change, because every
    content address in every recorded bag depends on it.
    """
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(',', ':'))


def content_address(obj: Mapping[str, object]) -> str:
    """Return H(obj): the lowercase hex SHA-256 of the UTF-8 bytes of its canonical JSON."""
    return hashlib.sha256(canonical_json(obj).encode('utf-8')).hexdigest()


class IdentityMemo(Generic[_K, _V]):
    """What a pure function gave for the last few immutable objects, by identity.

    A cycle's message is addressed where it is made (the chain cites it) and again where it
    is compared or published: the same frozen object, so its address is taken once. Each
    entry keeps its object, so an id is never reused while remembered; at most `size` entries
    (the oldest go first). Only for frozen objects that nothing mutates after construction.
    """

    __slots__ = ('_size', '_values')

    def __init__(self, size: int) -> None:
        self._size = size
        self._values: dict[int, tuple[_K, _V]] = {}

    def get(self, obj: _K, compute: Callable[[_K], _V]) -> _V:
        """Return compute(obj), computed once while `obj` is remembered."""
        found = self._values.get(id(obj))
        if found is not None and found[0] is obj:
            return found[1]
        value = compute(obj)
        values = self._values
        if len(values) >= self._size:
            del values[next(iter(values))]
        values[id(obj)] = (obj, value)
        return value


def is_sha256_hex(value: object) -> bool:
    """Return True when `value` is a string of exactly 64 lowercase hexadecimal digits."""
    return isinstance(value, str) and SHA256_HEX_PATTERN.fullmatch(value) is not None


# --- any message -> the dict H is defined on ---------------------------------------------------
# One function for every form a message takes: an rclpy message (get_fields_and_field_types,
# numpy arrays for fixed arrays), a decoded one (rosbags / mcap_ros2 / ghost_verify's own CDR
# decoder: __slots__ objects) or a Mapping. Per message class, a field table (each field's name
# and how its value converts) is built once; the conversion is a loop over it (plain code:
# converters generated per class were not 1.5x faster, bench/codegen.py).

_FLOAT_TYPES = frozenset({'float', 'double', 'float32', 'float64'})
#: A message class's field table: (field name, its conversion, or None for the value as is);
#: None for a Mapping class (its items, each value converted by _plain).
_FieldTable = tuple[tuple[str, Callable[[Any], Any] | None], ...] | None
_field_tables: dict[type, _FieldTable] = {}


def hash_form(msg: object) -> dict[str, Any]:
    """Return the SPEC section 4 dict of a message: every field by its .msg name.

    Nested messages become dicts, arrays lists, byte and uint8 arrays lists of ints, float
    fields floats; other scalars keep their type. Raise TypeError for a value that is not a
    message (no fields).
    """
    try:
        table = _field_tables[type(msg)]
    except KeyError:
        table = _field_tables[type(msg)] = _field_table(type(msg))
    if table is None:
        return {name: _plain(value) for name, value in cast(Mapping[str, Any], msg).items()}
    return {name: getattr(msg, name) if convert is None else convert(getattr(msg, name))
            for name, convert in table}


def _field_table(msg_type: type) -> _FieldTable:
    if issubclass(msg_type, Mapping):
        return None
    fields = getattr(msg_type, 'get_fields_and_field_types', None)
    if callable(fields):
        # rclpy gives scalars as Python values; only floats (an int may be assigned to a float
        # field), arrays and nested messages need converting, by what the field's type says.
        return tuple((name, _rclpy_field(type_name)) for name, type_name in fields().items())
    names = getattr(msg_type, '__slots__', None)
    # A decoded message may have no fields at all (a .msg of constants only): its form is {}.
    if isinstance(names, (list, tuple)):
        return tuple((name, _plain) for name in names)
    raise TypeError(f'a value of type {msg_type.__name__} is not a message (it has no fields)')


def _plain(value: Any) -> Any:
    kind = type(value)
    if kind is int or kind is float or kind is str or kind is bool:
        return value
    if isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return list(bytes(value))
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    tolist = getattr(value, 'tolist', None)
    if callable(tolist):  # numpy arrays and scalars, array.array
        plain = tolist()
        return [_plain(item) for item in plain] if isinstance(plain, list) else plain
    return hash_form(value)


def _rclpy_field(type_name: str) -> Callable[[Any], Any] | None:
    if type_name.startswith('sequence<') or type_name.endswith(']'):
        element = type_name.removeprefix('sequence<').split('[')[0].split(',')[0].rstrip('>')
        if element in ('byte', 'octet'):
            return _bytes
        return _plain
    if type_name in _FLOAT_TYPES:
        return float
    if '/' in type_name:
        return hash_form
    return None


def _bytes(values: Any) -> list[int]:
    return [_byte(item) for item in values]


def _byte(value: Any) -> int:
    return value[0] if isinstance(value, (bytes, bytearray)) else int(value)
