"""ghost_bag.cdr decodes what mcap-ros2-support decodes, into the same dicts, in one pass.

The reference is what the verifier read with before: mcap-ros2-support's decoder, its objects
turned into SPEC section 4 dicts by ``ghost_core.hashing.hash_form``. Compared by ``repr`` (so that
True and 1, 1 and 1.0, -0.0 and 0.0 are told apart): on every message of every ghost type of a
real run, on a schema with every kind of field in both byte orders, on random values, and on
damaged payloads (cut, flipped, extended), where both must fail or both give the same dict.
The JSON the hashing decoder renders is ``ghost_core.hashing.canonical_json`` of the dict.
"""

from __future__ import annotations

from collections.abc import Callable
import functools
import io
import math
from pathlib import Path
from typing import Any

from bags import gate_entry, gate_records, merged, scenario_traces, trace_entries, write_bag
from hypothesis import given, HealthCheck, settings
from hypothesis import strategies as st
from mcap.reader import make_reader
from mcap_ros2._cdr import CdrWriter, EncapsulationKind
from mcap_ros2._dynamic import _write_complex_type, TimeDefinition
from mcap_ros2._vendor.rosidl_adapter.parser import parse_message_string
from mcap_ros2.decoder import DecoderFactory
import pytest

from ghost_bag.cdr import compile_decoder, compile_json_decoder
from ghost_core.hashing import canonical_json, hash_form

# A schema with every kind of field mcap-ros2-support decodes (and wstring, which it does
# not), nested, in fixed arrays, bounded and unbounded sequences, and an empty message.
EVERYTHING = 'test_cdr/msg/Everything'
EVERYTHING_TEXT = """\
bool flag
byte raw
char letter
int8 i8
uint8 u8
int16 i16
uint16 u16
int32 i32
uint32 u32
int64 i64
uint64 u64
float32 f32
float64 f64
string text
string<=8 short_text
builtin_interfaces/Time stamp
Inner inner
Inner[2] pair
Inner[] inners
Inner[<=3] few
Empty nothing
Empty[] nothings
bool[3] flags
uint8[4] four_bytes
byte[] blob
int8[] small
int16[2] shorts
uint32[] counts
int64[] longs
float32[3] vector
float64[] values
float64[<=4] bounded
string[] words
string[2] two_words
uint64 tail
================================================================================
MSG: test_cdr/Inner
uint8 level
float64 value
string name
int16[] deltas
================================================================================
MSG: test_cdr/Empty
"""
WSTRING = 'test_cdr/msg/Wide'
WSTRING_TEXT = 'uint8 before\nwstring wide\nuint8 after\n'

_FLOATS = st.floats(allow_nan=True, allow_infinity=True)
_FLOAT32 = st.floats(width=32, allow_nan=True, allow_infinity=True)
_TEXT = st.text(max_size=12)


def _ints(bits: int, signed: bool) -> st.SearchStrategy[int]:
    if signed:
        return st.integers(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    return st.integers(0, (1 << bits) - 1)


_INNER = st.fixed_dictionaries({
    'level': _ints(8, False), 'value': _FLOATS, 'name': _TEXT,
    'deltas': st.lists(_ints(16, True), max_size=4)})
EVERYTHING_VALUES = st.fixed_dictionaries({
    'flag': st.booleans(), 'raw': _ints(8, False), 'letter': _ints(8, True),
    'i8': _ints(8, True), 'u8': _ints(8, False), 'i16': _ints(16, True),
    'u16': _ints(16, False), 'i32': _ints(32, True), 'u32': _ints(32, False),
    'i64': _ints(64, True), 'u64': _ints(64, False), 'f32': _FLOAT32, 'f64': _FLOATS,
    'text': _TEXT, 'short_text': st.text(max_size=8),
    'stamp': st.fixed_dictionaries({'sec': _ints(32, False), 'nanosec': _ints(32, False)}),
    'inner': _INNER, 'pair': st.lists(_INNER, min_size=2, max_size=2),
    'inners': st.lists(_INNER, max_size=3), 'few': st.lists(_INNER, max_size=3),
    'nothing': st.just({}), 'nothings': st.lists(st.just({}), max_size=3),
    'flags': st.lists(st.booleans(), min_size=3, max_size=3),
    'four_bytes': st.binary(min_size=4, max_size=4), 'blob': st.binary(max_size=6),
    'small': st.lists(_ints(8, True), max_size=5),
    'shorts': st.lists(_ints(16, True), min_size=2, max_size=2),
    'counts': st.lists(_ints(32, False), max_size=4),
    'longs': st.lists(_ints(64, True), max_size=3),
    'vector': st.lists(_FLOAT32, min_size=3, max_size=3),
    'values': st.lists(_FLOATS, max_size=5), 'bounded': st.lists(_FLOATS, max_size=4),
    'words': st.lists(_TEXT, max_size=3), 'two_words': st.lists(_TEXT, min_size=2, max_size=2),
    'tail': _ints(64, False)})


@functools.cache
def _definitions() -> dict[str, Any]:
    msgdefs: dict[str, Any] = {'builtin_interfaces/Time': TimeDefinition}
    for part in EVERYTHING_TEXT.split('=' * 80):
        text = part.strip()
        name = EVERYTHING
        if text.startswith('MSG:'):
            first, _, text = text.partition('\n')
            name = first.split()[1]
        package, _, short = name.partition('/')
        short = short.split('/')[-1]
        msgdefs[f'{package}/{short}'] = parse_message_string(package, short, text)
    return msgdefs


def _encode(values: dict[str, Any], *, big_endian: bool = False) -> bytes:
    """CDR bytes of an Everything message, written by mcap-ros2-support's own writer."""
    msgdefs = _definitions()
    output = io.BytesIO()
    writer = CdrWriter(output, EncapsulationKind.CDR_BE if big_endian
                       else EncapsulationKind.CDR_LE)
    definition = msgdefs['test_cdr/Everything']
    _write_complex_type(definition.msg_name, definition.fields, msgdefs, values, writer)
    return output.getvalue()


def _reference(schema: str, text: str) -> Callable[[bytes], Any]:
    from mcap.records import Schema

    decoder = DecoderFactory().decoder_for(
        'cdr', Schema(id=1, name=schema, encoding='ros2msg', data=text.encode()))
    assert decoder is not None
    return lambda data: hash_form(decoder(data))


def _outcome(decode: Callable[[bytes], Any], data: bytes) -> str:
    """The decoded dict's repr, or 'error' (both decoders must agree on which)."""
    try:
        return repr(decode(data))
    except Exception:  # noqa: BLE001 - any way of rejecting the payload
        return 'error'


def _same(schema: str, text: str, data: bytes) -> None:
    reference = _outcome(_reference(schema, text), data)
    assert _outcome(compile_decoder(schema, text), data) == reference


def _json_agrees(schema: str, text: str, data: bytes, parts: tuple[str, ...] = ()) -> None:
    msg, rendered, part_texts = compile_json_decoder(schema, text, parts)(data)
    assert repr(msg) == repr(compile_decoder(schema, text)(data))
    assert rendered == canonical_json(msg)
    assert list(part_texts) == [canonical_json(msg[name]) for name in parts]


@functools.cache
def _ghost_payloads(root: str) -> dict[str, tuple[str, list[bytes]]]:
    """Every ghost message of a real run (and a gate's records), by schema: (text, payloads)."""
    traces = scenario_traces('drift_then_recovery')
    entries = merged(trace_entries(traces), [gate_entry(r) for r in gate_records(traces)])
    bag = write_bag(Path(root) / 'bag', entries)
    payloads: dict[str, tuple[str, list[bytes]]] = {}
    with (bag / 'bag.mcap').open('rb') as stream:
        reader = make_reader(stream)
        for schema, _, message in reader.iter_messages():
            if schema is not None and schema.name.startswith('ghost_interfaces/'):
                text = schema.data.decode()
                payloads.setdefault(schema.name, (text, []))[1].append(message.data)
    return payloads


@pytest.fixture(scope='module')
def ghost_payloads(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, list[bytes]]]:
    return _ghost_payloads(str(tmp_path_factory.mktemp('cdr')))


def test_every_ghost_type_decodes_to_the_reference_dicts_and_json(
        ghost_payloads: dict[str, tuple[str, list[bytes]]]) -> None:
    """Every message of every ghost type of a run, the gate's records included."""
    assert len(ghost_payloads) == 7
    for schema, (text, payloads) in ghost_payloads.items():
        decode, reference = compile_decoder(schema, text), _reference(schema, text)
        parts = ('raw_assessment',) if schema.endswith('CalibratedSelfAssessment') else ()
        for data in payloads:
            assert repr(decode(data)) == repr(reference(data)), schema
            _json_agrees(schema, text, data, parts)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_damaged_ghost_payloads_fail_or_decode_as_the_reference_does(
        ghost_payloads: dict[str, tuple[str, list[bytes]]], data: st.DataObject) -> None:
    """Cut, flipped or extended: both decoders fail, or both give the same dict."""
    schema = data.draw(st.sampled_from(sorted(ghost_payloads)))
    text, payloads = ghost_payloads[schema]
    payload = bytearray(data.draw(st.sampled_from(payloads)))
    damage = data.draw(st.sampled_from(['cut', 'flip', 'extend']))
    if damage == 'cut':
        payload = payload[:data.draw(st.integers(0, len(payload) - 1))]
    elif damage == 'flip':
        for _ in range(data.draw(st.integers(1, 4))):
            index = data.draw(st.integers(0, len(payload) - 1))
            payload[index] ^= data.draw(st.integers(1, 255))
    else:
        payload += data.draw(st.binary(min_size=1, max_size=16))
    _same(schema, text, bytes(payload))


@settings(max_examples=150, deadline=None)
@given(EVERYTHING_VALUES, st.booleans())
def test_every_kind_of_field_in_both_byte_orders(values: dict[str, Any],
                                                 big_endian: bool) -> None:
    """Random values of every field kind; the JSON spells NaN, infinities, -0.0 as json does."""
    encoded = _encode(values, big_endian=big_endian)
    _same(EVERYTHING, EVERYTHING_TEXT, encoded)
    _json_agrees(EVERYTHING, EVERYTHING_TEXT, encoded, ('inner', 'nothing', 'stamp'))


@settings(max_examples=150, deadline=None)
@given(EVERYTHING_VALUES, st.data())
def test_every_kind_of_field_cut_or_flipped(values: dict[str, Any], data: st.DataObject) -> None:
    """Damage anywhere in a message with every field kind: the same failure or the same dict."""
    payload = bytearray(_encode(values, big_endian=data.draw(st.booleans())))
    if data.draw(st.booleans()):
        payload = payload[:data.draw(st.integers(0, len(payload)))]
    else:
        index = data.draw(st.integers(0, len(payload) - 1))
        payload[index] ^= data.draw(st.integers(1, 255))
    _same(EVERYTHING, EVERYTHING_TEXT, bytes(payload))


def test_tricky_values_keep_their_types_and_spelling() -> None:
    """NaN, the infinities, -0.0, quotes, control characters, big integers, bytes."""
    inner = {'level': 1, 'value': 0.5, 'name': 'n', 'deltas': [-1, 2]}
    values: dict[str, Any] = {
        'raw': 1, 'letter': -1, 'i8': -8, 'u8': 8, 'i16': -16, 'u16': 16, 'i32': -32, 'u32': 32,
        'short_text': 'short', 'stamp': {'sec': 1, 'nanosec': 2}, 'inner': inner,
        'pair': [inner, inner], 'inners': [], 'few': [inner], 'nothing': {},
        'nothings': [{}, {}], 'flags': [True, False, True], 'four_bytes': b'\x01\x02\x03\x04',
        'small': [-128, 127], 'shorts': [1, -1], 'counts': [0, 4_294_967_295],
        'longs': [], 'vector': [0.25, -0.0, math.nan], 'bounded': [1.5],
        'two_words': ['a', 'b'], 'tail': 7}
    values.update(f64=-0.0, f32=math.inf, values=[math.nan, -math.inf, 1e300, 5e-324],
                  text='"\\\n\t\x00\x1féà😀', flag=True, u64=(1 << 64) - 1, i64=-(1 << 63),
                  blob=b'\x00\xff', words=['', 'x', '\u2028'])
    encoded = _encode(values)
    _same(EVERYTHING, EVERYTHING_TEXT, encoded)
    msg, rendered, _ = compile_json_decoder(EVERYTHING, EVERYTHING_TEXT)(encoded)
    assert msg['flag'] is True and msg['blob'] == [0, 255]
    assert '"values":[NaN,-Infinity,1e+300,5e-324]' in rendered
    assert '"f64":-0.0' in rendered and '"f32":Infinity' in rendered
    assert rendered == canonical_json(msg)


def test_wstring_fails_where_the_reference_fails() -> None:
    """A wstring field is not decoded (as mcap-ros2-support): the payload is refused."""
    _same(WSTRING, WSTRING_TEXT, b'\x00\x01\x00\x00\x07\x00\x00\x00\x00\x00\x00\x00\x01')
    with pytest.raises(NotImplementedError):
        compile_decoder(WSTRING, WSTRING_TEXT)(b'\x00\x01\x00\x00\x07\x08\x09\x0a')


def test_a_nested_type_the_schema_does_not_define_fails_where_the_reference_fails() -> None:
    """A field of a type the text never defines: every payload is refused, as mcap-ros2's."""
    text = 'uint8 before\nUnknown thing\n'
    _same('test_cdr/msg/Broken', text, b'\x00\x01\x00\x00\x07\x00\x00\x00')
    with pytest.raises(ValueError, match='Message definition not found'):
        compile_decoder('test_cdr/msg/Broken', text)(b'\x00\x01\x00\x00\x07')
    with pytest.raises(ValueError, match='no message field'):
        compile_json_decoder(EVERYTHING, EVERYTHING_TEXT, ('flag',))
