"""Build rclpy messages from SPEC section 4 message dicts (the form ghost_core hashes).

The other way, message to dict, is ghost_core.hashing.hash_form, which reads rclpy messages
as well as decoded ones. Building a message from a dict and reading it back with hash_form
gives an equal dict, so a hash computed by ghost_core on the dict is the hash of what is
published.
"""

from collections.abc import Mapping
from typing import Any

__all__ = ['from_msg_dict']

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
