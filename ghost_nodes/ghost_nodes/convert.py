"""Build rclpy messages from SPEC section 4 message dicts (the form ghost_core hashes).

The other way, message to dict, is ghost_core.hashing.hash_form, which reads rclpy messages
as well as decoded ones. Building a message from a dict and reading it back with hash_form
gives an equal dict, so a hash computed by ghost_core on the dict is the hash of what is
published.
"""

from collections.abc import Mapping
from typing import Any

__all__ = ['from_msg_dict']

#: Per message class, found once from a probe instance: whether this process checks fields
#: (rclpy's ROS_PYTHON_CHECK_FIELDS; the setters then check every value as they would), and per
#: field its name and, for a nested message, its class. Building is a loop over it (plain code:
#: builders generated per class were not 1.5x faster, bench/codegen.py).
_FieldTable = tuple[bool, tuple[tuple[str, type[Any] | None], ...]]
_field_tables: dict[type[Any], _FieldTable] = {}


def _field_table(msg_type: type[Any]) -> _FieldTable:
    probe = msg_type()
    fields = []
    for name in msg_type.get_fields_and_field_types():
        value = getattr(probe, name)
        fields.append((name, type(value) if hasattr(value, 'get_fields_and_field_types')
                       else None))
    table = _field_tables[msg_type] = (probe._check_fields, tuple(fields))
    return table


def from_msg_dict(msg_type: type[Any], data: Mapping[str, Any]) -> Any:
    """Build an rclpy message of ``msg_type`` from a message dict (every field required)."""
    table = _field_tables.get(msg_type)
    check_fields, fields = table if table is not None else _field_table(msg_type)
    if len(data) != len(fields):
        unknown = sorted(set(data) - {name for name, _ in fields})
        if unknown:
            raise ValueError(f'{msg_type.__name__} has no field(s) {unknown}')
    # Not msg_type(): its __init__ builds a default for every nested message, which the fields
    # below would replace at once. Every field is set through its public setter.
    msg = object.__new__(msg_type)
    msg._check_fields = check_fields
    for name, nested in fields:
        try:
            value = data[name]
        except KeyError:
            raise ValueError(f'{msg_type.__name__}.{name} is missing') from None
        setattr(msg, name, value if nested is None else from_msg_dict(nested, value))
    return msg
