"""Corrupt input: one clear line and exit 3, or a partial verdict, a note and exit 1.

Rule (docs/properties.md): a bag of which part is readable is judged on what was read; the
reports list what was not (`read_errors`, `incomplete_input`) and the tools exit 1 at least.
Exit 3 only when no ghost message at all could be read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
import shutil

from ghost_verify_test.bags import (
    CALIBRATED,
    chunk_spans,
    Entry,
    flip,
    killed_recorder_bag,
    mcap_of,
    MSG_DIR,
    scenario_traces,
    trace_entries,
    truncate,
    write_bag,
)
import pytest
import yaml

from ghost_bag.errors import BagFormatError, BagNotFoundError
from ghost_bag.write import ghost_typestore
from ghost_core.assessment import ASSESSOR_ID
from ghost_core.cli import ExitCode
from ghost_verify import cli
from ghost_verify.bag import GhostBag
from ghost_verify.errors import SchemaMismatchError
from ghost_verify.events import ReadErrorKind
from ghost_verify.trace import trace_decisions
from ghost_verify.verify import verify_all

Main = Callable[[Sequence[str] | None], int]
TOOLS = [cli.verify_all_main, cli.verify_baud_main, cli.verify_erur_main, cli.trace_decisions_main]


def smoke_entries() -> list[Entry]:
    """The smoke run's messages (70: ten cycles of odometry and six ghost messages)."""
    return trace_entries(scenario_traces('smoke'))


@pytest.fixture
def chunked(tmp_path: Path) -> Path:
    """The smoke bag in small chunks (2 KiB, about a cycle each), with chunk CRCs."""
    return write_bag(tmp_path / 'bag', smoke_entries(), chunk_size=2048)


def run(main: Main, argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_exit_3(
    main: Main, bag: Path, capsys: pytest.CaptureFixture[str], *fragments: str
) -> str:
    """Run a tool: exit 3, nothing on stdout, exactly one error line holding `fragments`."""
    code, out, err = run(main, [str(bag)], capsys)
    assert (code, out) == (ExitCode.BAD_INPUT, ''), err
    assert err.count('\n') == 1 and 'Traceback' not in err, err
    for fragment in fragments:
        assert fragment in err
    return err


# --- truncation -------------------------------------------------------------------------------

def test_a_bag_cut_mid_chunk_is_judged_on_its_complete_chunks_and_exits_1(
    chunked: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """No footer, no summary, the last chunk cut: the chunks before it are judged.

    The read error names the file, the kind `truncated` and the chunk record that was cut;
    every tool prints the verdict of what was read plus `note:` lines, and exits 1.
    """
    spans = chunk_spans(mcap_of(chunked))
    cut = spans[len(spans) // 2]
    truncate(mcap_of(chunked), cut.start + 100)
    result = verify_all(chunked)
    assert result.incomplete_input and not result.holds
    (error,) = result.read_errors
    assert (error.file, error.kind, error.offset) == ('bag.mcap', ReadErrorKind.TRUNCATED,
                                                      cut.start)
    assert f'inside a chunk record that starts at byte {cut.start}' in error.detail
    # What was read is judged: the cycles of the complete chunks, and only those.
    assert 0 < result.trace.total_decisions < 10
    assert result.baud.holds and result.erur.holds
    assert result.baud.incomplete_input and result.trace.incomplete_input
    assert result.to_json()['read_errors'] == [{
        'file': 'bag.mcap', 'kind': 'truncated', 'detail': error.detail,
        'offset': cut.start, 'count': 1}]
    for main in TOOLS:
        code, out, err = run(main, [str(chunked)], capsys)
        assert code == ExitCode.VIOLATED and 'Traceback' not in err
        assert 'note: input incomplete: bag.mcap: truncated: the file ends at byte' in out
        assert 'the verdicts cover only what could be read' in out


def test_a_bag_cut_between_chunks_is_still_incomplete(
    chunked: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """Cut exactly after a complete chunk (and its index): still incomplete, exit 1.

    No record is half-read, yet the footer is missing, so the evidence is incomplete: exit 1,
    never a silent 0.
    """
    spans = chunk_spans(mcap_of(chunked))
    truncate(mcap_of(chunked), spans[4].start)
    result = verify_all(chunked)
    (error,) = result.read_errors
    assert error.kind is ReadErrorKind.TRUNCATED
    assert 'after the complete record' in error.detail and 'before the MCAP footer' in error.detail
    assert run(cli.verify_baud_main, [str(chunked)], capsys)[0] == ExitCode.VIOLATED


def test_a_bag_cut_before_its_first_chunk_ends_exits_3(
    chunked: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """Nothing ghost is readable: exit 3 with one line that says why."""
    spans = chunk_spans(mcap_of(chunked))
    truncate(mcap_of(chunked), spans[0].start + 50)
    with pytest.raises(BagFormatError, match='no ghost message could be read'):
        verify_all(chunked)
    for main in TOOLS:
        assert_one_line_exit_3(main, chunked, capsys, 'no ghost message could be read',
                               'bag.mcap: truncated')


def test_a_killed_recorder_leaves_a_bag_that_is_judged_with_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """SIGKILL: header + flushed chunks + part of the next one, no summary, no metadata.yaml.

    The directory is read from its one .mcap; the reports say metadata.yaml is missing and
    where the file ends; the flushed cycles are judged; exit 1.
    """
    entries = smoke_entries()
    bag = killed_recorder_bag(tmp_path / 'bag', entries, flushed=35, tail=14,
                              partial_bytes=300)
    assert not (bag / 'metadata.yaml').exists()
    result = verify_all(bag)
    kinds = [error.kind for error in result.read_errors]
    assert kinds == [ReadErrorKind.METADATA_MISSING, ReadErrorKind.TRUNCATED]
    assert 'inside a chunk record' in result.read_errors[1].detail
    assert [digest.file for digest in result.baud.bag_files] == ['bag.mcap']
    assert result.trace.total_decisions == 5  # the five cycles flushed, whole
    assert result.completeness.holds and result.history.holds
    code, out, _ = run(cli.verify_all_main, [str(bag)], capsys)
    assert code == ExitCode.VIOLATED
    assert 'note: input incomplete: metadata.yaml: metadata_missing: the bag directory has ' \
        'no metadata.yaml' in out


def test_a_killed_recorder_that_never_flushed_leaves_nothing_to_judge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """Only the MCAP header reached the disk: exit 3, and the line says the file ends early."""
    bag = killed_recorder_bag(tmp_path / 'bag', smoke_entries(), flushed=0, tail=20)
    assert_one_line_exit_3(cli.verify_all_main, bag, capsys, 'no ghost message could be read',
                           'bag.mcap: truncated', 'before the MCAP footer')


def test_a_directory_without_metadata_and_with_a_complete_mcap_is_still_incomplete(
    chunked: Path,
) -> None:
    """metadata.yaml is part of the evidence: its absence is noted and the verdict is exit 1."""
    (chunked / 'metadata.yaml').unlink()
    result = verify_all(chunked)
    assert [error.kind for error in result.read_errors] == [ReadErrorKind.METADATA_MISSING]
    assert result.trace.total_decisions == 10 and not result.holds


def test_split_files_without_metadata_are_read_in_index_order(tmp_path: Path) -> None:
    """A killed recorder that split its bag left <name>_0.mcap, <name>_1.mcap: read in order."""
    entries = smoke_entries()
    first = write_bag(tmp_path / 'first', entries[:30])
    second = write_bag(tmp_path / 'second', entries[30:])
    bag = tmp_path / 'bag'
    bag.mkdir()
    shutil.copy(mcap_of(first), bag / 'bag_10.mcap')
    shutil.copy(mcap_of(first), bag / 'bag_0.mcap')
    shutil.copy(mcap_of(second), bag / 'bag_1.mcap')
    (bag / 'bag_10.mcap').unlink()
    result = verify_all(bag)
    assert [digest.file for digest in result.baud.bag_files] == ['bag_0.mcap', 'bag_1.mcap']
    assert result.trace.summary() == 'chain: 10/10 verified'
    shutil.copy(mcap_of(first), bag / 'other.mcap')
    with pytest.raises(BagFormatError, match='reading order is unknown'):
        verify_all(bag)


# --- flipped bytes ----------------------------------------------------------------------------

def test_a_flipped_byte_inside_a_chunk_fails_its_crc_and_only_that_chunk_is_lost(
    chunked: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """The damaged chunk is skipped and named; the chunks after it are still read.

    The cycles it held are gone from the verdicts; the outcomes it held are missing from the
    later histories, which the history check reports too.
    """
    spans = chunk_spans(mcap_of(chunked))
    damaged = spans[len(spans) // 2]
    flip(mcap_of(chunked), damaged.content + 40)
    result = verify_all(chunked)
    (error,) = result.read_errors
    assert (error.kind, error.offset) == (ReadErrorKind.CRC_MISMATCH, damaged.start)
    assert 'fails its CRC check' in error.detail
    stamps = {record.timestamp_ns for record in trace_decisions(chunked).records}
    last = scenario_traces('smoke')[-1].stamp_ns
    assert last in stamps and len(stamps) < 10  # read past the damage; lost what it held
    assert not result.history.holds and not result.holds
    code, out, _ = run(cli.verify_all_main, [str(chunked)], capsys)
    assert code == ExitCode.VIOLATED
    assert 'note: input incomplete: bag.mcap: crc_mismatch: the chunk at byte' in out


def test_a_damaged_first_chunk_loses_channel_declarations_too(chunked: Path) -> None:
    """Messages on channels that only the lost chunk declared are counted, not guessed at."""
    flip(mcap_of(chunked), chunk_spans(mcap_of(chunked))[0].content + 10)
    result = verify_all(chunked)
    kinds = [error.kind for error in result.read_errors]
    assert kinds[0] is ReadErrorKind.CRC_MISMATCH
    assert ReadErrorKind.UNDECLARED_CHANNEL in kinds
    undeclared = [error for error in result.read_errors
                  if error.kind is ReadErrorKind.UNDECLARED_CHANNEL]
    assert all(error.count >= 1 and 'never declared' in error.detail for error in undeclared)


def test_a_damaged_only_chunk_leaves_nothing_to_judge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """A bag in one chunk: the flip costs every message, so exit 3, naming the chunk."""
    bag = write_bag(tmp_path / 'bag', smoke_entries())
    flip(mcap_of(bag), chunk_spans(mcap_of(bag))[0].content + 10)
    assert_one_line_exit_3(cli.verify_all_main, bag, capsys, 'no ghost message could be read',
                           'bag.mcap: crc_mismatch: the chunk at byte')


@pytest.mark.parametrize(('field', 'offset'), [
    ('record length (low byte)', 1), ('record length (high byte)', 8),
    ('message start time', 9), ('message end time', 17), ('uncompressed size', 25),
    ('crc', 33), ('compression', 37), ('records length', 41),
])
def test_every_field_of_a_chunk_header_is_checked(
    chunked: Path, field: str, offset: int,
) -> None:
    """A flip in the chunk header, outside the content the CRC covers, is caught too.

    The framing, the declared sizes and the declared message times are checked against what
    the chunk holds, so no byte of a chunk record can change unnoticed.
    """
    span = chunk_spans(mcap_of(chunked))[5]
    flip(mcap_of(chunked), span.start + offset, 0x04)
    result = verify_all(chunked)
    assert result.incomplete_input and not result.holds, field


def test_a_chunk_repeated_whole_is_caught_by_the_summary_count(chunked: Path) -> None:
    """A duplicated chunk (valid framing and CRC) adds messages the summary never counted."""
    path = mcap_of(chunked)
    span = chunk_spans(path)[-3]
    data = path.read_bytes()
    path.write_bytes(data[:span.end] + data[span.start:span.end] + data[span.end:])
    (error,) = verify_all(chunked).read_errors
    assert error.kind is ReadErrorKind.COUNT_MISMATCH


def test_a_flip_without_chunk_crcs_is_caught_by_the_hash_chain(tmp_path: Path) -> None:
    """Without chunk CRCs (rosbags writes 0), the chain sees what MCAP cannot.

    rosbags writes chunk CRCs of 0 (not computed): MCAP cannot see a flip in a payload.

    A flipped letter in a raw assessment's assessor_id decodes fine, but the assessment no
    longer hashes to what the calibrated assessment and the rationale claim: chain broken.
    """
    bag = write_bag(tmp_path / 'bag', smoke_entries(), chunk_crc=False)
    data = mcap_of(bag).read_bytes()
    offset = data.index(ASSESSOR_ID.encode())  # the first raw assessment's assessor_id
    flip(mcap_of(bag), offset, 0x20)  # 'c' -> 'C'
    result = verify_all(bag)
    assert not result.read_errors  # MCAP itself saw nothing
    first = scenario_traces('smoke')[0].stamp_ns
    broken = {(link.link.value, link.timestamp_ns) for link in result.trace.links
              if link.chain_status.value == 'broken'}
    assert broken == {('rationale_to_assessment', first), ('calibrated_to_assessment', first)}
    assert not result.holds


def test_what_a_flip_without_chunk_crcs_can_leave_unseen(tmp_path: Path) -> None:
    """The documented limit: without chunk CRCs, a flip in an actuation's contract_id passes.

    No hash covers an actuation's own fields (the chain ends there), so without chunk CRCs a
    flip in its contract_id verifies. With GhostBagWriter's chunk CRCs it is caught.
    """
    entries = smoke_entries()
    for crc, expected in ((False, True), (True, False)):
        bag = write_bag(tmp_path / f'bag_{crc}', entries, chunk_crc=crc, chunk_size=2048)
        offset = mcap_of(bag).read_bytes().index(b'reference_action_emission_v1')
        flip(mcap_of(bag), offset, 0x20)
        assert verify_all(bag).holds is expected


def test_a_message_that_cannot_be_decoded_is_skipped_and_reported(tmp_path: Path) -> None:
    """A message that cannot be decoded is skipped, counted, and the exit is 1.

    A CRC-less chunk whose string length field is damaged: that message is skipped (the rest
    is judged) and the report counts it under `undecodable_message`.
    """
    bag = write_bag(tmp_path / 'bag', smoke_entries(), chunk_crc=False)
    data = mcap_of(bag).read_bytes()
    offset = data.index(b'reference_action_emission_v1') - 4  # its uint32 length prefix
    flip(mcap_of(bag), offset + 3, 0x7F)
    result = verify_all(bag)
    (error,) = result.read_errors
    assert (error.kind, error.count) == (ReadErrorKind.UNDECODABLE_MESSAGE, 1)
    assert '/actuations cannot be decoded' in error.detail
    assert result.trace.total_decisions == 10 and not result.holds


# --- files that are not bags ------------------------------------------------------------------

@pytest.mark.parametrize(('content', 'fragments'), [
    (b'', ('truncated', 'the file is empty', 'empty or truncated')),
    (b'rosbag2_bagfile_information:\n  version: 9\n', ('not_mcap', 'not an MCAP file')),
    (b'\x89MCAP0\r\n', ('truncated', 'before the MCAP footer')),
    (b'\x89MC', ('truncated', 'inside the MCAP magic')),
])
@pytest.mark.parametrize('main', TOOLS)
def test_empty_text_and_stub_files_exit_3_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], main: Main, content: bytes,
    fragments: tuple[str, ...],
) -> None:
    path = tmp_path / 'input.mcap'
    path.write_bytes(content)
    assert_one_line_exit_3(main, path, capsys, *fragments)


def test_metadata_listing_a_missing_file(
    chunked: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """The only listed file is missing: exit 3 naming it. One of two missing: judged, noted."""
    metadata_path = chunked / 'metadata.yaml'
    metadata = yaml.safe_load(metadata_path.read_text())
    info = metadata['rosbag2_bagfile_information']
    info['relative_file_paths'] = ['gone.mcap']
    metadata_path.write_text(yaml.safe_dump(metadata))
    with pytest.raises(BagNotFoundError):
        verify_all(chunked)
    assert_one_line_exit_3(cli.verify_all_main, chunked, capsys,
                           "lists 'gone.mcap', which does not")
    info['relative_file_paths'] = ['bag.mcap', 'bag_1.mcap']
    metadata_path.write_text(yaml.safe_dump(metadata))
    result = verify_all(chunked)
    assert [(error.file, error.kind) for error in result.read_errors] == [
        ('bag_1.mcap', ReadErrorKind.FILE_MISSING)]
    assert result.trace.summary() == 'chain: 10/10 verified' and not result.holds


def test_a_message_count_that_disagrees_with_metadata_is_reported(chunked: Path) -> None:
    """metadata.yaml says how many messages the bag holds: a difference is a read error."""
    metadata_path = chunked / 'metadata.yaml'
    metadata = yaml.safe_load(metadata_path.read_text())
    metadata['rosbag2_bagfile_information']['message_count'] += 1
    metadata_path.write_text(yaml.safe_dump(metadata))
    (error,) = verify_all(chunked).read_errors
    assert (error.file, error.kind) == ('metadata.yaml', ReadErrorKind.COUNT_MISMATCH)
    assert 'records 71 messages but the bag files hold 70' in error.detail


def test_a_chunk_cut_out_of_the_file_is_caught_by_the_summary_count(chunked: Path) -> None:
    """A whole chunk removed leaves valid framing and CRCs; the summary's count catches it.

    The chunk's index records go with it; the file's own summary still counts the messages
    it held.
    """
    path = mcap_of(chunked)
    spans = chunk_spans(path)
    data = path.read_bytes()
    path.write_bytes(data[:spans[-3].start] + data[spans[-2].start:])
    result = verify_all(chunked)
    assert ReadErrorKind.COUNT_MISMATCH in [error.kind for error in result.read_errors]
    assert not result.holds


# --- a different message definition -----------------------------------------------------------

def _bag_with_changed_definition(
    tmp_path: Path, file: str, change: Callable[[str], str],
    rename: Callable[[dict[str, object]], dict[str, object]],
) -> Path:
    msg_dir = tmp_path / 'msg'
    shutil.copytree(MSG_DIR, msg_dir)
    (msg_dir / file).write_text(change((msg_dir / file).read_text()))
    entries = [entry if entry.topic != CALIBRATED[0] else Entry(
        entry.topic, entry.type_name, rename(dict(entry.msg)), entry.log_time_ns,
        entry.stamp_ns) for entry in smoke_entries()]
    return write_bag(tmp_path / 'bag', entries, typestore=ghost_typestore(msg_dir))


def _history(change: Callable[[dict[str, object]], None]) -> Callable[[dict[str, object]],
                                                                        dict[str, object]]:
    def rename(msg: dict[str, object]) -> dict[str, object]:
        history = dict(msg['calibration_history'])  # type: ignore[call-overload]
        change(history)
        return {**msg, 'calibration_history': history}
    return rename


def test_a_calibrated_schema_with_a_renamed_and_a_missing_field_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """A history schema with a renamed and a missing field is refused: exit 3, naming them.

    CalibrationHistory with count_beyond_3_std renamed and count_beyond_5_std removed: the
    verifier would read drift from fields that are not there.
    """
    def change(text: str) -> str:
        return (text.replace('uint32 count_beyond_3_std', 'uint32 count_beyond_3_sigma')
                .replace('uint32 count_beyond_5_std\n', ''))

    def edit(history: dict[str, object]) -> None:
        history['count_beyond_3_sigma'] = history.pop('count_beyond_3_std')
        del history['count_beyond_5_std']

    bag = _bag_with_changed_definition(tmp_path, 'CalibrationHistory.msg', change,
                                       _history(edit))
    with pytest.raises(SchemaMismatchError) as caught:
        verify_all(bag)
    message = str(caught.value)
    assert "missing 'calibration_history.count_beyond_3_std', " \
        "'calibration_history.count_beyond_5_std'" in message
    assert 'count_beyond_3_sigma' in message  # the likely rename is shown
    for main in TOOLS:
        assert_one_line_exit_3(main, bag, capsys, 'the embedded schema does not define',
                               '/self_assessment/calibrated')


def test_a_calibrated_schema_with_a_field_of_another_kind_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """adjusted_overall_level as float64: decodable, but not the level the verifier reads."""
    def change(text: str) -> str:
        return text.replace('uint8 adjusted_overall_level', 'float64 adjusted_overall_level')

    def to_float(msg: dict[str, object]) -> dict[str, object]:
        return {**msg, 'adjusted_overall_level': float(msg['adjusted_overall_level'])}  # type: ignore[arg-type]

    bag = _bag_with_changed_definition(tmp_path, 'CalibratedSelfAssessment.msg', change,
                                       to_float)
    assert_one_line_exit_3(cli.verify_all_main, bag, capsys,
                           "'adjusted_overall_level' is float64, expected an integer")


def test_every_damaged_input_is_read_once_with_bounded_effort(chunked: Path) -> None:
    """A length field flipped to an absurd value is a clean truncation, not a huge read."""
    path = mcap_of(chunked)
    spans = chunk_spans(path)
    flip(path, spans[2].start + 8, 0x40)  # the top byte of the chunk record's length
    bag = GhostBag(chunked)
    cycles = list(bag.cycles())
    assert cycles and bag.read_errors[0].kind is ReadErrorKind.CORRUPT_RECORD
    assert 'runs past the end of a file that otherwise ends with the MCAP magic' in \
        bag.read_errors[0].detail
