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

# Per message class, what each field is: computed once (it is on every message's path).
_Plan = tuple[tuple[str, str, 'type | None'], ...]
_plans: dict[type[Any], _Plan] = {}


def _plan(msg_type: type[Any]) -> _Plan:
    plan = _plans.get(msg_type)
    if plan is None:
        probe = msg_type()
        plan = tuple(
            (name, type_name,
             type(getattr(probe, name)) if _is_message(getattr(probe, name)) else None)
            for name, type_name in msg_type.get_fields_and_field_types().items())
        _plans[msg_type] = plan
    return plan


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
    base = type_name.split('[')[0]
    if base in _FLOAT_TYPES:
        return float(value)
    return value


def to_msg_dict(msg: Any) -> dict[str, Any]:
    """Return the SPEC section 4 dict of an rclpy message."""
    out: dict[str, Any] = {}
    for name, type_name, nested in _plan(type(msg)):
        value = getattr(msg, name)
        if nested is not None:
            out[name] = to_msg_dict(value)
        elif type(value) is str or type(value) is int or type(value) is bool:
            out[name] = value
        else:
            out[name] = _plain(value, type_name)
    return out


def from_msg_dict(msg_type: type[Any], data: Mapping[str, Any]) -> Any:
    """Build an rclpy message of ``msg_type`` from a message dict (every field required)."""
    plan = _plan(msg_type)
    if len(data) != len(plan):
        known = {name for name, _, _ in plan}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f'{msg_type.__name__} has no field(s) {unknown}')
    msg = msg_type()
    for name, _type_name, nested in plan:
        try:
            value = data[name]
        except KeyError:
            raise ValueError(f'{msg_type.__name__}.{name} is missing') from None
        setattr(msg, name, from_msg_dict(nested, value) if nested is not None else value)
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
