"""The other form of each code generator Ghost had, for bench/codegen.py to time against its own.

Ghost keeps generated code only where it is at least 1.5x faster than plain code doing the same
(docs/performance.md, "Generated code"). The package holds the form that won; this module holds
the one that lost, so that the decision can be measured again:

- kept generated in the package (``ghost_core.wire``'s dict writers, ``ghost_bag.cdr``'s
  decoders): their plain contender, a loop over the same field table;
- replaced by plain code in the package (``ghost_core.contracts``' ``__post_init__``,
  ``ghost_core.wire``'s parsers, ``ghost_core.hashing.hash_form``'s per-class converters,
  ``ghost_nodes.convert``'s per-class builders): the generated form they replaced, as it was
  (from the same field tables where the package has them, so both forms read one definition).

Each form gives what the package's gives, value for value (bench/codegen.py checks it on its
inputs before timing). Benchmark code: not imported by Ghost.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
import contextlib
from dataclasses import fields
import struct
from typing import Annotated, Any, cast, get_args, get_origin, get_type_hints

__all__ = [
    'generated_contracts',
    'generated_from_msg_dict',
    'generated_hash_form',
    'generated_parsers',
    'plain_compile_decoder',
    'plain_compile_json_decoder',
    'plain_message_fields',
    'plain_to_msg_dict',
]


# --- ghost_core.contracts: a __post_init__ generated per class (replaced) ---------------------

def _compile_post_init(cls: type[Any]) -> Callable[[Any], None]:
    """The ``__post_init__`` of one contract class, generated from its fields' checks.

    One line per field, as a hand-written one would be (a field whose type is a contract is
    only type-checked), then ``_check_together`` when the class has invariants of its own.
    """
    from ghost_core import _checks as check
    from ghost_core.contracts import checked_together, Contract

    hints = get_type_hints(cls, include_extras=True)
    owner = cls.__name__
    names: dict[str, object] = {'_set': object.__setattr__, '_instance': check.instance,
                                'cls': cls, 'Contract': Contract}
    lines = ['def __post_init__(self):',
             '    if type(self) is not cls:  # a subclass: compile its own',
             '        return Contract.__post_init__(self)']
    for index, field in enumerate(fields(cls)):
        name, hint = field.name, hints[field.name]
        if get_origin(hint) is Annotated:
            field_check = get_args(hint)[1]
            if field_check is not checked_together:
                names[f'check{index}'] = field_check
                lines.append(f'    _set(self, {name!r}, check{index}({owner!r}, {name!r}, '
                             f'self.{name}))')
        elif isinstance(hint, type) and issubclass(hint, Contract):
            names[f'kind{index}'] = hint
            lines.append(f'    if type(self.{name}) is not kind{index}:\n'
                         f'        _instance({owner!r}, {name!r}, self.{name}, kind{index})')
        else:
            raise TypeError(f'{owner}.{name}: a contract field names its check '
                            f'(Annotated[T, check] or a contract type), got {hint}')
    if cls._check_together is not Contract._check_together:
        lines.append(f'    self._check_together({owner!r})')
    exec('\n'.join(lines), names)  # noqa: S102 - source built above from field names only
    return cast(Callable[[Any], None], names['__post_init__'])


@contextlib.contextmanager
def generated_contracts(classes: Iterable[type[Any]]) -> Iterator[None]:
    """Within the block, each of `classes` checks its fields with a generated __post_init__."""
    installed = []
    try:
        for cls in classes:
            type.__setattr__(cls, '__post_init__', _compile_post_init(cls))
            installed.append(cls)
        yield
    finally:
        for cls in installed:
            type.__delattr__(cls, '__post_init__')  # the plain Contract.__post_init__ again


# --- ghost_core.wire: parsers generated per message (replaced) --------------------------------

def generated_parsers() -> dict[str, Callable[..., Any]]:
    """Every message's parser, generated from ghost_core.wire's field tables, by .msg name.

    Straight-line code: one keyword argument per contract field, its reader's call written
    out (the nested messages' generated parsers called by name).
    """
    from ghost_core import wire
    from ghost_core.errors import MessageFormatError

    w: Any = wire
    expressions: dict[object, str] = {
        w._int: '_int(d, {key!r}, path)',
        w._float: '_float(d, {key!r}, path)',
        w._bool: '_bool(d, {key!r}, path)',
        w._str: '_str(d, {key!r}, path)',
        w._sha: '_sha(d, {key!r}, path)',
        w._time: '_time(d, {key!r}, path)',
        w._vec3: '_vec3(d, {key!r}, path)',
        w._optional_time: '_optional_time(d, {key!r}, path, {arg!r})',
        w._floats: '_floats(d, {key!r}, path, {arg!r})',
        w._ints: '_ints(d, {key!r}, path)',
        w._enum: '_enum(d, {key!r}, path, {name})',
        w._str_enum: '_str_enum(d, {key!r}, path, {name})',
        w._header_stamp: "_time(_sub(d, {key!r}, path), 'stamp', path + '.{key}')",
        w._header_frame: "_str(_sub(d, {key!r}, path), 'frame_id', path + '.{key}')",
        w._twist_part: "_vec3(_sub(d, {key!r}, path), {arg!r}, path + '.{key}')",
        w._nested: "{name}(_sub(d, {key!r}, path), path + '.{key}')",
    }
    message_of = {parse: name for name, parse in w._PARSERS.items()}
    helpers = {name: getattr(wire, name) for name in (
        '_int', '_float', '_bool', '_str', '_sha', '_time', '_vec3', '_optional_time',
        '_floats', '_ints', '_enum', '_str_enum', '_sub')}
    parsers: dict[str, Callable[..., Any]] = {}
    for name, (readers, _) in w._TABLES.items():   # each after the messages it nests
        namespace: dict[str, Any] = {**helpers, 'Mapping': Mapping,
                                     'MessageFormatError': MessageFormatError,
                                     '_contract': w.CONTRACTS[name]}
        reads = []
        for field, read, key, arg in readers:
            const = ''
            if read is w._nested:
                const = f'_parse_{message_of[arg]}'
                namespace[const] = parsers[message_of[arg]]
            elif read in (w._enum, w._str_enum):
                const = arg.__name__
                namespace[const] = arg
            expression = expressions[read].format(key=key, arg=arg, name=const)
            reads.append(f'\n        {field}={expression},')
        source = (f'def parse(d, path={name!r}):\n'
                  f'    if not isinstance(d, Mapping):\n'
                  "        raise MessageFormatError(f'{path} must be a mapping, got {d!r}')\n"
                  f'    return _contract({"".join(reads)}\n    )\n')
        exec(compile(source, f'<bench generated parser: {name}>', 'exec'), namespace)  # noqa: S102
        parsers[name] = namespace['parse']
    return parsers


# --- ghost_core.wire: dict writers as a loop over the field table (contender) -----------------

def _plain_writers() -> dict[type, tuple[tuple[str, Callable[[Any, Any], Any], Any], ...]]:
    from ghost_core import wire

    w: Any = wire
    ns_to_stamp, point, nan_if_none = w.ns_to_stamp, w._point, w._nan_if_none
    optional_stamp = w._optional_stamp

    def header(c: Any, _arg: Any) -> Any:
        return {'stamp': ns_to_stamp(c.stamp_ns), 'frame_id': c.frame_id}

    def value(c: Any, field: str) -> Any:
        return getattr(c, field)

    def integer(c: Any, field: str) -> Any:
        return int(getattr(c, field))

    def enum_value(c: Any, field: str) -> Any:
        return getattr(c, field).value

    def sha(c: Any, field: str) -> Any:
        return getattr(c, field) or ''

    def nan(c: Any, field: str) -> Any:
        return nan_if_none(getattr(c, field))

    def floats(c: Any, field: str) -> Any:
        return [float(x) for x in getattr(c, field)]

    def nan_floats(c: Any, field: str) -> Any:
        return [nan_if_none(x) for x in getattr(c, field)]

    def ints(c: Any, field: str) -> Any:
        return list(getattr(c, field))

    def vector(c: Any, field: str) -> Any:
        return point(getattr(c, field))

    def time(c: Any, field: str) -> Any:
        return ns_to_stamp(getattr(c, field))

    def present(c: Any, field: str) -> Any:
        return getattr(c, field) is not None

    def optional_time(c: Any, field: str) -> Any:
        return optional_stamp(getattr(c, field))

    def twist(c: Any, names: Any) -> Any:
        return {'linear': point(getattr(c, names[0])), 'angular': point(getattr(c, names[1]))}

    def nested(c: Any, arg: Any) -> Any:
        field, table = arg
        inner = getattr(c, field)
        return {key: write(inner, a) for key, write, a in table}

    functions: dict[str, Callable[[Any, Any], Any]] = {
        'header': header, 'value': value, 'int': integer, 'enum_value': enum_value, 'sha': sha,
        'nan': nan, 'floats': floats, 'nan_floats': nan_floats, 'ints': ints, 'point': vector,
        'time': time,
        'present': present, 'optional_time': optional_time, 'twist': twist, 'nested': nested}
    assert set(functions) == set(w._WRITE_EXPRESSIONS), 'a kind of writer without its function'
    def argument(how: str, args: tuple[str, ...]) -> Any:
        if how == 'nested':
            return args[0], tables[args[1]]
        return args[0] if len(args) == 1 else args

    tables: dict[str, tuple[tuple[str, Callable[[Any, Any], Any], Any], ...]] = {}
    for name, (_, writers) in w._TABLES.items():   # each after the messages it nests
        tables[name] = tuple((key, functions[how], argument(how, args))
                             for key, how, args in writers)
    return {w.CONTRACTS[name]: table for name, table in tables.items()}


_PLAIN_WRITERS: dict[type, Any] = {}


def plain_to_msg_dict(contract: object) -> dict[str, Any]:
    """ghost_core.wire.to_msg_dict as a loop over the message's field writers."""
    if not _PLAIN_WRITERS:
        _PLAIN_WRITERS.update(_plain_writers())
    writers = _PLAIN_WRITERS.get(type(contract))
    if writers is None:
        raise TypeError(f'no ghost message for {type(contract).__name__}')
    return {key: write(contract, arg) for key, write, arg in writers}


# --- ghost_core.hashing: a converter built per message class (replaced) ------------------------

_FLOAT_TYPES = frozenset({'float', 'double', 'float32', 'float64'})
_converters: dict[type, Callable[[Any], dict[str, Any]]] = {}


def generated_hash_form(msg: object) -> dict[str, Any]:
    """ghost_core.hashing.hash_form with a converter compiled once per message class."""
    convert = _converters.get(type(msg))
    if convert is None:
        convert = _converters[type(msg)] = _hash_converter(type(msg))
    return convert(msg)


def _hash_converter(msg_type: type) -> Callable[[Any], dict[str, Any]]:
    if issubclass(msg_type, Mapping):
        return lambda msg: {name: _plain(value) for name, value in msg.items()}
    fields_of = getattr(msg_type, 'get_fields_and_field_types', None)
    if callable(fields_of):
        plan = tuple((name, _rclpy_field(type_name)) for name, type_name in fields_of().items())
        identity = tuple(name for name, convert in plan if convert is None)
        if len(identity) == len(plan):
            return lambda msg: {name: getattr(msg, name) for name in identity}
        return lambda msg: {name: getattr(msg, name) if convert is None
                            else convert(getattr(msg, name)) for name, convert in plan}
    names = getattr(msg_type, '__slots__', None)
    if isinstance(names, (list, tuple)):
        slots = tuple(names)
        return lambda msg: {name: _plain(getattr(msg, name)) for name in slots}
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
    if callable(tolist):
        plain = tolist()
        return [_plain(item) for item in plain] if isinstance(plain, list) else plain
    return generated_hash_form(value)


def _rclpy_field(type_name: str) -> Callable[[Any], Any] | None:
    if type_name.startswith('sequence<') or type_name.endswith(']'):
        element = type_name.removeprefix('sequence<').split('[')[0].split(',')[0].rstrip('>')
        if element in ('byte', 'octet'):
            return lambda values: [value[0] if isinstance(value, (bytes, bytearray))
                                   else int(value) for value in values]
        return _plain
    if type_name in _FLOAT_TYPES:
        return float
    if '/' in type_name:
        return generated_hash_form
    return None


# --- ghost_nodes.convert: a builder built per message class (replaced) -------------------------

_builders: dict[type, Callable[[Mapping[str, Any]], Any]] = {}


def _builder(msg_type: type[Any]) -> Callable[[Mapping[str, Any]], Any]:
    builder = _builders.get(msg_type)
    if builder is not None:
        return builder
    probe = msg_type()
    check_fields = probe._check_fields
    names = tuple(msg_type.get_fields_and_field_types())
    nested = {name: _builder(type(getattr(probe, name))) for name in names
              if hasattr(getattr(probe, name), 'get_fields_and_field_types')}
    plan = tuple((name, nested.get(name)) for name in names)
    create: Callable[[type[Any]], Any] = object.__new__

    def build(data: Mapping[str, Any]) -> Any:
        if len(data) != len(plan):
            unknown = sorted(set(data) - set(names))
            if unknown:
                raise ValueError(f'{msg_type.__name__} has no field(s) {unknown}')
        msg = create(msg_type)
        msg._check_fields = check_fields
        for name, build_nested in plan:
            try:
                value = data[name]
            except KeyError:
                raise ValueError(f'{msg_type.__name__}.{name} is missing') from None
            setattr(msg, name, build_nested(value) if build_nested is not None else value)
        return msg

    _builders[msg_type] = build
    return build


def generated_from_msg_dict(msg_type: type[Any], data: Mapping[str, Any]) -> Any:
    """ghost_nodes.convert.from_msg_dict with a builder built once per message class."""
    return _builder(msg_type)(data)


# --- ghost_bag.cdr: a plain interpreter of the schema (contender) --------------------------
# The schema becomes a field table per type and byte order: (name, kind, size, unpack, count,
# sub). One loop reads it, a field at a time, with the alignment computed as it goes.

(_SCALAR, _STRING, _NESTED, _SKIP, _BYTES, _FIXED, _SEQUENCE, _STRINGS, _NESTED_ARRAY,
 _RAISE) = range(10)
_Layout = tuple[tuple[Any, ...], ...]


def _layout(msgdefs: Mapping[str, Any], key: str, endian: str,
            layouts: dict[str, _Layout]) -> _Layout:
    from ghost_bag.cdr import _BYTE_ARRAYS, _PRIMITIVES

    layout = layouts.get(key)
    if layout is not None:
        return layout
    u32 = struct.Struct(endian + 'I').unpack_from
    items: list[tuple[Any, ...]] = []
    if not msgdefs[key].fields:
        items.append((None, _SKIP, 1, struct.Struct('B').unpack_from, None, None))
    for item in msgdefs[key].fields:
        ftype, name = item.type, item.name
        fixed = (ftype.array_size if ftype.is_fixed_size_array()
                 and ftype.array_size is not None else None)
        if not ftype.is_primitive_type():
            nested = f'{ftype.pkg_name}/{ftype.type}'
            if nested not in msgdefs:
                items.append((name, _RAISE, 0, None, None, (ValueError, (
                    f'Message definition not found for field "{item.name}" with '
                    'type "{ftype.type}"'))))
                break
            sub = _layout(msgdefs, nested, endian, layouts)
            items.append((name, _NESTED_ARRAY if ftype.is_array else _NESTED, 0, u32, fixed,
                          sub))
            continue
        kind = ftype.type
        if ftype.is_array:
            if kind not in _PRIMITIVES and kind not in ('string', 'wstring'):
                items.append((name, _RAISE, 0, None, None, (
                    NotImplementedError, f'Parsing for type {kind}[] is not implemented')))
                break
            if kind == 'wstring':   # the length is read first, then refused
                items.append((name, _RAISE, 0, u32, (fixed,), (
                    NotImplementedError, 'wstring[] parsing is not implemented')))
                break
            if kind == 'string':
                items.append((name, _STRINGS, 0, u32, fixed, None))
                continue
            code, size = _PRIMITIVES[kind]
            if kind in _BYTE_ARRAYS:
                items.append((name, _BYTES, 1, u32, fixed, None))
            elif fixed is not None:
                items.append((name, _FIXED, size,
                              struct.Struct(f'{endian}{fixed}{code}').unpack_from, fixed, None))
            else:
                items.append((name, _SEQUENCE, size, u32, None, f'{endian}%d{code}'))
            continue
        if kind == 'string':
            items.append((name, _STRING, 4, u32, None, None))
        elif kind == 'wstring' or kind not in _PRIMITIVES:
            message = ('wstring parsing is not implemented' if kind == 'wstring'
                       else f'Parsing for type {kind} is not implemented')
            items.append((name, _RAISE, 0, None, None, (NotImplementedError, message)))
            break
        else:
            code, size = _PRIMITIVES[kind]
            items.append((name, _SCALAR, size, struct.Struct(endian + code).unpack_from,
                          None, None))
    layout = layouts[key] = tuple(items)
    return layout


def _read(layout: _Layout, data: bytes, o: int) -> tuple[dict[str, Any], int]:
    msg: dict[str, Any] = {}
    for name, kind, size, unpack, count, sub in layout:
        if kind == _SCALAR:
            if size > 1:
                o += (4 - o) % size
            msg[name] = unpack(data, o)[0]
            o += size
        elif kind == _STRING:
            o += (4 - o) % 4
            n = unpack(data, o)[0]
            o += 4
            msg[name] = str(data[o:o + n - 1], 'utf-8') if n > 1 else ''
            o += n
        elif kind == _NESTED:
            msg[name], o = _read(sub, data, o)
        else:
            o = _read_other(msg, name, kind, size, unpack, count, sub, data, o)
    return msg, o


def _count(count: int | None, unpack: Any, data: bytes, o: int) -> tuple[int, int]:
    if count is not None:
        return count, o
    o += (4 - o) % 4
    return unpack(data, o)[0], o + 4


def _read_other(msg: dict[str, Any], name: str, kind: int, size: int, unpack: Any,
                count: Any, sub: Any, data: bytes, o: int) -> int:
    if kind == _SKIP:
        unpack(data, o)
        return o + 1
    if kind == _FIXED:
        fixed: int = count
        if fixed:
            o += (4 - o) % size
            msg[name] = list(unpack(data, o))
            return o + size * fixed
        msg[name] = []
        return o
    if kind == _RAISE:
        if count is not None:
            _count(count[0], unpack, data, o)
        raise sub[0](sub[1])
    length, o = _count(count, unpack, data, o)
    if kind == _BYTES:
        msg[name] = list(data[o:o + length])
        return o + length
    if kind == _SEQUENCE:
        if length:
            o += (4 - o) % size
            msg[name] = list(struct.unpack_from(sub % length, data, o))
            return o + size * length
        msg[name] = []
        return o
    values: list[Any] = []
    if kind == _STRINGS:
        for _ in range(length):
            o += (4 - o) % 4
            n = unpack(data, o)[0]
            o += 4
            values.append(str(data[o:o + n - 1], 'utf-8') if n > 1 else '')
            o += n
    else:
        for _ in range(length):
            value, o = _read(sub, data, o)
            values.append(value)
    msg[name] = values
    return o


def plain_compile_decoder(schema_name: str, schema_text: str) -> Callable[[bytes], Any]:
    """ghost_bag.cdr.compile_decoder as an interpreter of the schema's field tables."""
    from ghost_bag.cdr import _checked_definitions

    msgdefs = _checked_definitions(schema_name, schema_text)
    little = _layout(msgdefs, schema_name, '<', {})
    big: list[_Layout] = []

    def decode(data: bytes) -> dict[str, Any]:
        if len(data) < 4:
            raise ValueError(
                f'Invalid CDR data size {len(data)}, must contain at least a 4-byte header')
        if data[1] & 1:
            return _read(little, data, 4)[0]
        if not big:
            big.append(_layout(msgdefs, schema_name, '>', {}))
        return _read(big[0], data, 4)[0]

    return decode


def plain_compile_json_decoder(schema_name: str, schema_text: str,
                               parts: tuple[str, ...] = ()) -> Callable[[bytes], Any]:
    """ghost_bag.cdr.compile_json_decoder: the plain decoder, then canonical_json."""
    from ghost_core.hashing import canonical_json

    decode = plain_compile_decoder(schema_name, schema_text)

    def decode_json(data: bytes) -> tuple[dict[str, Any], str, tuple[str, ...]]:
        msg = decode(data)
        return msg, canonical_json(msg), tuple(canonical_json(msg[part]) for part in parts)

    return decode_json


# --- ghost_core.msg_fields: the table read from the .msg texts (contender) --------------------

def plain_message_fields(msg_texts: Mapping[str, str]) -> dict[str, tuple[tuple[str, str], ...]]:
    """MESSAGE_FIELDS as the .msg texts give it, parsed when needed instead of generated."""
    from ghost_core.msg_codegen import FOREIGN_FIELDS, parse_msg

    table = {name: parse_msg(msg_texts[name], f'{name}.msg')[0] for name in sorted(msg_texts)}
    table.update(FOREIGN_FIELDS)
    return table
