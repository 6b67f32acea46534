"""A bag's embedded ghost_interfaces schemas against the installed definitions.

A bag embeds the schema text each channel was recorded with, and a decoder built from that
text reads whatever layout the text claims. A schema that adds, removes, reorders or retypes a
field of a ghost_interfaces type makes the decoder read another message from the same bytes
(a decoy field read from padding). The verifier trusts the installed definitions only (SPEC
§5, amendments v1.3): ``ghost_core.msg_fields``, generated from ghost_interfaces/msg/*.msg, is
what the embedded text of every ghost type (and of the foreign types those use) must equal,
field for field: name and type as the .msg spells it, array sizes and string bounds included.
Constants and comments are not compared (they do not change a payload's layout).
"""

from __future__ import annotations

from typing import Any

from ghost_core.msg_fields import MESSAGE_FIELDS

from .mcap_ros2_shim import for_each_msgdef

__all__ = ['GHOST_PACKAGE', 'installed_definition_problems', 'installed_fields']

GHOST_PACKAGE = 'ghost_interfaces'

_PRIMITIVES = frozenset({'bool', 'byte', 'char', 'float32', 'float64', 'int8', 'uint8', 'int16',
                         'uint16', 'int32', 'uint32', 'int64', 'uint64', 'string', 'wstring'})


def _short(name: str) -> str:
    """``pkg/Type`` for ``pkg/msg/Type`` (and for ``pkg/Type``)."""
    parts = name.split('/')
    return f'{parts[0]}/{parts[-1]}' if len(parts) == 3 else name


def _qualified(spelled: str) -> str:
    """A .msg field type of a ghost_interfaces message, its message types package-qualified."""
    base, bracket, array = spelled.partition('[')
    core = base.split('<=')[0]
    if '/' not in core and core not in _PRIMITIVES:
        base = f'{GHOST_PACKAGE}/{base}'
    return f'{_short(base)}{bracket}{array}'


def installed_fields(type_name: str) -> tuple[tuple[str, str], ...] | None:
    """The installed fields of a type (``pkg/Type`` or ``pkg/msg/Type``), or None if unknown.

    Ghost types from ``MESSAGE_FIELDS`` by their short name, the foreign types it lists by
    ``pkg/Type``; every message type package-qualified.
    """
    short = _short(type_name)
    package, _, name = short.partition('/')
    fields = MESSAGE_FIELDS.get(name if package == GHOST_PACKAGE else short)
    if fields is None:
        return None
    return tuple((field, _qualified(spelled)) for field, spelled in fields)


def _spelled(field_type: Any) -> str:
    """A parsed field type (mcap_ros2's parser) as a package-qualified .msg type."""
    if field_type.is_primitive_type():
        base = str(field_type.type)
        bound = getattr(field_type, 'string_upper_bound', None)
        if bound is not None:
            base += f'<={bound}'
    else:
        base = f'{field_type.pkg_name}/{field_type.type}'
    if not field_type.is_array:
        return base
    if field_type.array_size is None:
        return f'{base}[]'
    if field_type.is_upper_bound:
        return f'{base}[<={field_type.array_size}]'
    return f'{base}[{field_type.array_size}]'


def _listed(fields: tuple[tuple[str, str], ...]) -> str:
    return ', '.join(f'{spelled} {name}' for name, spelled in fields) or 'no field'


def installed_definition_problems(schema_name: str, schema_text: str) -> tuple[str, ...]:
    """How a channel's embedded schema differs from the installed definitions (empty: none).

    Every ghost_interfaces type the text defines must be installed and equal its installed
    definition; the foreign types ``MESSAGE_FIELDS`` lists (Header, Time, Point, Vector3,
    Twist) likewise. One problem per type that differs, naming both field lists. Raises what
    the schema parser raises on a text it cannot parse (the caller says where).
    """
    embedded: dict[str, tuple[tuple[str, str], ...]] = {}

    def collect(full_name: str, short_name: str, msgdef: Any) -> None:
        embedded[_short(short_name)] = tuple((field.name, _spelled(field.type))
                                            for field in msgdef.fields)

    for_each_msgdef(schema_name, schema_text, collect)
    problems = []
    for short, fields in embedded.items():
        installed = installed_fields(short)
        if installed is None:
            if short.startswith(f'{GHOST_PACKAGE}/'):
                problems.append(f'{short} is not an installed {GHOST_PACKAGE} type')
            continue
        if fields != installed:
            problems.append(f'{short} is ({_listed(fields)}), the installed definition is '
                            f'({_listed(installed)})')
    return tuple(problems)
