"""Convert between rclpy messages and SPEC section 4 message dicts (the form ghost_core hashes).

A message dict holds every field by its .msg name: nested messages as dicts, arrays as lists,
``builtin_interfaces/Time`` as ``{'sec', 'nanosec'}``, floats as floats. Converting a message to
a dict and back gives an equal message, and back again an equal dict, so a hash computed by
ghost_core on the dict is the hash of what is published.
"""

from collections.abc import Mapping
from typing import Any

__all__ = ['from_msg_dict', 'to_msg_dict', 'stamp_ns', 'time_from_ns']

_FLOAT_TYPES = frozenset({'float', 'double', 'float32', 'float64'})


def _is_message(value: Any) -> bool:
    return hasattr(value, 'get_fields_and_field_types')


def _plain(value: Any, type_name: str) -> Any:
    if _is_message(value):
        return to_msg_dict(value)
    if isinstance(value, (bytes, bytearray)):
        return list(value)
    if hasattr(value, 'tolist') and not isinstance(value, (int, float, bool, str)):
        value = value.tolist()  # numpy arrays and array.array
    if isinstance(value, (list, tuple)):
        element = type_name.split('[')[0].split('<')[-1].rstrip('>')
        return [_plain(v, element) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return list(value)
    base = type_name.split('[')[0]
    if base in _FLOAT_TYPES:
        return float(value)
    if base in ('octet', 'byte') and isinstance(value, bytes):
        return value[0]
    return value


def to_msg_dict(msg: Any) -> dict[str, Any]:
    """Return the SPEC section 4 dict of an rclpy message."""
    return {name: _plain(getattr(msg, name), type_name)
            for name, type_name in msg.get_fields_and_field_types().items()}


def from_msg_dict(msg_type: type, data: Mapping[str, Any]) -> Any:
    """Build an rclpy message of ``msg_type`` from a message dict (every field required)."""
    msg = msg_type()
    fields = msg.get_fields_and_field_types()
    unknown = set(data) - set(fields)
    if unknown:
        raise ValueError(f'{msg_type.__name__} has no field(s) {sorted(unknown)}')
    for name in fields:
        if name not in data:
            raise ValueError(f'{msg_type.__name__}.{name} is missing')
        current = getattr(msg, name)
        value = data[name]
        if _is_message(current):
            setattr(msg, name, from_msg_dict(type(current), value))
        else:
            setattr(msg, name, value)
    return msg


def stamp_ns(stamp: Any) -> int:
    """Integer nanoseconds of a ``builtin_interfaces/Time`` (message or dict)."""
    if isinstance(stamp, Mapping):
        return int(stamp['sec']) * 1_000_000_000 + int(stamp['nanosec'])
    return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)


def time_from_ns(ns: int) -> dict[str, int]:
    """The ``builtin_interfaces/Time`` dict of integer nanoseconds."""
    sec, nanosec = divmod(ns, 1_000_000_000)
    return {'sec': sec, 'nanosec': nanosec}
