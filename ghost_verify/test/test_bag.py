"""Bag reading: layouts, real rosbag2 bags, decoding to message dicts, cycle grouping."""

from __future__ import annotations

from collections.abc import Iterator
import hashlib
from pathlib import Path
import shutil

from ghost_verify_test.bags import (
    ACTUATION,
    CALIBRATED,
    Entry,
    FIXTURES,
    RATIONALE,
    RAW,
    scenario_traces,
    trace_entries,
    write_bag,
)
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory
import pytest
import yaml

from ghost_bag.errors import BagError, BagFormatError, BagNotFoundError
from ghost_core.hashing import content_address, hash_form
from ghost_core.wire import to_msg_dict
from ghost_verify.bag import GhostBag, group_cycles, resolve_bag
from ghost_verify.decode import HASHED_KINDS
from ghost_verify.errors import LateMessageError, NoGhostTopicsError, SchemaMismatchError
from ghost_verify.events import ghost_kind_of_schema, GhostMessage, GhostTopicKind
from ghost_verify.verify import verify_all

REAL_BAGS = ['talker', 'cdr_test', 'wbag', 'bag_with_topics_and_service_events']


def _metadata(bag: Path) -> dict[str, object]:
    document = yaml.safe_load((bag / 'metadata.yaml').read_text())
    info = document['rosbag2_bagfile_information']
    assert isinstance(info, dict)
    return info


def _read_all(bag: GhostBag) -> list[object]:
    return list(bag.cycles())


@pytest.mark.parametrize('name', REAL_BAGS)
def test_real_rosbag2_bags_are_read_to_the_end_and_rejected_for_lack_of_ghost_topics(
    name: str,
) -> None:
    """Every real bag is streamed to its end, then rejected: it holds no ghost topics.

    The error names what the bag does hold; every file's SHA-256 is that of its bytes.
    """
    bag = GhostBag(FIXTURES / name)
    with pytest.raises(NoGhostTopicsError, match='no ghost topics') as caught:
        _read_all(bag)
    assert '\n' not in str(caught.value)
    assert bag.messages_seen == _metadata(FIXTURES / name)['message_count']
    for digest in bag.files_read:
        path = FIXTURES / name / digest.file
        assert digest.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_split_bag_files_are_read_in_the_order_metadata_lists_them() -> None:
    """The bag wbag is one bag over five .mcap files: they are read in metadata.yaml order."""
    listed = _metadata(FIXTURES / 'wbag')['relative_file_paths']
    assert listed == [f'wbag_{index}.mcap' for index in range(5)]
    bag = GhostBag(FIXTURES / 'wbag')
    assert [path.name for path in bag.layout.files] == listed
    with pytest.raises(NoGhostTopicsError):
        _read_all(bag)
    assert [digest.file for digest in bag.files_read] == ['metadata.yaml', *listed]


def test_reading_order_follows_metadata_even_when_names_sort_otherwise(tmp_path: Path) -> None:
    """The order comes from relative_file_paths, not from the file names."""
    bag = tmp_path / 'wbag'
    shutil.copytree(FIXTURES / 'wbag', bag)
    metadata = yaml.safe_load((bag / 'metadata.yaml').read_text())
    order = ['wbag_3.mcap', 'wbag_0.mcap', 'wbag_4.mcap', 'wbag_1.mcap', 'wbag_2.mcap']
    metadata['rosbag2_bagfile_information']['relative_file_paths'] = order
    (bag / 'metadata.yaml').write_text(yaml.safe_dump(metadata))
    ghost_bag = GhostBag(bag)
    with pytest.raises(NoGhostTopicsError):
        _read_all(ghost_bag)
    assert [digest.file for digest in ghost_bag.files_read][1:] == order


def test_a_single_mcap_file_of_a_real_bag_is_a_bag_too() -> None:
    """A lone .mcap file is read without metadata.yaml."""
    layout = resolve_bag(FIXTURES / 'talker' / 'talker.mcap')
    assert layout.metadata is None
    assert [path.name for path in layout.files] == ['talker.mcap']
    with pytest.raises(NoGhostTopicsError, match='/rosout'):
        _read_all(GhostBag(FIXTURES / 'talker' / 'talker.mcap'))


def test_decoded_real_messages_become_spec_message_dicts() -> None:
    """Real rosbag2 messages (cdr_test's BasicTypes, Arrays) convert to SPEC §4 message dicts.

    Fields by name, byte/uint8 arrays as lists of ints, floats as floats, nested dicts.
    """
    path = FIXTURES / 'cdr_test' / 'cdr_test_0.mcap'
    seen = set()
    with path.open('rb') as handle:
        reader = make_reader(handle, decoder_factories=[DecoderFactory()])
        for schema, _channel, _message, decoded in reader.iter_decoded_messages():
            msg = hash_form(decoded)
            assert schema is not None
            seen.add(schema.name)
            content_address(msg)  # hashable as SPEC section 4 requires
            if schema.name == 'test_msgs/msg/BasicTypes':
                assert isinstance(msg['float64_value'], float)
                assert isinstance(msg['bool_value'], bool)
                assert isinstance(msg['byte_value'], int)
            if schema.name == 'test_msgs/msg/Arrays':
                assert all(isinstance(x, int) for x in msg['byte_values'])
                assert all(isinstance(x, int) for x in msg['uint8_values'])
                assert all(isinstance(x, float) for x in msg['float64_values'])
                assert all(isinstance(x, dict) for x in msg['basic_types_values'])
                assert msg['byte_values_default'] == [0, 1, 255]
                assert msg['string_values_default'] == ['', 'max value', 'min value']
                assert msg['constants_values'] == [{}, {}, {}]  # a message of constants only
    assert seen == {'test_msgs/msg/BasicTypes', 'test_msgs/msg/Arrays'}


def test_ghost_messages_decode_to_the_exact_dicts_that_were_written(tmp_path: Path) -> None:
    """Round trip: the decoded dict equals ghost_core's message dict, so hashes agree."""
    entries = trace_entries(scenario_traces('smoke'))
    bag = GhostBag(write_bag(tmp_path / 'bag', entries))
    decoded = list(bag.messages_in_file_order())
    ghost_entries = [entry for entry in entries if entry.topic != '/state/nav']
    assert [message.msg for message in decoded] == [entry.msg for entry in ghost_entries]
    # Hashed: exactly the streams some message cites (the others carry '').
    assert [message.sha256 for message in decoded] == [
        content_address(entry.msg) if message.kind in HASHED_KINDS else ''
        for message, entry in zip(decoded, ghost_entries, strict=True)
    ]
    # Every cycle stream (the smoke run has no command gate, whose records are no cycle's).
    assert {message.kind for message in decoded} == set(GhostTopicKind) - {GhostTopicKind.GATE}


def test_ghost_topics_are_found_by_schema_name_so_remapped_topics_work(tmp_path: Path) -> None:
    """Topics renamed under a namespace are still recognised and verified."""
    remap = {RAW[0]: '/uav1/assess', CALIBRATED[0]: '/uav1/cal', RATIONALE[0]: '/uav1/why',
             ACTUATION[0]: '/uav1/act'}
    bag = write_bag(tmp_path / 'bag', trace_entries(scenario_traces('smoke')), topic_map=remap)
    result = verify_all(bag)
    assert result.holds
    assert result.baud.cycles_precondition_held == 6
    assert ghost_kind_of_schema('ghost_interfaces/ActionEmission') is GhostTopicKind.ACTUATION
    assert ghost_kind_of_schema('std_msgs/msg/String') is None


def test_a_bag_split_over_two_files_reads_like_one(tmp_path: Path) -> None:
    """A ghost bag over two .mcap files (a cycle straddling the split) gives the same reports."""
    entries = trace_entries(scenario_traces('smoke'))
    cut = len(entries) // 2 + 2  # inside a cycle
    whole = verify_all(write_bag(tmp_path / 'whole', entries))
    first = write_bag(tmp_path / 'first', entries[:cut])
    second = write_bag(tmp_path / 'second', entries[cut:])
    split = tmp_path / 'split'
    split.mkdir()
    shutil.copy(first / 'first.mcap', split / 'split_0.mcap')
    shutil.copy(second / 'second.mcap', split / 'split_1.mcap')
    metadata = {'rosbag2_bagfile_information': {
        'version': 9, 'storage_identifier': 'mcap',
        'relative_file_paths': ['split_0.mcap', 'split_1.mcap'],
    }}
    (split / 'metadata.yaml').write_text(yaml.safe_dump(metadata))
    result = verify_all(split)
    assert [d.file for d in result.baud.bag_files] == [
        'metadata.yaml', 'split_0.mcap', 'split_1.mcap']
    assert result.baud.to_json() | {'bag_files': None} == whole.baud.to_json() | {
        'bag_files': None}
    assert result.trace.summary() == whole.trace.summary() == 'chain: 10/10 verified'


def _message(stamp_ns: int, kind: GhostTopicKind = GhostTopicKind.PREDICTION) -> GhostMessage:
    msg = {'header': {'stamp': {'sec': 0, 'nanosec': stamp_ns}, 'frame_id': 'map'}}
    return GhostMessage('/predictions', 'ghost_interfaces/msg/ForwardPrediction', kind, 0,
                        stamp_ns, msg, content_address(msg))


def test_cycles_come_out_in_stamp_order_even_when_messages_interleave() -> None:
    """Messages of neighbouring cycles may interleave; each cycle is yielded once, in order."""
    stamps = [3, 1, 2, 1, 3, 2, 5, 4]
    events = list(group_cycles((_message(s) for s in stamps), cycle_window=8))
    assert [event.stamp_ns for event in events] == [1, 2, 3, 4, 5]
    assert [len(event.predictions) for event in events] == [2, 2, 2, 1, 1]


def test_grouping_streams_with_memory_bounded_by_the_cycle_window() -> None:
    """At most W cycles are ever held, whatever the bag's length.

    With window W, cycle t is yielded before the message of cycle t + W + 1 is read.
    """
    pulled: list[int] = []

    def stream() -> Iterator[GhostMessage]:
        for stamp in range(1, 100_000):
            pulled.append(stamp)
            yield _message(stamp)

    window = 4
    events = group_cycles(stream(), cycle_window=window)
    for expected in range(1, 50):
        event = next(events)
        assert event.stamp_ns == expected
        assert pulled[-1] == expected + window


def test_a_message_older_than_the_window_is_reported_not_misjudged() -> None:
    """A message for an already closed cycle raises LateMessageError, not a wrong verdict."""
    with pytest.raises(LateMessageError, match='--cycle-window'):
        list(group_cycles((_message(s) for s in [1, 2, 3, 1]), cycle_window=2))


def test_late_messages_in_a_bag_are_fine_within_the_window(tmp_path: Path) -> None:
    """Actuations recorded five cycles late still join their cycle (default window)."""
    entries = trace_entries(scenario_traces('smoke'))
    actuations = [entry for entry in entries if entry.topic == ACTUATION[0]]
    others = [entry for entry in entries if entry.topic != ACTUATION[0]]
    delayed = others[: 5 * 5] + actuations + others[5 * 5:]
    assert verify_all(write_bag(tmp_path / 'bag', delayed)).holds
    with pytest.raises(LateMessageError):
        verify_all(write_bag(tmp_path / 'small', delayed), cycle_window=2)


@pytest.mark.parametrize(('content', 'match'), [
    (b'', 'empty or truncated'),
    (b'this is a text file, not a bag\n' * 10, 'not an MCAP file'),
    (b'\x89MCAP0\r\n\x01\x00', 'truncated'),
])
def test_files_that_are_not_mcap_raise_one_line_format_errors(
    tmp_path: Path, content: bytes, match: str,
) -> None:
    """Empty, text and truncated files are BagFormatError with a one-line message."""
    path = tmp_path / 'input.mcap'
    path.write_bytes(content)
    with pytest.raises(BagFormatError, match=match) as caught:
        _read_all(GhostBag(path))
    assert '\n' not in str(caught.value)


def test_a_bag_in_one_chunk_cut_in_the_middle_has_nothing_to_judge(tmp_path: Path) -> None:
    """Cut inside its only chunk, a bag holds no readable ghost message: a format error.

    (Bags cut after some complete chunks are judged on those: see test_damage.py.)
    """
    bag = write_bag(tmp_path / 'bag', trace_entries(scenario_traces('smoke')))
    data = (bag / 'bag.mcap').read_bytes()
    (bag / 'bag.mcap').write_bytes(data[: len(data) // 2])
    with pytest.raises(BagFormatError, match='bag.mcap: truncated'):
        verify_all(bag)


def test_layout_errors_name_the_problem(tmp_path: Path) -> None:
    """Missing paths, directories without metadata, bad metadata and missing files."""
    with pytest.raises(BagNotFoundError, match='no such file'):
        resolve_bag(tmp_path / 'nothing')
    with pytest.raises(BagFormatError, match='without metadata.yaml'):
        resolve_bag(tmp_path)
    (tmp_path / 'metadata.yaml').write_text('just: [a, list')
    with pytest.raises(BagFormatError, match='YAML'):
        resolve_bag(tmp_path)
    (tmp_path / 'metadata.yaml').write_text('something: else\n')
    with pytest.raises(BagFormatError, match='rosbag2_bagfile_information'):
        resolve_bag(tmp_path)
    info = {'storage_identifier': 'sqlite3', 'relative_file_paths': ['a.db3']}
    (tmp_path / 'metadata.yaml').write_text(yaml.safe_dump(
        {'rosbag2_bagfile_information': info}))
    with pytest.raises(BagFormatError, match='-s mcap'):
        resolve_bag(tmp_path)
    info = {'storage_identifier': 'mcap', 'relative_file_paths': ['gone.mcap']}
    (tmp_path / 'metadata.yaml').write_text(yaml.safe_dump(
        {'rosbag2_bagfile_information': info}))
    with pytest.raises(BagNotFoundError, match='gone.mcap'):
        resolve_bag(tmp_path)
    # metadata.yaml itself stands for its bag directory.
    assert resolve_bag(FIXTURES / 'wbag' / 'metadata.yaml').root == FIXTURES / 'wbag'


def test_a_malformed_ghost_message_is_a_format_error(tmp_path: Path) -> None:
    """A ghost type whose embedded schema lacks a field the judges need is refused up front."""
    from ghost_verify_test.bags import MSG_DIR

    from ghost_bag.write import ghost_typestore, GhostBagWriter

    msg_dir = tmp_path / 'msg'
    shutil.copytree(MSG_DIR, msg_dir)
    text = (msg_dir / 'ActionEmission.msg').read_text().replace('string rationale_sha256\n', '')
    (msg_dir / 'ActionEmission.msg').write_text(text)
    entries: list[Entry] = [entry for entry in trace_entries(scenario_traces('smoke'))
                            if entry.topic == ACTUATION[0]]
    with GhostBagWriter(tmp_path / 'bag', typestore=ghost_typestore(msg_dir)) as writer:
        for entry in entries:
            msg = {key: value for key, value in entry.msg.items() if key != 'rationale_sha256'}
            writer.write(entry.topic, entry.type_name, msg, entry.log_time_ns)
    with pytest.raises(SchemaMismatchError, match="missing 'rationale_sha256'"):
        verify_all(tmp_path / 'bag')


def test_every_bag_error_is_a_ghost_verify_error() -> None:
    """The CLI maps exactly BagError to exit 3, so every bag error must be one."""
    for error in (BagFormatError, BagNotFoundError, LateMessageError, NoGhostTopicsError,
                  SchemaMismatchError):
        assert issubclass(error, BagError)
    assert issubclass(BagFormatError, ValueError)
    assert issubclass(BagNotFoundError, FileNotFoundError)


def test_cdr_bytes_handed_to_the_writer_decode_to_their_message_dict(tmp_path: Path) -> None:
    """A recorder may hand the writer serialised bytes; the verifier decodes them back.

    (Moved from the writer's test, ghost_bag/test/test_write.py, which does not use the
    auditor.)
    """
    from ghost_verify_test.bags import shared_typestore

    from ghost_bag.write import GhostBagWriter

    trace = scenario_traces('smoke')[3]
    msg = to_msg_dict(trace.calibrated)
    with GhostBagWriter(tmp_path / 'dict', typestore=shared_typestore()) as writer:
        data = writer.serialize('ghost_interfaces/msg/CalibratedSelfAssessment', msg)
    with GhostBagWriter(tmp_path / 'bytes', typestore=shared_typestore()) as writer:
        writer.write('/self_assessment/calibrated',
                     'ghost_interfaces/msg/CalibratedSelfAssessment', data, 5)
    decoded = list(GhostBag(tmp_path / 'bytes').messages_in_file_order())
    assert [message.msg for message in decoded] == [msg]
