"""Fuzzing: random bytes and damaged bags never crash the reader or the CLI, nor pass as whole.

What may and may not happen (docs/reliability.md): only BagError subclasses
escape the reader; the CLI exits 0, 1 or 3 without a traceback; a bag damaged inside a chunk
(a CRC-checked byte flipped, truncated, a chunk removed or duplicated) never exits 0. A flip
in a chunk without CRC may pass when it lands where no check looks (see the document).
"""

from __future__ import annotations

import contextlib
import functools
import io
from pathlib import Path
import tempfile

from ghost_verify_test.bags import chunk_spans, mcap_of, scenario_traces, trace_entries, write_bag
from ghost_verify_test.strategies import BaseBag, Damage, damaged_bags
from hypothesis import given, settings

from ghost_bag.errors import BagError
from ghost_core.cli import ExitCode
from ghost_verify import cli
from ghost_verify.bag import GhostBag


@functools.cache
def bases() -> tuple[BaseBag, ...]:
    """The smoke bag in 1 KiB chunks, once with chunk CRCs and once without."""
    made = []
    for crc in (True, False):
        with tempfile.TemporaryDirectory() as directory:
            # Both named bag/bag.mcap, so either metadata.yaml fits either damaged file.
            bag = write_bag(Path(directory) / 'bag', trace_entries(scenario_traces('smoke')),
                            chunk_size=1024, chunk_crc=crc)
            spans = tuple((s.start, s.content, s.end) for s in chunk_spans(mcap_of(bag)))
            made.append(BaseBag(mcap_of(bag).read_bytes(),
                                (bag / 'metadata.yaml').read_text(), spans, crc))
    return tuple(made)


def _materialise(damage: Damage, directory: Path) -> Path:
    if not damage.with_metadata:
        path = directory / 'input.mcap'
        path.write_bytes(damage.data)
        return path
    bag = directory / 'bag'
    bag.mkdir()
    (bag / 'bag.mcap').write_bytes(damage.data)
    (bag / 'metadata.yaml').write_text(bases()[0].metadata)
    return bag


def test_the_bases_are_valid_and_verify() -> None:
    """The undamaged bags exit 0: any failure below is due to the damage."""
    with tempfile.TemporaryDirectory() as directory:
        for base in bases():
            path = Path(directory) / f'{base.crc}.mcap'
            path.write_bytes(base.data)
            with contextlib.redirect_stdout(io.StringIO()):
                assert cli.verify_all_main([str(path)]) == ExitCode.OK
            assert len(base.spans) > 10


@settings(max_examples=300, deadline=None)
@given(damaged_bags(bases()))
def test_damaged_input_never_crashes_and_damage_inside_a_chunk_never_passes(
    damage: Damage,
) -> None:
    with tempfile.TemporaryDirectory() as directory:
        path = _materialise(damage, Path(directory))
        try:
            list(GhostBag(path).cycles())
        except BagError:
            pass
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.verify_all_main([str(path)])
    errors = err.getvalue()
    assert code in (ExitCode.OK, ExitCode.VIOLATED, ExitCode.BAD_INPUT), (damage.description,
                                                                         errors)
    assert 'Traceback' not in errors
    if code == ExitCode.BAD_INPUT:
        assert errors.count('\n') == 1 and errors.startswith('verify_all: error: ')
    if damage.must_fail:
        assert code != ExitCode.OK, damage.description
    if damage.must_be_unreadable:
        assert code == ExitCode.BAD_INPUT, damage.description
