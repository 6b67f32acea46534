"""The message-dict layer: every ghost contract to and from the dict of SPEC section 4.

Nothing here is written per message. For each ghost message, its fields (ghost_core.msg_fields,
generated from the .msg files) and its contract's dataclass fields and annotations give a
converter each way, compiled once at import; a contract that does not mirror its message (a
field of one with no counterpart in the other) fails the import, naming both. The mapping
between a message field and contract fields is by name and type:

- ``std_msgs/Header header`` is the contract's ``stamp_ns`` and ``frame_id``;
- a ``builtin_interfaces/Time X`` is ``X_ns`` (integer ns); ``int | None`` when a ``bool``
  message field says whether it is present (PRESENCE_FLAGS; absent is a zero Time);
- a ``geometry_msgs/Point`` or ``Vector3`` is a 3-tuple of floats of the same name;
- a ``geometry_msgs/Twist X`` is two 3-tuples, ``X_linear``/``X_angular`` or
  ``linear_X``/``angular_X``;
- a nested ghost message is its contract; a fixed float array a tuple of floats;
- an integer is an int, or the IntEnum the contract annotates; a string a str, a StrEnum, or
  ``str | None`` (None is ''); a float annotated ``float | None`` (and array elements so
  annotated) is NaN on the wire when None.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
import dataclasses
from enum import IntEnum, StrEnum
import math
import numbers
from types import MappingProxyType, NoneType
import typing
from typing import Any, TypeVar

from ghost_core import _checks as check
from ghost_core import contracts
from ghost_core.errors import MessageFormatError
from ghost_core.hashing import content_address
from ghost_core.msg_fields import MESSAGE_FIELDS

__all__ = [
    'CONTRACTS',
    'MESSAGE_TYPES',
    'MsgDict',
    'PRESENCE_FLAGS',
    'message_address',
    'ns_to_stamp',
    'parse_action_emission',
    'parse_actuator_command',
    'parse_axis_assessment',
    'parse_belief_self_assessment',
    'parse_calibrated',
    'parse_calibrated_self_assessment',
    'parse_calibration_history',
    'parse_decision',
    'parse_decision_rationale',
    'parse_forward_prediction',
    'parse_gate_emission',
    'parse_prediction_outcome',
    'stamp_to_ns',
    'to_msg_dict',
]

#: A message dict: every field of the .msg by name (SPEC section 4).
MsgDict = dict[str, Any]

_NS_PER_S = 10**9
EnumT = TypeVar('EnumT', bound=IntEnum)
StrEnumT = TypeVar('StrEnumT', bound=StrEnum)

#: Every ghost message's contract, by .msg name: the contract class of that name, for every
#: message of the field table (ghost_core.msg_fields) that is not another package's.
CONTRACTS: Mapping[str, type] = MappingProxyType({
    name: getattr(contracts, name) for name in MESSAGE_FIELDS if '/' not in name
})

#: (message, Time field) -> the bool field saying whether the stamp is present.
PRESENCE_FLAGS: Mapping[tuple[str, str], str] = MappingProxyType({
    ('CalibrationHistory', 'most_recent_observed_stamp'): 'has_observed_stamp',
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
# invariant violations raise ContractError from the contract itself.

def _get(d: Mapping[str, Any], key: str, path: str) -> Any:
    if not isinstance(d, Mapping):
        raise MessageFormatError(f'{path} must be a mapping, got {d!r}')
    if key not in d:
        raise MessageFormatError(f'{path}.{key} is missing')
    return d[key]


_NumberT = TypeVar('_NumberT', int, float)


def _number(d: Mapping[str, Any], key: str, path: str, exact: type[_NumberT],
            abstract: type[Any], what: str) -> _NumberT:
    value = _get(d, key, path)
    if type(value) is exact:
        return value
    if isinstance(value, bool) or not isinstance(value, abstract):
        raise MessageFormatError(f'{path}.{key} must be {what}, got {value!r}')
    return exact(value)


def _int(d: Mapping[str, Any], key: str, path: str) -> int:
    return _number(d, key, path, int, numbers.Integral, 'an integer')


def _float(d: Mapping[str, Any], key: str, path: str) -> float:
    return _number(d, key, path, float, numbers.Real, 'a number')


def _enum(d: Mapping[str, Any], key: str, path: str, enum: type[EnumT]) -> EnumT:
    return check.enum_member(path, key, _int(d, key, path), enum)


def _str_enum(d: Mapping[str, Any], key: str, path: str, enum: type[StrEnumT]) -> StrEnumT:
    value = _str(d, key, path)
    if value not in {member.value for member in enum}:
        raise check.failure(path, key, f'one of {enum.__name__} ({", ".join(enum)})', value)
    return enum(value)


def _bool(d: Mapping[str, Any], key: str, path: str) -> bool:
    value = _get(d, key, path)
    if not isinstance(value, bool):
        raise MessageFormatError(f'{path}.{key} must be a bool, got {value!r}')
    return value


def _str(d: Mapping[str, Any], key: str, path: str) -> str:
    value = _get(d, key, path)
    if not isinstance(value, str):
        raise MessageFormatError(f'{path}.{key} must be a string, got {value!r}')
    return value


def _sub(d: Mapping[str, Any], key: str, path: str) -> Mapping[str, Any]:
    value = _get(d, key, path)
    if not isinstance(value, Mapping):
        raise MessageFormatError(f'{path}.{key} must be a mapping, got {value!r}')
    return value


def _time(d: Mapping[str, Any], key: str, path: str) -> int:
    return stamp_to_ns(_sub(d, key, path), f'{path}.{key}')


def _vec3(d: Mapping[str, Any], key: str, path: str) -> tuple[float, float, float]:
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


def _sha(d: Mapping[str, Any], key: str, path: str) -> str | None:
    value = _str(d, key, path)
    return value or None



# --- compiling a message's converters --------------------------------------------------------
# Each message compiles to two plain functions, built once from expression source (so a message
# is converted by straight-line code, not by walking a field table).

Parser = Callable[..., Any]
Writer = Callable[[Any], Any]


def _nan_if_none(value: float | None) -> float:
    # Not controlled (None) is NaN on the wire, as PX4 reads it; canonical JSON keeps NaN.
    return math.nan if value is None else value


def _point(v: tuple[float, ...]) -> MsgDict:
    return {'x': float(v[0]), 'y': float(v[1]), 'z': float(v[2])}


def _optional_time(d: Mapping[str, Any], key: str, flag: str, path: str) -> int | None:
    present = _bool(d, flag, path)
    stamp = _time(d, key, path)
    if not present and stamp != 0:
        raise MessageFormatError(
            f'{path}.{key} must be zero when {flag} is false, got {stamp!r} ns')
    return stamp if present else None


def _optional_stamp(ns: int | None) -> dict[str, int]:
    return ns_to_stamp(0 if ns is None else ns)


def _not_a_mapping(d: object, path: str) -> MessageFormatError:
    return MessageFormatError(f'{path} must be a mapping, got {d!r}')


def _allows_none(hint: Any) -> bool:
    args = typing.get_args(hint)
    if typing.get_origin(hint) is tuple:
        return any(_allows_none(arg) for arg in args)
    return NoneType in args


def _is_enum(hint: Any, base: type) -> bool:
    return isinstance(hint, type) and issubclass(hint, base)


# What reads a scalar field {key} of d (the number checks inlined: this is the hot path).
_SCALAR_READERS = {
    **dict.fromkeys(_INTEGERS, "_number(d, {key!r}, path, int, _Integral, 'an integer')"),
    **dict.fromkeys(_FLOATS, "_number(d, {key!r}, path, float, _Real, 'a number')"),
    'bool': '_bool(d, {key!r}, path)', 'string': '_str(d, {key!r}, path)'}
_Integral, _Real = numbers.Integral, numbers.Real


class _Compiler:
    """Writes the parser and the dict writer of one message from its fields and its contract.

    Readers are expressions of `d` (the message dict) and `path`; writers expressions of `c`
    (the contract). Names they use beyond the module's helpers go into `names`.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.contract = CONTRACTS[name]
        self.hints = typing.get_type_hints(self.contract)
        self.readers: list[tuple[str, str]] = []
        self.writers: list[tuple[str, str]] = []
        self.names: dict[str, object] = {}
        self.flags = {time: flag for (msg, time), flag in PRESENCE_FLAGS.items() if msg == name}

    def mismatch(self, detail: str) -> TypeError:
        return TypeError(f'contract {self.contract.__name__} does not mirror {self.name}.msg: '
                         f'{detail}')

    def hint(self, field: str, msg_field: str) -> Any:
        if field not in self.hints:
            raise self.mismatch(f'message field {msg_field!r} has no contract field {field!r}')
        return self.hints[field]

    def source(self) -> str:
        flags = set(self.flags.values())
        for key, msg_type in MESSAGE_FIELDS[self.name]:
            if key not in flags:
                self.field(key, msg_type)
        produced = [field for field, _ in self.readers]
        expected = [field.name for field in dataclasses.fields(self.contract)]
        if sorted(produced) != sorted(expected):
            missing = sorted(set(expected) - set(produced))
            raise self.mismatch(f'contract fields {missing} have no message field')
        order = {key: index for index, (key, _) in enumerate(MESSAGE_FIELDS[self.name])}
        self.writers.sort(key=lambda item: order[item[0]])
        reads = ''.join(f'\n        {field}={expr},' for field, expr in self.readers)
        writes = ''.join(f'\n        {key!r}: {expr},' for key, expr in self.writers)
        return (f'def parse(d, path={self.name!r}):\n'
                f'    if not isinstance(d, Mapping):\n'
                f'        raise _not_a_mapping(d, path)\n'
                f'    return _contract({reads}\n    )\n\n\n'
                f'def write(c):\n'
                f'    return {{{writes}\n    }}\n')

    def field(self, key: str, msg_type: str) -> None:
        if msg_type == _HEADER:
            self.hint('stamp_ns', key)
            self.hint('frame_id', key)
            where = f"path + '.{key}'"
            self.readers.append(('stamp_ns', f"_time(_sub(d, {key!r}, path), 'stamp', {where})"))
            self.readers.append(('frame_id',
                                 f"_str(_sub(d, {key!r}, path), 'frame_id', {where})"))
            self.writers.append((key, "{'stamp': ns_to_stamp(c.stamp_ns), "
                                      "'frame_id': c.frame_id}"))
        elif msg_type == _TIME:
            self.time(key, f'{key}_ns')
        elif msg_type in _VECTORS:
            self.hint(key, key)
            self.readers.append((key, f'_vec3(d, {key!r}, path)'))
            self.writers.append((key, f'_point(c.{key})'))
        elif msg_type == _TWIST:
            self.twist(key)
        elif msg_type in CONTRACTS:
            self.hint(key, key)
            self.readers.append(
                (key, f"_parse_{msg_type}(_sub(d, {key!r}, path), path + '.{key}')"))
            self.writers.append((key, f'_write_{msg_type}(c.{key})'))
        elif msg_type.endswith(']') and msg_type.split('[')[0] in _FLOATS:
            length = int(msg_type.split('[')[1].rstrip(']'))
            self.readers.append((key, f'_floats(d, {key!r}, path, {length})'))
            convert = '_nan_if_none' if _allows_none(self.hint(key, key)) else 'float'
            self.writers.append((key, f'[{convert}(x) for x in c.{key}]'))
        else:
            self.scalar(key, msg_type, self.hint(key, key))

    def scalar(self, key: str, msg_type: str, hint: Any) -> None:
        if msg_type in _INTEGERS and _is_enum(hint, IntEnum):
            self.names[hint.__name__] = hint
            self.readers.append((key, f'_enum(d, {key!r}, path, {hint.__name__})'))
            self.writers.append((key, f'int(c.{key})'))
        elif msg_type == 'string' and _is_enum(hint, StrEnum):
            self.names[hint.__name__] = hint
            self.readers.append((key, f'_str_enum(d, {key!r}, path, {hint.__name__})'))
            self.writers.append((key, f'c.{key}.value'))
        elif msg_type == 'string' and _allows_none(hint):
            self.readers.append((key, f'_sha(d, {key!r}, path)'))
            self.writers.append((key, f"c.{key} or ''"))
        elif msg_type in _FLOATS and _allows_none(hint):
            self.readers.append((key, _SCALAR_READERS[msg_type].format(key=key)))
            self.writers.append((key, f'_nan_if_none(c.{key})'))
        elif msg_type in _SCALAR_READERS:
            self.readers.append((key, _SCALAR_READERS[msg_type].format(key=key)))
            self.writers.append((key, f'c.{key}'))
        else:
            raise self.mismatch(f'field {key!r} has type {msg_type}, which no contract reads')

    def time(self, key: str, field: str) -> None:
        if not _allows_none(self.hint(field, key)):
            self.readers.append((field, f'_time(d, {key!r}, path)'))
            self.writers.append((key, f'ns_to_stamp(c.{field})'))
            return
        flag = self.flags.get(key)
        if flag is None:
            raise self.mismatch(f'{field} may be None, but no PRESENCE_FLAGS entry says where')
        self.readers.append((field, f'_optional_time(d, {key!r}, {flag!r}, path)'))
        self.writers.append((flag, f'c.{field} is not None'))
        self.writers.append((key, f'_optional_stamp(c.{field})'))

    def twist(self, key: str) -> None:
        names = next(((linear, angular) for linear, angular in
                      ((f'{key}_linear', f'{key}_angular'), (f'linear_{key}', f'angular_{key}'))
                      if linear in self.hints), None)
        if names is None:
            raise self.mismatch(f'twist {key!r} has no contract fields {key}_linear/_angular '
                                f'or linear_/angular_{key}')
        linear, angular = names
        self.hint(angular, key)
        where = f"path + '.{key}'"
        self.readers.append((linear, f"_vec3(_sub(d, {key!r}, path), 'linear', {where})"))
        self.readers.append((angular, f"_vec3(_sub(d, {key!r}, path), 'angular', {where})"))
        self.writers.append((key, f"{{'linear': _point(c.{linear}), "
                                  f"'angular': _point(c.{angular})}}"))


def _snake(name: str) -> str:
    return ''.join(f'_{char.lower()}' if char.isupper() else char for char in name).lstrip('_')


def _compile_all() -> tuple[dict[str, Parser], dict[type, Writer]]:
    parsers: dict[str, Parser] = {}
    writers: dict[str, Writer] = {}
    remaining = list(CONTRACTS)
    while remaining:
        # A message compiles after the ghost messages it nests.
        name = next(name for name in remaining
                    if all(t in parsers for _, t in MESSAGE_FIELDS[name] if t in CONTRACTS))
        remaining.remove(name)
        compiler = _Compiler(name)
        source = compiler.source()
        namespace: dict[str, Any] = {
            **globals(), **compiler.names, '_contract': compiler.contract,
            **{f'_parse_{nested}': parse for nested, parse in parsers.items()},
            **{f'_write_{nested}': write for nested, write in writers.items()},
        }
        exec(compile(source, f'<ghost_core.wire: {name}>', 'exec'), namespace)  # noqa: S102
        parse, write = namespace['parse'], namespace['write']
        parse.__name__ = parse.__qualname__ = f'parse_{_snake(name)}'
        parse.__doc__ = f'Return the {name} of a message dict (raise on invalid).'
        parsers[name], writers[name] = parse, write
    return parsers, {CONTRACTS[name]: writer for name, writer in writers.items()}


_PARSERS, _WRITERS = _compile_all()


# --- the public layer -------------------------------------------------------------------------

def to_msg_dict(contract: object) -> MsgDict:
    """Return the message dict of any ghost message contract (SPEC section 4)."""
    write = _WRITERS.get(type(contract))
    if write is None:
        raise TypeError(f'no ghost message for {type(contract).__name__}')
    result: MsgDict = write(contract)
    return result


def message_address(contract: object) -> str:
    """Return H(msg) of a ghost message contract: content_address(to_msg_dict(contract))."""
    return content_address(to_msg_dict(contract))


parse_action_emission: Callable[..., contracts.ActionEmission] = _PARSERS['ActionEmission']
parse_actuator_command: Callable[..., contracts.ActuatorCommand] = _PARSERS['ActuatorCommand']
parse_axis_assessment: Callable[..., contracts.AxisAssessment] = _PARSERS['AxisAssessment']
parse_belief_self_assessment: Callable[..., contracts.BeliefSelfAssessment] = (
    _PARSERS['BeliefSelfAssessment'])
parse_calibrated_self_assessment: Callable[..., contracts.CalibratedSelfAssessment] = (
    _PARSERS['CalibratedSelfAssessment'])
#: parse_calibrated_self_assessment, by its short name.
parse_calibrated = parse_calibrated_self_assessment
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

#: Every ghost message: its .msg name -> (contract type, parser).
MESSAGE_TYPES: Mapping[str, tuple[type, Callable[..., object]]] = MappingProxyType({
    name: (contract, _PARSERS[name]) for name, contract in CONTRACTS.items()
})
