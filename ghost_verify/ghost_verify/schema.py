"""Check that a ghost channel's embedded schema defines every field the verifier reads."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
import contextlib
import io
from typing import Any

# mcap_ros2 decodes every message with the definitions this function parses from the schema
# text; using the same parser here means the check sees exactly what the decoder will build.
from ghost_bag.mcap_ros2_shim import for_each_msgdef
from ghost_core.msg_fields import MESSAGE_FIELDS

from .events import field_type, GHOST_SCHEMAS, GhostTopicKind, view_paths, VIEWS
from .history import HISTORY_FIELDS

__all__ = ['REQUIRED_FIELDS', 'FieldKind', 'quiet_parser', 'requirement_of', 'schema_problems']

#: The kinds of scalar field the verifier distinguishes (CDR width does not matter to it).
FieldKind = str
INTEGER: FieldKind = 'integer'
FLOAT: FieldKind = 'float'
BOOL: FieldKind = 'bool'
STRING: FieldKind = 'string'
#: A fixed array of three floats (GateEmission.velocity): the one array the verifier reads.
FLOAT_TRIPLE: FieldKind = 'float[3]'

_INTEGER_TYPES = frozenset({'byte', 'char', 'int8', 'uint8', 'int16', 'uint16', 'int32',
                            'uint32', 'int64', 'uint64'})
_KIND_OF_PRIMITIVE: Mapping[str, FieldKind] = {
    **dict.fromkeys(_INTEGER_TYPES, INTEGER),
    'float32': FLOAT, 'float64': FLOAT, 'bool': BOOL, 'string': STRING, 'wstring': STRING,
}

# A requirement maps a field name to a scalar kind, or to the requirement of a nested message.
Requirement = Mapping[str, 'FieldKind | Requirement']

# Read beyond the typed views (events.VIEWS): the history check parses every outcome whole
# (ghost_core.wire.parse_prediction_outcome) and recomputes each calibrated assessment's
# HISTORY_FIELDS from its window_size.
_ALSO_READ: Mapping[GhostTopicKind, tuple[str, ...]] = {
    GhostTopicKind.OUTCOME: tuple(name for name, _ in MESSAGE_FIELDS['PredictionOutcome']),
    GhostTopicKind.CALIBRATED: tuple(f'calibration_history.{name}'
                                     for name in (*HISTORY_FIELDS, 'window_size')),
}


def _kind(field_type: str, where: str) -> FieldKind | Requirement:
    """Return what the verifier requires of a field of `field_type` it reads whole."""
    if field_type in _KIND_OF_PRIMITIVE:
        return _KIND_OF_PRIMITIVE[field_type]
    if field_type in MESSAGE_FIELDS:
        return {name: _kind(nested, f'{where}.{name}')
                for name, nested in MESSAGE_FIELDS[field_type]}
    if _KIND_OF_PRIMITIVE.get(field_type.split('[')[0]) == FLOAT and field_type.endswith('[3]'):
        return FLOAT_TRIPLE
    raise TypeError(f'{where} is a {field_type}: the schema check has no kind for it')


def _merge(into: dict[str, Any], name: str, wanted: FieldKind | Requirement) -> None:
    present = into.get(name)
    if isinstance(present, dict) and not isinstance(wanted, str):
        for nested, kind in wanted.items():
            _merge(present, nested, kind)
    else:
        into[name] = dict(wanted) if not isinstance(wanted, str) else wanted


def requirement_of(message_type: str, paths: Iterable[str]) -> Requirement:
    """Return the requirement of reading `paths` (dotted .msg field paths) of a message.

    A path to a nested message requires all of it; fields come in .msg order.
    """
    def position(path: str) -> tuple[int, ...]:
        order, owner = [], message_type
        for name in path.split('.'):
            order.append([field for field, _ in MESSAGE_FIELDS[owner]].index(name))
            owner = field_type(owner, name)
        return tuple(order)

    tree: dict[str, Any] = {}
    for path in sorted(set(paths), key=position):
        *parents, leaf = path.split('.')
        node, owner = tree, message_type
        for name in parents:
            owner = field_type(owner, name)
            node = node.setdefault(name, {})
        _merge(node, leaf, _kind(field_type(owner, leaf), f'{message_type}.{path}'))
    return tree


_MESSAGE_TYPE_OF = {kind: name.rsplit('/', 1)[1] for name, kind in GHOST_SCHEMAS.items()}

#: Per ghost stream, the fields (SPEC section 3 names) that the judges, the chain check and the
#: history check read: the cycle stamp, the paths of the stream's typed view and what the
#: history check reads. A schema may define more (SPEC §3: extra fields allowed), never fewer.
REQUIRED_FIELDS: Mapping[GhostTopicKind, Requirement] = {
    kind: requirement_of(_MESSAGE_TYPE_OF[kind], (
        'header.stamp',
        *(view_paths(VIEWS[kind][1]) if kind in VIEWS else ()),
        *_ALSO_READ.get(kind, ()),
    ))
    for kind in GhostTopicKind
}

# builtin_interfaces/Time and Duration are known to the decoder without being in the schema.
_BUILTIN = {'builtin_interfaces/Time', 'builtin_interfaces/Duration'}


def schema_problems(
    kind: GhostTopicKind, schema_name: str, schema_text: str
) -> tuple[str, ...]:
    """Return what the schema lacks for the verifier to read `kind` correctly (empty if none).

    Each problem names a dotted field path: a field that is missing (with the names the
    schema defines instead, when they hint at a rename), an array where a single value is
    read, or a field of another kind (e.g. a float where an integer level is read).
    """
    definitions: dict[str, Any] = {}

    def collect(full_name: str, short_name: str, msgdef: Any) -> None:
        definitions[full_name] = msgdef
        definitions[short_name] = msgdef

    try:
        with quiet_parser():
            for_each_msgdef(schema_name, schema_text, collect)
    except Exception as err:  # noqa: BLE001 - the schema text comes from the bag
        return (f'the schema text cannot be parsed ({type(err).__name__}: '
                f'{" ".join(str(err).split())})',)
    top = definitions.get(schema_name)
    if top is None:
        return (f'the schema text does not define {schema_name}',)
    problems: list[str] = []
    _check(top, REQUIRED_FIELDS[kind], '', definitions, problems)
    return tuple(problems)


@contextlib.contextmanager
def quiet_parser() -> Iterator[None]:
    """Silence the ROS message parser, which prints its complaints to stderr.

    The verifier turns them into its own one-line error instead. (This swaps sys.stderr for
    the duration of a parse: the verifier is single-threaded.)
    """
    with contextlib.redirect_stderr(io.StringIO()):
        yield


def _check(
    msgdef: Any,
    requirement: Requirement,
    prefix: str,
    definitions: Mapping[str, Any],
    problems: list[str],
) -> None:
    fields = {field.name: field for field in msgdef.fields}
    missing = [name for name in requirement if name not in fields]
    if missing:
        unknown = sorted(name for name in fields if name not in requirement)
        hint = f' (its other fields there: {", ".join(unknown)})' if unknown else ''
        problems.append(
            'missing ' + ', '.join(repr(prefix + name) for name in missing) + hint
        )
    for name, wanted in requirement.items():
        field = fields.get(name)
        if field is None:
            continue
        path = prefix + name
        ftype = field.type
        if wanted == FLOAT_TRIPLE:
            if not (ftype.is_array and ftype.is_primitive_type()
                    and _KIND_OF_PRIMITIVE.get(ftype.type) == FLOAT
                    and ftype.array_size == 3 and not ftype.is_upper_bound):
                problems.append(f'{path!r} is {ftype}, expected a float[3] array')
            continue
        if ftype.is_array:
            problems.append(f'{path!r} is an array, expected a single value')
            continue
        if isinstance(wanted, str):
            found = _KIND_OF_PRIMITIVE.get(ftype.type) if ftype.is_primitive_type() else None
            if found != wanted:
                problems.append(f'{path!r} is {ftype}, expected {_article(wanted)}')
            continue
        if ftype.is_primitive_type():
            problems.append(f'{path!r} is {ftype}, expected a message')
            continue
        nested_name = f'{ftype.pkg_name}/{ftype.type}'
        nested = definitions.get(nested_name)
        if nested is None and nested_name in _BUILTIN:
            # The decoder's own definition: sec and nanosec, both integers.
            continue
        if nested is None:
            problems.append(f'{path!r} has type {nested_name}, which the schema does not define')
            continue
        _check(nested, wanted, f'{path}.', definitions, problems)


def _article(kind: FieldKind) -> str:
    return f'an {kind}' if kind[0] in 'aeiou' else f'a {kind}'
