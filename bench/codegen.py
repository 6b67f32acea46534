"""Generated code against plain code: each of Ghost's code generators on its hot path.

Ghost generates code only where this benchmark shows it at least KEEP_RATIO (1.5x) faster on
its hot path than plain code doing the same (a loop over the same field table); elsewhere it is
plain code, which a traceback shows and a debugger steps through (docs/performance.md,
"Generated code"). One row per generator, each form timed on what the hot path gives it:

- ``contracts``: building every contract of a cycle, nested ones included (the pipeline's
  outputs and a gate record per cycle), with the ``__post_init__`` generated per class vs the
  plain loop over the class's field table (every contract a node or a parser builds);
- ``wire parse``: ``ghost_core.wire.parse_*`` of every message dict of a cycle (what a node
  does with each message it receives over DDS, and the verifier with each outcome);
- ``wire write``: ``ghost_core.wire.to_msg_dict`` of the same contracts (every message a node
  publishes, every content address of a contract);
- ``hash_form (rclpy)``: ``ghost_core.hashing.hash_form`` of those messages as rclpy builds
  them (every message a node receives over DDS); ``hash_form (dict)``: of their dicts;
- ``from_msg_dict``: ``ghost_nodes.convert.from_msg_dict`` of their dicts (every message a node
  publishes);
- ``cdr decode`` and ``cdr decode+json``: ``ghost_bag.cdr``'s decoders on every message of a
  bag written by bench/bagsynth.py (the verifier's reading; +json: the three cited streams,
  whose canonical JSON is hashed) vs a plain interpreter of the schema (+ canonical_json);
- ``msg_fields``: the field table generated from the .msg files (ghost_core.msg_fields,
  executed as an import does) vs parsing the .msg texts: not run-time generation, read at
  import only, on no per-message path.

The inputs are the pipeline's own: bench/bagsynth.py's two drift-then-recovery flights (100
cycles; --quick: 20) and a bag of --bag-cycles cycles. Before timing, both forms run on every
input and their results are compared (a row whose forms disagree says so). Each form is timed
over all its inputs in one pass, the two forms alternating, best of --repeats passes; the
ratio is plain / generated (above 1: the generated form is faster). The other form of each
generator is bench/codegen_forms.py's. Prints a table; --json writes the rows.

    python bench/codegen.py [--quick] [--json /tmp/codegen.json]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
import io
from pathlib import Path
import sys
import tempfile
import time
from typing import Any

from benchlib import machine_info, MSG_DIR, write_json

__all__ = ['KEEP_RATIO', 'codegen_table', 'main', 'run_codegen']

#: Generated code is kept where it is at least this many times faster than the plain form.
KEEP_RATIO = 1.5
REPEATS, QUICK_REPEATS = 21, 5
FLIGHT_CYCLES, QUICK_FLIGHT_CYCLES = 100, 20
BAG_CYCLES, QUICK_BAG_CYCLES = 1000, 100
#: The streams whose canonical JSON the verifier renders while decoding (ghost_verify.decode).
_HASHED_PARTS: Mapping[str, tuple[str, ...]] = {
    'BeliefSelfAssessment': (), 'CalibratedSelfAssessment': ('raw_assessment',),
    'DecisionRationale': ()}


@dataclass(frozen=True)
class _Row:
    """One generator: its two forms over the same inputs, and which one the package uses."""

    name: str
    package: str                 # 'generated' or 'plain': the form the package uses
    hot_path: str
    calls: int                   # calls of the measured function in one pass
    generated: Callable[[], float]   # one timed pass (seconds)
    plain: Callable[[], float]
    agree: Callable[[], bool]


def _timed(run: Callable[[], object]) -> Callable[[], float]:
    def once() -> float:
        start = time.perf_counter()
        run()
        return time.perf_counter() - start
    return once


def _calls(calls: Sequence[tuple[Callable[..., Any], Any]]) -> Callable[[], float]:
    """One timed pass of ``function(argument)`` for each pair, results dropped as they come."""
    def run() -> None:
        for function, argument in calls:
            function(argument)
    return _timed(run)


def _calls2(function: Callable[[Any, Any], Any],
            arguments: Sequence[tuple[Any, Any]]) -> Callable[[], float]:
    """One timed pass of ``function(a, b)`` for each pair of arguments."""
    def run() -> None:
        for a, b in arguments:
            function(a, b)
    return _timed(run)


# --- inputs ----------------------------------------------------------------------------------

def _cycle_contracts(cycles: int) -> list[Any]:
    """Each cycle's published contracts, and the gate's record of its actuation."""
    from bagsynth import flight_traces

    from ghost_core.contracts import GateEmission
    from ghost_core.gate import gate_verdict, LatestActuation

    contracts: list[Any] = []
    for trace in flight_traces()[:cycles]:
        contracts += [c for c in (trace.raw, trace.prediction, trace.outcome, trace.calibrated,
                                  trace.rationale, trace.emission) if c is not None]
        emission = trace.emission
        received = trace.stamp_ns + 10_000
        latest = LatestActuation(int(emission.decision.kind), int(emission.command.kind),
                                 received)
        verdict = gate_verdict(latest, trace.stamp_ns + 20_000_000, 500_000_000)
        contracts.append(GateEmission(
            stamp_ns=trace.stamp_ns + 20_000_000, frame_id='ned', action=verdict.action,
            reason=verdict.reason, mode='px4', output_topic='/fmu/in/trajectory_setpoint',
            timeout_s=0.5, has_actuation=True, actuation_stamp_ns=trace.stamp_ns,
            rationale_sha256=emission.rationale_sha256, decision_kind=latest.decision_kind,
            command_kind=latest.command_kind, actuation_received_ns=received,
            position=(1.0, -2.0, -10.0), velocity=(None, None, None), yaw=None,
            vehicle_command=verdict.vehicle_command))
    return contracts


def _nested_first(contract: Any, into: list[Any]) -> None:
    from ghost_core.contracts import Contract

    for field in fields(contract):
        value = getattr(contract, field.name)
        if isinstance(value, Contract):
            _nested_first(value, into)
    into.append(contract)


def _bag_messages(cycles: int) -> tuple[dict[int, Any], list[tuple[int, bytes]]]:
    """The schemas (by channel) and payloads of a bag of `cycles` cycles, in log order."""
    from bagsynth import write_bag
    from decode_floor import _mcap_files
    from mcap.records import Channel, Message, Schema
    from mcap.stream_reader import StreamReader

    schemas: dict[int, Any] = {}
    channels: dict[int, Any] = {}
    payloads: list[tuple[int, bytes]] = []
    with tempfile.TemporaryDirectory(prefix='ghost-bench-codegen-') as tmp:
        bag = write_bag(Path(tmp) / 'bag', cycles)
        for path in _mcap_files(bag):
            with path.open('rb') as raw:
                stream = io.BufferedReader(raw, buffer_size=1 << 20)
                for record in StreamReader(stream, validate_crcs=False).records:
                    if isinstance(record, Message):
                        payloads.append((record.channel_id, bytes(record.data)))
                    elif isinstance(record, Schema):
                        schemas[record.id] = record
                    elif isinstance(record, Channel):
                        channels[record.id] = schemas[record.schema_id]
    return channels, payloads


# --- the rows --------------------------------------------------------------------------------

def _contract_rows(contracts: Sequence[Any]) -> list[_Row]:
    import codegen_forms as other

    from ghost_core import wire
    from ghost_core.hashing import hash_form
    import ghost_interfaces.msg as msgs
    from ghost_nodes.convert import from_msg_dict

    built: list[Any] = []
    for contract in contracts:
        _nested_first(contract, built)
    arguments = [(type(c), tuple(getattr(c, f.name) for f in fields(c))) for c in built]
    classes = sorted({cls for cls, _ in arguments}, key=lambda cls: cls.__name__)

    def construct() -> list[Any]:
        return [cls(*values) for cls, values in arguments]

    def construct_each() -> None:
        for cls, values in arguments:
            cls(*values)

    def construct_generated() -> float:
        with other.generated_contracts(classes):
            return _timed(construct_each)()

    def contracts_agree() -> bool:
        with other.generated_contracts(classes):
            generated = construct()
        return generated == construct() == built

    dicts = [wire.to_msg_dict(c) for c in contracts]
    names = [type(c).__name__ for c in contracts]
    package_parse = [wire.MESSAGE_TYPES[name][1] for name in names]
    generated_parsers = other.generated_parsers()
    generated_parse = [generated_parsers[name] for name in names]

    def parse_with(parsers: Sequence[Callable[..., Any]]) -> Callable[[], list[Any]]:
        return lambda: [parse(d) for parse, d in zip(parsers, dicts, strict=True)]

    types = [getattr(msgs, name) for name in names]
    messages = [from_msg_dict(t, d) for t, d in zip(types, dicts, strict=True)]
    typed = list(zip(types, dicts, strict=True))

    def same(a: Sequence[Any], b: Sequence[Any]) -> bool:
        return repr(a) == repr(b)

    to_msg_dict, plain_to_msg_dict = wire.to_msg_dict, other.plain_to_msg_dict
    hash_generated = other.generated_hash_form
    build_generated = other.generated_from_msg_dict
    return [
        _Row('contracts', 'plain', 'every contract built (nodes, parsers, the verifier)',
             len(arguments), construct_generated, _timed(construct_each), contracts_agree),
        _Row('wire parse', 'plain', 'every message a node receives over DDS',
             len(dicts), _calls(list(zip(generated_parse, dicts, strict=True))),
             _calls(list(zip(package_parse, dicts, strict=True))),
             lambda: parse_with(generated_parse)() == parse_with(package_parse)() == contracts),
        _Row('wire write', 'generated', 'every message a node publishes; content addresses',
             len(contracts), _calls([(to_msg_dict, c) for c in contracts]),
             _calls([(plain_to_msg_dict, c) for c in contracts]),
             lambda: same([to_msg_dict(c) for c in contracts],
                          [plain_to_msg_dict(c) for c in contracts])),
        _Row('hash_form (rclpy)', 'plain', 'every message a node receives over DDS',
             len(messages), _calls([(hash_generated, m) for m in messages]),
             _calls([(hash_form, m) for m in messages]),
             lambda: same([hash_generated(m) for m in messages],
                          [hash_form(m) for m in messages]) and same(
                              [hash_form(m) for m in messages], dicts)),
        _Row('hash_form (dict)', 'plain', 'a message dict (tests, tools)',
             len(dicts), _calls([(hash_generated, d) for d in dicts]),
             _calls([(hash_form, d) for d in dicts]),
             lambda: same([hash_generated(d) for d in dicts], [hash_form(d) for d in dicts])),
        _Row('from_msg_dict', 'plain', 'every message a node publishes',
             len(typed), _calls2(build_generated, typed), _calls2(from_msg_dict, typed),
             # Compared by what they read back to (NaN fields make messages unequal to all).
             lambda: same([hash_form(build_generated(t, d)) for t, d in typed],
                          [hash_form(from_msg_dict(t, d)) for t, d in typed])),
    ]


def _cdr_rows(channels: Mapping[int, Any], payloads: Sequence[tuple[int, bytes]]) -> list[_Row]:
    import codegen_forms as other

    from ghost_bag.cdr import compile_decoder, compile_json_decoder

    generated: dict[int, Callable[[bytes], Any]] = {}
    plain: dict[int, Callable[[bytes], Any]] = {}
    generated_json: dict[int, Callable[[bytes], Any]] = {}
    plain_json: dict[int, Callable[[bytes], Any]] = {}
    for channel, schema in channels.items():
        text = schema.data.decode()
        generated[channel] = compile_decoder(schema.name, text)
        plain[channel] = other.plain_compile_decoder(schema.name, text)
        parts = _HASHED_PARTS.get(schema.name.split('/')[-1])
        if parts is not None:
            generated_json[channel] = compile_json_decoder(schema.name, text, parts)
            plain_json[channel] = other.plain_compile_json_decoder(schema.name, text, parts)
    cited = [(channel, data) for channel, data in payloads if channel in generated_json]

    def decode_all(decoders: Mapping[int, Callable[[bytes], Any]],
                   items: Sequence[tuple[int, bytes]]) -> Callable[[], list[Any]]:
        return lambda: [decoders[channel](data) for channel, data in items]

    def timed(decoders: Mapping[int, Callable[[bytes], Any]],
              items: Sequence[tuple[int, bytes]]) -> Callable[[], float]:
        return _calls([(decoders[channel], data) for channel, data in items])

    return [
        _Row('cdr decode', 'generated', 'every message of a bag the verifier reads',
             len(payloads), timed(generated, payloads), timed(plain, payloads),
             lambda: repr(decode_all(generated, payloads)())
             == repr(decode_all(plain, payloads)())),
        _Row('cdr decode+json', 'generated', 'the cited streams of a bag (hashed)',
             len(cited), timed(generated_json, cited), timed(plain_json, cited),
             lambda: repr(decode_all(generated_json, cited)())
             == repr(decode_all(plain_json, cited)())),
    ]


def _msg_fields_row() -> _Row:
    import codegen_forms as other

    from ghost_core import msg_fields
    from ghost_core.msg_fields import MESSAGE_FIELDS

    code = compile(Path(msg_fields.__file__).read_text(encoding='utf-8'), msg_fields.__file__,
                   'exec')
    texts = {path.stem: path.read_text(encoding='utf-8') for path in sorted(MSG_DIR.glob('*.msg'))}

    def load() -> Any:
        namespace: dict[str, Any] = {}
        exec(code, namespace)  # noqa: S102 - what importing ghost_core.msg_fields runs
        return namespace['MESSAGE_FIELDS']

    return _Row('msg_fields', 'generated', 'import only (no per-message path)', 1,
                _timed(load), _timed(lambda: other.plain_message_fields(texts)),
                lambda: dict(load()) == other.plain_message_fields(texts)
                == dict(MESSAGE_FIELDS))


# --- measuring -------------------------------------------------------------------------------

def _measure(row: _Row, repeats: int) -> dict[str, Any]:
    try:
        agree = row.agree()
    except Exception as err:  # noqa: BLE001 - reported in the row, as a disagreement
        agree, note = False, f'{type(err).__name__}: {err}'
    else:
        note = ''
    best = {'generated': float('inf'), 'plain': float('inf')}
    for index in range(repeats):
        # Alternating, and each form first half of the time: drift hits both alike.
        order = ('generated', 'plain') if index % 2 == 0 else ('plain', 'generated')
        for form in order:
            best[form] = min(best[form], getattr(row, form)())
    generated_us = best['generated'] / row.calls * 1e6
    plain_us = best['plain'] / row.calls * 1e6
    ratio = plain_us / generated_us
    result = {
        'generator': row.name, 'hot_path': row.hot_path, 'calls': row.calls,
        'generated_us': generated_us, 'plain_us': plain_us, 'ratio': ratio,
        'generation_pays': ratio >= KEEP_RATIO, 'package_form': row.package,
        'forms_agree': agree,
    }
    if note:
        result['error'] = note
    return result


def run_codegen(quick: bool = False, repeats: int | None = None,
                bag_cycles: int | None = None,
                log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Measure every generator against its plain form; return the rows and the setup."""
    repeats = repeats or (QUICK_REPEATS if quick else REPEATS)
    bag_cycles = bag_cycles or (QUICK_BAG_CYCLES if quick else BAG_CYCLES)
    flight_cycles = QUICK_FLIGHT_CYCLES if quick else FLIGHT_CYCLES
    contracts = _cycle_contracts(flight_cycles)
    channels, payloads = _bag_messages(bag_cycles)
    rows = [*_contract_rows(contracts), *_cdr_rows(channels, payloads), _msg_fields_row()]
    measured = []
    for row in rows:
        measured.append(_measure(row, repeats))
        if log is not None:
            m = measured[-1]
            log(f'{row.name}: generated {m["generated_us"]:.2f} us, plain {m["plain_us"]:.2f} '
                f'us per call, ratio {m["ratio"]:.2f}')
    return {
        'keep_ratio': KEEP_RATIO,
        'repeats': repeats,
        'flight_cycles': flight_cycles,
        'bag_cycles': bag_cycles,
        'bag_messages': len(payloads),
        'rows': measured,
    }


def codegen_table(result: Mapping[str, Any]) -> str:
    """One line per generator: both forms' time per call, the ratio and what it calls for."""
    header = ['generator', 'calls', 'generated us', 'plain us', 'plain/generated',
              'ratio calls for', 'package has', 'forms agree']
    rows = []
    for row in result['rows']:
        calls_for = 'generated' if row['generation_pays'] else 'plain'
        rows.append([row['generator'], f'{row["calls"]:,}', f'{row["generated_us"]:.2f}',
                     f'{row["plain_us"]:.2f}', f'{row["ratio"]:.2f}', calls_for,
                     row['package_form'] + ('' if row['package_form'] == calls_for else ' (!)'),
                     'yes' if row['forms_agree'] else f'NO {row.get("error", "")}'.strip()])
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]

    def line(cells: Sequence[str]) -> str:
        return '| ' + ' | '.join(c.rjust(w) for c, w in zip(cells, widths, strict=True)) + ' |'
    separator = '|' + '|'.join('-' * (w + 1) + ':' for w in widths) + '|'
    footer = (f'best of {result["repeats"]} alternating passes; inputs: {result["flight_cycles"]} '
              f'pipeline cycles (+ a gate record each), a bag of {result["bag_cycles"]:,} cycles '
              f'({result["bag_messages"]:,} messages); generated code pays at plain/generated '
              f'>= {result["keep_ratio"]}; (!): the package has the other form')
    return '\n'.join([line(header), separator, *(line(r) for r in rows), footer])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--quick', action='store_true',
                        help=f'smoke size: {QUICK_FLIGHT_CYCLES} cycles, a bag of '
                             f'{QUICK_BAG_CYCLES} cycles, best of {QUICK_REPEATS}')
    parser.add_argument('--repeats', type=int, default=None,
                        help=f'timed passes per form (default {REPEATS})')
    parser.add_argument('--bag-cycles', type=int, default=None,
                        help=f'cycles of the decoded bag (default {BAG_CYCLES})')
    parser.add_argument('--json', type=Path, default=None, help='write the rows here')
    args = parser.parse_args(argv)
    result = run_codegen(args.quick, args.repeats, args.bag_cycles)
    print(codegen_table(result))
    if args.json is not None:
        write_json(args.json, {'machine': machine_info(), 'codegen': result})
    return 0


if __name__ == '__main__':
    sys.exit(main())
