"""The message-dict layer: every ghost contract to and from the dict of SPEC section 4.

One cohesive job (contract <-> message dict, every message), so one module past 400 lines.

Nothing here is written per message. For each ghost message, its fields (ghost_core.msg_fields,
generated from the .msg files) and its contract's dataclass fields and annotations give a field
table, built once at import: a reader per contract field, a writer per message field. A
contract that does not mirror its message (a field of one with no counterpart in the other)
fails the import, naming both. The parser is plain code, a loop over the readers. The dict
writer is generated from the writers as one dict literal, because bench/codegen.py measures it
at >= 1.5x a loop over the same table (docs/performance.md, "Generated code"); its source is in
linecache, so a traceback shows its lines and a debugger steps through them. The mapping between
a message field and contract fields is by name and type:

- ``std_msgs/Header header`` is the contract's ``stamp_ns`` and ``frame_id``;
- a ``builtin_interfaces/Time X`` is ``X_ns`` (integer ns); ``int | None`` when a ``bool``
  message field says whether it is present (PRESENCE_FLAGS; absent is a zero Time);
- a ``geometry_msgs/Point`` or ``Vector3`` is a 3-tuple of floats of the same name;
- a ``geometry_msgs/Twist X`` is two 3-tuples, ``X_linear``/``X_angular`` or
  ``linear_X``/``angular_X``;
- a nested ghost message is its contract; a fixed float array a tuple of floats;
- an unbounded integer array is a tuple of ints;
- an integer is an int, or the IntEnum the contract annotates; a string a str, a StrEnum, or
  ``str | None`` (None is ''); a float annotated ``float | None`` (and array elements so
  annotated) is NaN on the wire when None.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
import dataclasses
from enum import IntEnum, StrEnum
import linecache
import math
import numbers
from types import MappingProxyType, NoneType
import typing
from typing import Any, TypeVar

from ghost_core import _checks as check
from ghost_core import contracts
from ghost_core.errors import MessageFormatError
from ghost_core.hashing import content_address, IdentityMemo
from ghost_core.msg_fields import MESSAGE_FIELDS

__all__ = [
    'ADAPTER_RECORDS',
    'CONTRACTS',
    'MESSAGE_TYPES',
    'MsgDict',
    'PRESENCE_FLAGS',
    'message_address',
    'ns_to_stamp',
    'parse_actuator_command',
    'parse_belief_self_assessment',
    'parse_calibrated',
    'parse_calibration_history',
    'parse_decision',
    'parse_decision_rationale',
    'parse_forward_prediction',
    'parse_gate_emission',
    'parse_prediction_outcome',
    'parse_vehicle_status',
    'stamp_to_ns',
    'to_msg_dict',
]

#: A message dict: every field of the .msg by name (SPEC section 4).
MsgDict = dict[str, Any]

_NS_PER_S = 10**9
EnumT = TypeVar('EnumT', bound=IntEnum)
StrEnumT = TypeVar('StrEnumT', bound=StrEnum)

#: Ghost messages the agent neither reads nor writes, so with no contract here: an adapter's
#: record of the autopilot samples each of its outputs came from (SourceSamples: written by
#: px4_bridge, read by ghost_verify.bridge_rederive).
ADAPTER_RECORDS = frozenset({'SourceSamples'})
#: Every ghost message's contract, by .msg name: the contract class of that name, for every
#: message of the field table (ghost_core.msg_fields) that is not another package's.
CONTRACTS: Mapping[str, type] = MappingProxyType({
    name: getattr(contracts, name) for name in MESSAGE_FIELDS
    if '/' not in name and name not in ADAPTER_RECORDS
})

#: (message, Time field) -> the bool field saying whether the stamp is present.
PRESENCE_FLAGS: Mapping[tuple[str, str], str] = MappingProxyType({
    ('CalibrationHistory', 'most_recent_observed_stamp'): 'has_observed_stamp',
    ('BeliefSelfAssessment', 'confirmation_stamp'): 'has_confirmation',
    ('BeliefSelfAssessment', 'previous_stamp'): 'has_previous',
    ('DecisionRationale', 'vehicle_status_stamp'): 'has_vehicle_status',
})

_HEADER = 'std_msgs/Header'
_TIME = 'builtin_interfaces/Time'
_TWIST = 'geometry_msgs/Twist'
_VECTORS = frozenset({'geometry_msgs/Point', 'geometry_msgs/Vector3'})
_INTEGERS = frozenset({'byte', 'char', 'int8', 'uint8', 'int16', 'uint16', 'int32', 'uint32',
                       'int64', 'uint64'})
_FLOATS = frozenset({'float32', 'float64'})


# --- time -------------------------------------------------------------------------------------

def stamp_to_ns(d: Any, path: str = 'stamp') -> int:
    """Return a builtin_interfaces/Time as integer nanoseconds (>= 0).

    `d` is a {'sec', 'nanosec'} Mapping or a message with those attributes (rclpy, decoded);
    raise MessageFormatError naming `path` when it is not a valid stamp.
    """
    if not isinstance(d, Mapping):
        d = {'sec': getattr(d, 'sec', None), 'nanosec': getattr(d, 'nanosec', None)}
    sec = _int(d, 'sec', path)
    nanosec = _int(d, 'nanosec', path)
    if not 0 <= nanosec < _NS_PER_S:
        raise MessageFormatError(f'{path}.nanosec must be in [0, 1e9), got {nanosec!r}')
    if sec < 0:
        raise MessageFormatError(f'{path}.sec must be >= 0 (stamps are >= 0), got {sec!r}')
    return sec * _NS_PER_S + nanosec


def ns_to_stamp(ns: int) -> dict[str, int]:
    """Return integer nanoseconds (>= 0) as a builtin_interfaces/Time dict."""
    if isinstance(ns, bool) or not isinstance(ns, int) or ns < 0:
        raise MessageFormatError(f'a stamp must be an integer number of ns >= 0, got {ns!r}')
    sec, nanosec = divmod(ns, _NS_PER_S)
    return {'sec': sec, 'nanosec': nanosec}


# --- field readers (dict -> contract value) ----------------------------------------------------
# Parsers accept any Mapping (e.g. rosidl's OrderedDict) and ignore fields they do not know:
# SPEC section 3 allows extra fields. Shape errors raise MessageFormatError naming the path;
# invariant violations raise ContractError from the contract itself. Every reader of a message
# field takes (d, key, path, arg): `arg` is what the field's kind needs (an enum, a length, a
# nested parser...), None when it needs nothing.

def _get(d: Mapping[str, Any], key: str, path: str) -> Any:
    if not isinstance(d, Mapping):
        raise MessageFormatError(f'{path} must be a mapping, got {d!r}')
    if key not in d:
        raise MessageFormatError(f'{path}.{key} is missing')
    return d[key]


def _int(d: Mapping[str, Any], key: str, path: str, _arg: object = None) -> int:
    value = _get(d, key, path)
    if type(value) is int:
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise MessageFormatError(f'{path}.{key} must be an integer, got {value!r}')
    return int(value)


def _float(d: Mapping[str, Any], key: str, path: str, _arg: object = None) -> float:
    value = _get(d, key, path)
    if type(value) is float:
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise MessageFormatError(f'{path}.{key} must be a number, got {value!r}')
    return float(value)


def _enum(d: Mapping[str, Any], key: str, path: str, enum: type[EnumT]) -> EnumT:
    return check.enum_member(path, key, _int(d, key, path), enum)


def _str_enum(d: Mapping[str, Any], key: str, path: str, enum: type[StrEnumT]) -> StrEnumT:
    value = _str(d, key, path)
    if value not in {member.value for member in enum}:
        raise check.failure(path, key, f'one of {enum.__name__} ({", ".join(enum)})', value)
    return enum(value)


def _bool(d: Mapping[str, Any], key: str, path: str, _arg: object = None) -> bool:
    value = _get(d, key, path)
    if not isinstance(value, bool):
        raise MessageFormatError(f'{path}.{key} must be a bool, got {value!r}')
    return value


def _str(d: Mapping[str, Any], key: str, path: str, _arg: object = None) -> str:
    value = _get(d, key, path)
    if not isinstance(value, str):
        raise MessageFormatError(f'{path}.{key} must be a string, got {value!r}')
    return value


def _sub(d: Mapping[str, Any], key: str, path: str) -> Mapping[str, Any]:
    value = _get(d, key, path)
    if not isinstance(value, Mapping):
        raise MessageFormatError(f'{path}.{key} must be a mapping, got {value!r}')
    return value


def _time(d: Mapping[str, Any], key: str, path: str, _arg: object = None) -> int:
    return stamp_to_ns(_sub(d, key, path), f'{path}.{key}')


def _optional_time(d: Mapping[str, Any], key: str, path: str, flag: str) -> int | None:
    present = _bool(d, flag, path)
    stamp = _time(d, key, path)
    if not present and stamp != 0:
        raise MessageFormatError(
            f'{path}.{key} must be zero when {flag} is false, got {stamp!r} ns')
    return stamp if present else None


def _vec3(d: Mapping[str, Any], key: str, path: str,
          _arg: object = None) -> tuple[float, float, float]:
    point = _sub(d, key, path)
    where = f'{path}.{key}'
    return (_float(point, 'x', where), _float(point, 'y', where), _float(point, 'z', where))


def _floats(d: Mapping[str, Any], key: str, path: str, length: int) -> tuple[float, ...]:
    value = _get(d, key, path)
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise MessageFormatError(f'{path}.{key} must be {length} numbers, got {value!r}')
    items = list(value)
    if len(items) != length or any(
        isinstance(item, bool) or not isinstance(item, numbers.Real) for item in items
    ):
        raise MessageFormatError(f'{path}.{key} must be {length} numbers, got {value!r}')
    return tuple(float(item) for item in items)


def _ints(d: Mapping[str, Any], key: str, path: str, _arg: object = None) -> tuple[int, ...]:
    value = _get(d, key, path)
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise MessageFormatError(f'{path}.{key} must be a sequence of integers, got {value!r}')
    items = list(value)
    if any(isinstance(item, bool) or not isinstance(item, numbers.Integral) for item in items):
        raise MessageFormatError(f'{path}.{key} must be a sequence of integers, got {value!r}')
    return tuple(int(item) for item in items)


def _sha(d: Mapping[str, Any], key: str, path: str, _arg: object = None) -> str | None:
    value = _str(d, key, path)
    return value or None


def _header_stamp(d: Mapping[str, Any], key: str, path: str, _arg: object = None) -> int:
    return _time(_sub(d, key, path), 'stamp', f'{path}.{key}')


def _header_frame(d: Mapping[str, Any], key: str, path: str, _arg: object = None) -> str:
    return _str(_sub(d, key, path), 'frame_id', f'{path}.{key}')


def _twist_part(d: Mapping[str, Any], key: str, path: str,
                part: str) -> tuple[float, float, float]:
    return _vec3(_sub(d, key, path), part, f'{path}.{key}')


def _nested(d: Mapping[str, Any], key: str, path: str, parse: Parser) -> Any:
    return parse(_sub(d, key, path), f'{path}.{key}')


# --- field writers (contract -> dict value) ----------------------------------------------------

def _nan_if_none(value: float | None) -> float:
    # Not controlled (None) is NaN on the wire, as PX4 reads it; canonical JSON keeps NaN.
    return math.nan if value is None else value


def _point(v: tuple[float, ...]) -> MsgDict:
    return {'x': float(v[0]), 'y': float(v[1]), 'z': float(v[2])}


def _optional_stamp(ns: int | None) -> dict[str, int]:
    return ns_to_stamp(0 if ns is None else ns)


#: The expression of `c` (the contract) that writes each kind of message field, formatted with
#: the field's writer argument (contract field names; a nested message's name).
_WRITE_EXPRESSIONS: Mapping[str, str] = MappingProxyType({
    'header': "{{'stamp': ns_to_stamp(c.stamp_ns), 'frame_id': c.frame_id}}",
    'value': 'c.{0}',
    'int': 'int(c.{0})',
    'enum_value': 'c.{0}.value',
    'sha': "c.{0} or ''",
    'nan': '_nan_if_none(c.{0})',
    'floats': '[float(x) for x in c.{0}]',
    'ints': 'list(c.{0})',
    'nan_floats': '[_nan_if_none(x) for x in c.{0}]',
    'point': '_point(c.{0})',
    'time': 'ns_to_stamp(c.{0})',
    'present': 'c.{0} is not None',
    'optional_time': '_optional_stamp(c.{0})',
    'twist': "{{'linear': _point(c.{0}), 'angular': _point(c.{1})}}",
    'nested': '_write_{1}(c.{0})',
})


# --- a message's field table -------------------------------------------------------------------
# Per message, one reader per contract field and one writer per message field, found from its
# fields and its contract's. The parser is plain code, a loop over the readers. The dict writer
# is generated from the writers, once at import, as one dict literal: bench/codegen.py measures
# it at >= 1.5x a loop over the same table (docs/performance.md, "Generated code"). Its source is
# registered with linecache under '<ghost_core.wire: Name writer>', so that a traceback shows its
# lines and a debugger steps through them.

Parser = Callable[..., Any]
Writer = Callable[[Any], Any]
#: How one contract field is read: (contract field, reader, message field, reader argument).
_FieldReader = tuple[str, Callable[[Mapping[str, Any], str, str, Any], Any], str, Any]
#: How one message field is written: (message field, _WRITE_EXPRESSIONS key, its arguments).
_FieldWriter = tuple[str, str, tuple[str, ...]]
#: A message's field table: its readers (.msg order) and its writers (.msg order).
_Table = tuple[tuple[_FieldReader, ...], tuple[_FieldWriter, ...]]


def _allows_none(hint: Any) -> bool:
    args = typing.get_args(hint)
    if typing.get_origin(hint) is tuple:
        return any(_allows_none(arg) for arg in args)
    return NoneType in args


def _is_enum(hint: Any, base: type) -> bool:
    return isinstance(hint, type) and issubclass(hint, base)


_SCALAR_READERS: Mapping[str, Callable[..., Any]] = {
    **dict.fromkeys(_INTEGERS, _int), **dict.fromkeys(_FLOATS, _float),
    'bool': _bool, 'string': _str}


class _Fields:
    """The readers and writers of one message, from its fields and its contract's.

    `parsers` holds the parsers of the ghost messages it nests (readers call them).
    """

    def __init__(self, name: str, parsers: Mapping[str, Parser]) -> None:
        self.name = name
        self.contract = CONTRACTS[name]
        self.hints = typing.get_type_hints(self.contract)
        self.parsers = parsers
        self.readers: list[_FieldReader] = []
        self.writers: list[_FieldWriter] = []
        self.flags = {time: flag for (msg, time), flag in PRESENCE_FLAGS.items() if msg == name}

    def mismatch(self, detail: str) -> TypeError:
        return TypeError(f'contract {self.contract.__name__} does not mirror {self.name}.msg: '
                         f'{detail}')

    def hint(self, field: str, msg_field: str) -> Any:
        if field not in self.hints:
            raise self.mismatch(f'message field {msg_field!r} has no contract field {field!r}')
        return self.hints[field]

    def table(self) -> _Table:
        """The readers (in .msg order) and the writers (in .msg order, flags included)."""
        flags = set(self.flags.values())
        for key, msg_type in MESSAGE_FIELDS[self.name]:
            if key not in flags:
                self.field(key, msg_type)
        produced = [field for field, _, _, _ in self.readers]
        expected = [field.name for field in dataclasses.fields(self.contract)]
        if sorted(produced) != sorted(expected):
            missing = sorted(set(expected) - set(produced))
            raise self.mismatch(f'contract fields {missing} have no message field')
        order = {key: index for index, (key, _) in enumerate(MESSAGE_FIELDS[self.name])}
        self.writers.sort(key=lambda item: order[item[0]])
        return tuple(self.readers), tuple(self.writers)

    def field(self, key: str, msg_type: str) -> None:
        if msg_type == _HEADER:
            self.hint('stamp_ns', key)
            self.hint('frame_id', key)
            self.readers.append(('stamp_ns', _header_stamp, key, None))
            self.readers.append(('frame_id', _header_frame, key, None))
            self.writers.append((key, 'header', ()))
        elif msg_type == _TIME:
            self.time(key, f'{key}_ns')
        elif msg_type in _VECTORS:
            self.hint(key, key)
            self.readers.append((key, _vec3, key, None))
            self.writers.append((key, 'point', (key,)))
        elif msg_type == _TWIST:
            self.twist(key)
        elif msg_type in CONTRACTS:
            self.hint(key, key)
            self.readers.append((key, _nested, key, self.parsers[msg_type]))
            self.writers.append((key, 'nested', (key, msg_type)))
        elif msg_type.endswith('[]') and msg_type[:-2] in _INTEGERS:
            self.hint(key, key)
            self.readers.append((key, _ints, key, None))
            self.writers.append((key, 'ints', (key,)))
        elif msg_type.endswith(']') and msg_type.split('[')[0] in _FLOATS:
            length = int(msg_type.split('[')[1].rstrip(']'))
            self.readers.append((key, _floats, key, length))
            nan = _allows_none(self.hint(key, key))
            self.writers.append((key, 'nan_floats' if nan else 'floats', (key,)))
        else:
            self.scalar(key, msg_type, self.hint(key, key))

    def scalar(self, key: str, msg_type: str, hint: Any) -> None:
        if msg_type in _INTEGERS and _is_enum(hint, IntEnum):
            self.readers.append((key, _enum, key, hint))
            self.writers.append((key, 'int', (key,)))
        elif msg_type == 'string' and _is_enum(hint, StrEnum):
            self.readers.append((key, _str_enum, key, hint))
            self.writers.append((key, 'enum_value', (key,)))
        elif msg_type == 'string' and _allows_none(hint):
            self.readers.append((key, _sha, key, None))
            self.writers.append((key, 'sha', (key,)))
        elif msg_type in _FLOATS and _allows_none(hint):
            self.readers.append((key, _SCALAR_READERS[msg_type], key, None))
            self.writers.append((key, 'nan', (key,)))
        elif msg_type in _SCALAR_READERS:
            self.readers.append((key, _SCALAR_READERS[msg_type], key, None))
            self.writers.append((key, 'value', (key,)))
        else:
            raise self.mismatch(f'field {key!r} has type {msg_type}, which no contract reads')

    def time(self, key: str, field: str) -> None:
        if not _allows_none(self.hint(field, key)):
            self.readers.append((field, _time, key, None))
            self.writers.append((key, 'time', (field,)))
            return
        flag = self.flags.get(key)
        if flag is None:
            raise self.mismatch(f'{field} may be None, but no PRESENCE_FLAGS entry says where')
        self.readers.append((field, _optional_time, key, flag))
        self.writers.append((flag, 'present', (field,)))
        self.writers.append((key, 'optional_time', (field,)))

    def twist(self, key: str) -> None:
        names = next(((linear, angular) for linear, angular in
                      ((f'{key}_linear', f'{key}_angular'), (f'linear_{key}', f'angular_{key}'))
                      if linear in self.hints), None)
        if names is None:
            raise self.mismatch(f'twist {key!r} has no contract fields {key}_linear/_angular '
                                f'or linear_/angular_{key}')
        linear, angular = names
        self.hint(angular, key)
        self.readers.append((linear, _twist_part, key, 'linear'))
        self.readers.append((angular, _twist_part, key, 'angular'))
        self.writers.append((key, 'twist', names))


def _snake(name: str) -> str:
    return ''.join(f'_{char.lower()}' if char.isupper() else char for char in name).lstrip('_')


def _parser(name: str, contract: type, readers: tuple[_FieldReader, ...]) -> Parser:
    """The parser of one message: its readers in a loop, then the contract."""
    def parse(d: Any, path: str = name) -> Any:
        if not isinstance(d, Mapping):
            raise MessageFormatError(f'{path} must be a mapping, got {d!r}')
        return contract(**{field: read(d, key, path, arg) for field, read, key, arg in readers})

    parse.__name__ = parse.__qualname__ = f'parse_{_snake(name)}'
    parse.__doc__ = f'Return the {name} of a message dict (raise on invalid).'
    return parse


def _writer_source(writers: tuple[_FieldWriter, ...]) -> str:
    """The source of ``write(c)``, the message dict of a contract, from its field writers."""
    writes = ''.join(f'\n        {key!r}: {_WRITE_EXPRESSIONS[how].format(*args)},'
                     for key, how, args in writers)
    return f'def write(c):\n    return {{{writes}\n    }}\n'


def _writer(name: str, writers: tuple[_FieldWriter, ...], nested: Mapping[str, Writer]) -> Writer:
    """The generated dict writer of one message (nested: the writers of those it nests)."""
    source = _writer_source(writers)
    filename = f'<ghost_core.wire: {name} writer>'
    namespace: dict[str, Any] = {
        '__name__': __name__, 'ns_to_stamp': ns_to_stamp, '_point': _point,
        '_nan_if_none': _nan_if_none, '_optional_stamp': _optional_stamp,
        **{f'_write_{message}': write for message, write in nested.items()}}
    exec(compile(source, filename, 'exec'), namespace)  # noqa: S102 - built from the table
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    write: Writer = namespace['write']
    write.__name__ = write.__qualname__ = f'write_{_snake(name)}'
    return write


def _build() -> tuple[dict[str, _Table], dict[str, Parser], dict[type, Writer]]:
    """Every message's field table, parser and writer, each after the messages it nests."""
    tables: dict[str, _Table] = {}
    parsers: dict[str, Parser] = {}
    writers: dict[str, Writer] = {}
    remaining = list(CONTRACTS)
    while remaining:
        name = next(name for name in remaining
                    if all(t in parsers for _, t in MESSAGE_FIELDS[name] if t in CONTRACTS))
        remaining.remove(name)
        readers, field_writers = tables[name] = _Fields(name, parsers).table()
        parsers[name] = _parser(name, CONTRACTS[name], readers)
        writers[name] = _writer(name, field_writers, writers)
    return tables, parsers, {CONTRACTS[name]: write for name, write in writers.items()}


_TABLES, _PARSERS, _WRITERS = _build()


# --- the public layer -------------------------------------------------------------------------

def to_msg_dict(contract: object) -> MsgDict:
    """Return the message dict of any ghost message contract (SPEC section 4)."""
    write = _WRITERS.get(type(contract))
    if write is None:
        raise TypeError(f'no ghost message for {type(contract).__name__}')
    result: MsgDict = write(contract)
    return result


#: The addresses of the last few contracts (each is addressed where the chain cites it, and
#: again where it is published or compared).
_ADDRESSES: IdentityMemo[object, str] = IdentityMemo(64)


def _address(contract: object) -> str:
    return content_address(to_msg_dict(contract))


def message_address(contract: object) -> str:
    """Return H(msg) of a ghost message contract: content_address(to_msg_dict(contract))."""
    return _ADDRESSES.get(contract, _address)


parse_actuator_command: Callable[..., contracts.ActuatorCommand] = _PARSERS['ActuatorCommand']
parse_belief_self_assessment: Callable[..., contracts.BeliefSelfAssessment] = (
    _PARSERS['BeliefSelfAssessment'])
parse_calibrated: Callable[..., contracts.CalibratedSelfAssessment] = (
    _PARSERS['CalibratedSelfAssessment'])
parse_calibration_history: Callable[..., contracts.CalibrationHistory] = (
    _PARSERS['CalibrationHistory'])
parse_decision: Callable[..., contracts.Decision] = _PARSERS['Decision']
parse_decision_rationale: Callable[..., contracts.DecisionRationale] = (
    _PARSERS['DecisionRationale'])
parse_forward_prediction: Callable[..., contracts.ForwardPrediction] = (
    _PARSERS['ForwardPrediction'])
parse_gate_emission: Callable[..., contracts.GateEmission] = _PARSERS['GateEmission']
parse_prediction_outcome: Callable[..., contracts.PredictionOutcome] = (
    _PARSERS['PredictionOutcome'])
parse_vehicle_status: Callable[..., contracts.VehicleStatus] = _PARSERS['VehicleStatus']

#: Every ghost message: its .msg name -> (contract type, parser).
MESSAGE_TYPES: Mapping[str, tuple[type, Callable[..., object]]] = MappingProxyType({
    name: (contract, _PARSERS[name]) for name, contract in CONTRACTS.items()
})
