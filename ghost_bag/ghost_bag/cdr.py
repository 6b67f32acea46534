"""Decode CDR payloads straight into the message dicts of SPEC section 4.

One cohesive job (CDR to message dicts, with its generated decoders), so one module past 400 lines.

The verifier reads every ghost message as a dict (field names as in the .msg files, nested
messages as dicts, arrays as lists, byte arrays as lists of ints) to hash it and to judge it,
and the recorded inputs are read the same way (``recorded_inputs``).
Decoding into mcap_ros2's objects and then walking them into dicts built every value twice;
this module builds the dict in one pass, with a decoder generated once per schema:

- the message definitions come from the schema embedded in the bag, parsed by mcap_ros2's own
  parser into the same definitions mcap_ros2's decoder uses (``generate_dynamic``: its
  builtin Time and Duration, then every ``MSG:`` section of the schema text);
- the generated function reads the fields in order with ``struct``, one ``unpack_from`` per
  run of fixed-size fields whose alignment is known when the decoder is generated (CDR aligns
  each primitive to its size, relative to the end of the 4-byte encapsulation header), and a
  computed alignment after strings and sequences.

Generated, not plain, because it pays: bench/codegen.py measures these decoders against a plain
interpreter of the same schema (a loop over a field table; canonical_json for the JSON) on the
messages of a bag, and keeps them only while they are at least 1.5x faster (docs/performance.md,
"Generated code"). The source of each is registered with linecache under
``<ghost_bag.cdr TYPE dict|json ENDIAN DIGEST>``, so a traceback shows its lines and a
debugger steps through them.

The result is the dict ``ghost_core.hashing.hash_form(mcap_ros2 decoder(data))`` gives, value
for value and type for type (bool, int, float, str, list), and a payload the mcap_ros2 decoder
rejects is rejected here too: both read little- and big-endian payloads (bit 0 of the encapsulation
kind), accept a string or byte array that runs past the end of the payload as the bytes there
are, and fail on any other read past the end, on invalid UTF-8, and on the types mcap_ros2
does not decode (wstring, time, duration) when a payload reaches them (test_cdr.py checks all
of this against mcap_ros2 on every ghost type, on valid and on damaged payloads).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
import hashlib
from json.encoder import encode_basestring
import linecache
import struct
from typing import Any

from .mcap_ros2_shim import message_definitions

__all__ = ['DictDecoder', 'JsonDecoder', 'compile_decoder', 'compile_json_decoder']

#: A decoder: CDR payload (with its 4-byte encapsulation header) -> message dict.
DictDecoder = Callable[[bytes], dict[str, object]]
#: A decoder that also renders the canonical JSON: -> (message dict, its JSON, part JSONs).
JsonDecoder = Callable[[bytes], tuple[dict[str, object], str, tuple[str, ...]]]

# struct format character and size of each primitive mcap_ros2 decodes (byte: uint8, char:
# int8, as mcap_ros2 reads them).
_PRIMITIVES: Mapping[str, tuple[str, int]] = {
    'bool': ('?', 1),
    'byte': ('B', 1),
    'char': ('b', 1),
    'int8': ('b', 1),
    'uint8': ('B', 1),
    'int16': ('h', 2),
    'uint16': ('H', 2),
    'int32': ('i', 4),
    'uint32': ('I', 4),
    'int64': ('q', 8),
    'uint64': ('Q', 8),
    'float32': ('f', 4),
    'float64': ('d', 8),
}
#: Arrays mcap_ros2 returns as ``bytes`` (a slice, so never an error past the end).
_BYTE_ARRAYS = frozenset({'byte', 'uint8'})


@dataclass
class _Emitter:
    """Generates the source of one decoding function (see _Generator)."""

    endian: str
    consts: dict[str, object]
    lines: list[str] = field(default_factory=list)
    # A run of fixed-size reads not yet emitted: struct format (with pad bytes) and, per
    # item, (variable, count, how): how is 'one' (a scalar), 'list' or 'skip'.
    fmt: str = ''
    items: list[tuple[str, int, str]] = field(default_factory=list)
    size: int = 0
    # What is known of the offset when generating: (o - 4) % mod == res.
    mod: int = 8
    res: int = 0
    counter: int = 0
    dead: bool = False

    def var(self) -> str:
        self.counter += 1
        return f'v{self.counter}'

    def const(self, value: object) -> str:
        name = f'_k{len(self.consts)}'
        self.consts[name] = value
        return name

    def emit(self, line: str, indent: int = 1) -> None:
        if not self.dead:
            self.lines.append('    ' * indent + line)

    def flush(self) -> None:
        """Emit the pending run of fixed-size reads as one unpack_from."""
        if not self.items:
            return
        unpack = self.const(struct.Struct(self.endian + self.fmt).unpack_from)
        total = sum(count for _, count, _ in self.items)
        if total == 1 and self.items[0][2] == 'one':
            self.emit(f'{self.items[0][0]} = {unpack}(data, o)[0]')
        else:
            tup = self.var()
            self.emit(f'{tup} = {unpack}(data, o)')
            index = 0
            for name, count, how in self.items:
                if how == 'one':
                    self.emit(f'{name} = {tup}[{index}]')
                elif how == 'list':
                    self.emit(f'{name} = list({tup}[{index}:{index + count}])')
                index += count
        self.emit(f'o += {self.size}')
        self.fmt, self.items, self.size = '', [], 0

    def align(self, size: int) -> None:
        """Align to `size` (1, 2, 4 or 8), statically when the offset's phase is known."""
        if size <= 1:
            return
        if size <= self.mod:
            pad = (-self.res) % size
            if pad:
                self.fmt += f'{pad}x'
                self.size += pad
                self.res = (self.res + pad) % self.mod
            return
        self.flush()
        self.emit(f'o += (4 - o) % {size}')
        self.mod, self.res = size, 0

    def fixed(self, name: str, code: str, size: int, count: int, how: str) -> None:
        """Queue `count` values of one primitive (aligned first when there are any)."""
        if count == 0:
            if how == 'list':
                self.emit(f'{name} = []')
            return
        self.align(size)
        self.fmt += f'{count}{code}' if count > 1 else code
        self.items.append((name, count, how))
        self.size += size * count
        self.res = (self.res + size * count) % self.mod

    def unknown(self) -> None:
        """The offset is data-dependent from here on."""
        self.mod, self.res = 1, 0


_Json = list[tuple[str, str]]   # ('L', literal text) or ('E', expression) pieces


def _fstring(pieces: _Json) -> str:
    """The f-string expression that renders JSON `pieces` (literals hold no quote)."""
    out = []
    for kind, text in pieces:
        out.append(text.replace('{', '{{').replace('}', '}}') if kind == 'L'
                   else '{' + text + '}')
    return "f'" + ''.join(out) + "'"


def _object(members: list[tuple[str, _Json]]) -> _Json:
    """The JSON pieces of an object: its members in sorted key order (sort_keys)."""
    pieces: _Json = [('L', '{')]
    for index, (name, value) in enumerate(sorted(members, key=lambda item: item[0])):
        pieces.append(('L', (',' if index else '') + f'"{name}":'))
        pieces.extend(value)
    pieces.append(('L', '}'))
    return pieces


def _nonfinite(value: float) -> str:
    # json.dumps' spelling (allow_nan): only reached for NaN and the infinities.
    if value != value:
        return 'NaN'
    return 'Infinity' if value > 0 else '-Infinity'


def _floats(values: list[float]) -> str:
    return '[' + ','.join([repr(value) if _LOW < value < _HIGH else _nonfinite(value)
                           for value in values]) + ']'


def _ints(values: list[int]) -> str:
    return '[' + ','.join(map(str, values)) + ']'


def _bools(values: list[bool]) -> str:
    return '[' + ','.join(['true' if value else 'false' for value in values]) + ']'


def _strings(values: list[str]) -> str:
    return '[' + ','.join(map(encode_basestring, values)) + ']'


def _texts(values: list[str]) -> str:
    return '[' + ','.join(values) + ']'


_LOW, _HIGH = float('-inf'), float('inf')
#: Names the generated code uses for the JSON spelling of values.
_JSON_HELPERS: Mapping[str, object] = {
    '_T': 'true', '_F': 'false', '_r': float.__repr__, '_lo': _LOW, '_hi': _HIGH,
    '_nf': _nonfinite, '_s': encode_basestring, '_fl': _floats, '_il': _ints, '_bl': _bools,
    '_sl': _strings, '_cl': _texts,
}


class _Generator:
    """Generates one module of decoding functions for a schema and its nested types.

    With `json`, every function also renders the canonical JSON of what it decodes
    (ghost_core.hashing.canonical_json of the dict: keys sorted, no spaces, UTF-8 kept, NaN
    and the infinities spelled as json.dumps spells them), from the decoded values.
    """

    def __init__(self, msgdefs: Mapping[str, Any], endian: str, json: bool) -> None:
        self.msgdefs = msgdefs
        self.endian = endian
        self.json = json
        self.consts: dict[str, object] = dict(_JSON_HELPERS) if json else {}
        self.functions: dict[str, str] = {}   # type key -> function name
        self.sources: list[str] = []
        self.u32 = self._const(struct.Struct(endian + 'I').unpack_from)

    def _const(self, value: object) -> str:
        name = f'_k{len(self.consts)}'
        self.consts[name] = value
        return name

    def function_for(self, key: str) -> str:
        """The name of `f(data, o) -> (dict, [json,] o)` decoding type `key` at offset `o`."""
        name = self.functions.get(key)
        if name is not None:
            return name
        name = f'_t{len(self.functions)}'
        self.functions[key] = name
        out = _Emitter(self.endian, self.consts, mod=1, res=0)
        value, pieces = self.body(self.msgdefs[key], out, indent=1)
        out.flush()
        if self.json:
            out.emit(f'return {value}, {_fstring(pieces)}, o')
        else:
            out.emit(f'return {value}, o')
        self.sources.append(f'def {name}(data, o):\n' + '\n'.join(out.lines))
        return name

    def top(self, key: str, parts: tuple[str, ...]) -> str:
        out = _Emitter(self.endian, self.consts)
        out.emit('o = 4')
        msgdef = self.msgdefs[key]
        value, pieces = self.body(msgdef, out, indent=1, parts=parts)
        out.flush()
        if not self.json:
            out.emit(f'return {value}')
        else:
            names = ', '.join(f'j_{part}' for part in parts)
            out.emit(f'return {value}, {_fstring(pieces)}, ({names}{"," if parts else ""})')
        return 'def decode(data):\n' + '\n'.join(out.lines)

    def body(self, msgdef: Any, out: _Emitter, indent: int,
             parts: tuple[str, ...] = ()) -> tuple[str, _Json]:
        """Emit the reads of one message in place; return its dict expression and JSON."""
        if not msgdef.fields:
            # ROS 2 gives an empty message one uint8 (mcap_ros2 reads and drops it).
            out.fixed('_', 'B', 1, 1, 'skip')
            return '{}', [('L', '{}')]
        entries = []
        members: list[tuple[str, _Json]] = []
        for item in msgdef.fields:
            value, pieces = self.field(item, out, indent)
            entries.append(f'{item.name!r}: {value}')
            if self.json and item.name in parts and not out.dead:
                # A nested message whose own JSON (and so its content address) is wanted.
                out.flush()
                out.emit(f'j_{item.name} = {_fstring(pieces)}')
                pieces = [('E', f'j_{item.name}')]
            members.append((item.name, pieces))
        return '{' + ', '.join(entries) + '}', _object(members)

    def _raise(self, out: _Emitter, error: BaseException) -> tuple[str, _Json]:
        # A new exception each time (re-raising one instance would grow its traceback).
        out.flush()
        out.emit(f'raise {out.const(type(error))}({out.const(str(error))})')
        out.dead = True
        return 'None', []

    def field(self, item: Any, out: _Emitter, indent: int) -> tuple[str, _Json]:
        ftype = item.type
        if not ftype.is_primitive_type():
            nested = self.msgdefs.get(f'{ftype.pkg_name}/{ftype.type}')
            if nested is None:
                return self._raise(out, ValueError(
                    f'Message definition not found for field "{item.name}" with '
                    'type "{ftype.type}"'))
            if not ftype.is_array:
                return self.body(nested, out, indent)
            function = self.function_for(f'{ftype.pkg_name}/{ftype.type}')
            name = out.var()
            count = self._length(ftype, out)
            out.flush()
            out.emit(f'{name} = []')
            if self.json:
                texts = out.var()
                out.emit(f'{texts} = []')
            out.emit(f'for _ in range({count}):')
            if self.json:
                out.emit(f'v, j, o = {function}(data, o)', indent + 1)
                out.emit(f'{texts}.append(j)', indent + 1)
            else:
                out.emit(f'v, o = {function}(data, o)', indent + 1)
            out.emit(f'{name}.append(v)', indent + 1)
            out.unknown()
            return name, ([('E', f'_cl({texts})')] if self.json else [])
        kind = ftype.type
        if ftype.is_array:
            return self.array(ftype, kind, out)
        if kind == 'string':
            return self.string(out)
        if kind == 'wstring':
            return self._raise(out, NotImplementedError('wstring parsing is not implemented'))
        if kind not in _PRIMITIVES:
            return self._raise(out, NotImplementedError(
                f'Parsing for type {kind} is not implemented'))
        code, size = _PRIMITIVES[kind]
        name = out.var()
        out.fixed(name, code, size, 1, 'one')
        return name, [('E', _scalar_json(code, name))]

    def _length(self, ftype: Any, out: _Emitter) -> str:
        """The element count of an array: fixed in the type, or a uint32 read here."""
        if ftype.is_fixed_size_array() and ftype.array_size is not None:
            return str(ftype.array_size)
        name = out.var()
        out.fixed(name, 'I', 4, 1, 'one')
        return name

    def string(self, out: _Emitter) -> tuple[str, _Json]:
        length = out.var()
        out.fixed(length, 'I', 4, 1, 'one')
        out.flush()
        name = out.var()
        # As mcap_ros2: a length of 0 or 1 is the empty string; otherwise the bytes before the
        # terminator, decoded as UTF-8 (a cut string is what is left of it).
        out.emit(f"{name} = str(data[o:o + {length} - 1], 'utf-8') if {length} > 1 else ''")
        out.emit(f'o += {length}')
        out.unknown()
        return name, [('E', f'_s({name})')]

    def array(self, ftype: Any, kind: str, out: _Emitter) -> tuple[str, _Json]:
        fixed = ftype.is_fixed_size_array() and ftype.array_size is not None
        if kind not in _PRIMITIVES and kind not in ('string', 'wstring'):
            return self._raise(out, NotImplementedError(
                f'Parsing for type {kind}[] is not implemented'))
        count = self._length(ftype, out)
        if kind == 'wstring':
            return self._raise(out, NotImplementedError('wstring[] parsing is not implemented'))
        name = out.var()
        if kind == 'string':
            out.flush()
            out.emit(f'{name} = []')
            out.emit(f'for _ in range({count}):')
            out.emit('o += (4 - o) % 4', 2)
            out.emit(f'n = {self.u32}(data, o)[0]', 2)
            out.emit('o += 4', 2)
            out.emit(f"{name}.append(str(data[o:o + n - 1], 'utf-8') if n > 1 else '')", 2)
            out.emit('o += n', 2)
            out.unknown()
            return name, [('E', f'_sl({name})')]
        code, size = _PRIMITIVES[kind]
        pieces: _Json = [('E', f'{_LIST_JSON[code]}({name})')]
        if kind in _BYTE_ARRAYS:
            out.flush()
            out.emit(f'{name} = list(data[o:o + {count}])')
            out.emit(f'o += {count}')
            if not fixed:
                out.unknown()
            else:
                out.res = (out.res + int(count)) % out.mod
            return name, pieces
        if fixed:
            out.fixed(name, code, size, int(count), 'list')
            return name, pieces
        out.flush()
        unpack = out.const(struct.unpack_from)
        out.emit(f'if {count}:')
        if size > 1:
            out.emit(f'o += (4 - o) % {size}', 2)
        out.emit(f"{name} = list({unpack}('{self.endian}%d{code}' % {count}, data, o))", 2)
        out.emit(f'o += {size} * {count}', 2)
        out.emit('else:')
        out.emit(f'{name} = []', 2)
        out.unknown()
        return name, pieces


def _scalar_json(code: str, name: str) -> str:
    """The expression of one scalar's JSON text (inside the generated f-string)."""
    if code == '?':
        return f'_T if {name} else _F'
    if code in 'fd':
        return f'_r({name}) if _lo < {name} < _hi else _nf({name})'
    return name


#: The helper that renders a list of each struct code's values.
_LIST_JSON: Mapping[str, str] = {**dict.fromkeys('bBhHiIqQ', '_il'), '?': '_bl',
                                 'f': '_fl', 'd': '_fl'}


def _compile(msgdefs: Mapping[str, Any], key: str, endian: str, json: bool,
             parts: tuple[str, ...]) -> Callable[[bytes], Any]:
    generator = _Generator(msgdefs, endian, json)
    top = generator.top(key, parts)
    source = '\n\n'.join([*generator.sources, top]) + '\n'
    # Named by its text, so that the same schema compiled again (a bag per file, a fleet of bags)
    # shares one linecache entry, and a different one never shows another's lines.
    digest = hashlib.sha256(source.encode('utf-8')).hexdigest()[:12]
    filename = f'<ghost_bag.cdr {key} {"json" if json else "dict"} {endian} {digest}>'
    namespace: dict[str, Any] = dict(generator.consts)
    exec(compile(source, filename, 'exec'), namespace)  # noqa: S102 - built from the schema
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    decode: Callable[[bytes], Any] = namespace['decode']
    return decode


def _dispatch(msgdefs: Mapping[str, Any], key: str, json: bool,
              parts: tuple[str, ...]) -> Callable[[bytes], Any]:
    little = _compile(msgdefs, key, '<', json, parts)
    big: list[Callable[[bytes], Any]] = []

    def decode(data: bytes) -> Any:
        if len(data) < 4:
            raise ValueError(
                f'Invalid CDR data size {len(data)}, must contain at least a 4-byte header')
        if data[1] & 1:
            return little(data)
        if not big:
            big.append(_compile(msgdefs, key, '>', json, parts))
        return big[0](data)

    return decode


def _checked_definitions(schema_name: str, schema_text: str) -> dict[str, Any]:
    # mcap_ros2's own parsing, through ghost_bag's one shim of its private API.
    msgdefs = message_definitions(schema_name, schema_text)
    if schema_name not in msgdefs:
        raise ValueError(f'schema parsing failed for "{schema_name}"')
    return msgdefs


def compile_decoder(schema_name: str, schema_text: str) -> DictDecoder:
    """Return the decoder of the messages of `schema_name` (ros2msg `schema_text`).

    Raises what mcap_ros2's parser raises on a schema it cannot parse, and ValueError when
    the text does not define `schema_name`.
    """
    decode: DictDecoder = _dispatch(_checked_definitions(schema_name, schema_text),
                                    schema_name, False, ())
    return decode


def compile_json_decoder(
    schema_name: str, schema_text: str, parts: tuple[str, ...] = ()
) -> JsonDecoder:
    """Like compile_decoder, and the canonical JSON of the dict with it, in the same pass.

    The decoder returns ``(msg, json, part_jsons)``: `json` is
    ``ghost_core.hashing.canonical_json(msg)``, and `part_jsons` holds that of each
    ``msg[name]`` for the top-level message fields named in `parts` (in that order; the
    JSON of the whole message contains each of them as it is).
    """
    msgdefs = _checked_definitions(schema_name, schema_text)
    fields = {item.name: item for item in msgdefs[schema_name].fields}
    for name in parts:
        item = fields.get(name)
        if item is None or item.type.is_primitive_type() or item.type.is_array:
            raise ValueError(f'{schema_name} has no message field {name!r}')
    decode: JsonDecoder = _dispatch(msgdefs, schema_name, True, parts)
    return decode
