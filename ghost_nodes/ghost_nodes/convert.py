"""Build rclpy messages from SPEC section 4 message dicts (the form ghost_core hashes).

The other way, message to dict, is ghost_core.hashing.hash_form, which reads rclpy messages
as well as decoded ones. Building a message from a dict and reading it back with hash_form
gives an equal dict, so a hash computed by ghost_core on the dict is the hash of what is
published.
"""

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ['from_msg_dict']

# Per message class, a builder compiled once (it is on every message's path).
_Builder = Callable[[Mapping[str, Any]], Any]
_builders: dict[type[Any], _Builder] = {}


def _is_message(value: Any) -> bool:
    return hasattr(value, 'get_fields_and_field_types')


def _builder(msg_type: type[Any]) -> _Builder:
    builder = _builders.get(msg_type)
    if builder is not None:
        return builder
    # A probe says which fields hold nested messages, and whether this process checks fields
    # (rclpy's ROS_PYTHON_CHECK_FIELDS; the setters then check every value as they would).
    probe = msg_type()
    check_fields = probe._check_fields
    names = tuple(msg_type.get_fields_and_field_types())
    nested = {name: _builder(type(getattr(probe, name))) for name in names
              if _is_message(getattr(probe, name))}
    fields = tuple((name, nested.get(name)) for name in names)
    create: Callable[[type[Any]], Any] = object.__new__

    def build(data: Mapping[str, Any]) -> Any:
        if len(data) != len(fields):
            unknown = sorted(set(data) - set(names))
            if unknown:
                raise ValueError(f'{msg_type.__name__} has no field(s) {unknown}')
        # Not msg_type(): its __init__ builds a default for every nested message, which the
        # fields below would replace at once. Every field is set through its public setter.
        msg = create(msg_type)
        msg._check_fields = check_fields
        for name, build_nested in fields:
            try:
                value = data[name]
            except KeyError:
                raise ValueError(f'{msg_type.__name__}.{name} is missing') from None
            setattr(msg, name, build_nested(value) if build_nested is not None else value)
        return msg

    _builders[msg_type] = build
    return build


def from_msg_dict(msg_type: type[Any], data: Mapping[str, Any]) -> Any:
    """Build an rclpy message of ``msg_type`` from a message dict (every field required)."""
    return _builder(msg_type)(data)
