"""ghost_bag's layout and raw MCAP reader, on bags the writer wrote (no Ghost decoding)."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

from mcap.records import Message, MessageIndex
from mcap.stream_reader import StreamReader
import pytest
import yaml

from ghost_bag.errors import BagFormatError, BagNotFoundError
from ghost_bag.layout import DATAFLASH_MAGIC, resolve_bag, ULOG_MAGIC
from ghost_bag.mcap_read import _BoundedStream, _records, RawBagReader, ReadErrorKind
from ghost_bag.write import GhostBagWriter

MSG_DIR = Path(__file__).resolve().parents[2] / 'ghost_interfaces' / 'msg'
STRING = 'std_msgs/msg/String'


def _bag(path: Path, count: int = 40) -> Path:
    # Small chunks: a cut file keeps its first chunks whole.
    with GhostBagWriter(path, MSG_DIR, chunk_size=256) as writer:
        for index in range(count):
            topic = '/a' if index % 2 == 0 else '/b'
            writer.write(topic, STRING, {'data': f'message {index}'}, 1000 + index)
    return path


def _payloads(mcap: Path) -> list[tuple[int, bytes]]:
    with mcap.open('rb') as handle:
        return [(record.log_time, bytes(record.data)) for record in StreamReader(handle).records
                if isinstance(record, Message)]


def test_every_message_is_read_raw_in_file_order_with_the_files_digests(tmp_path: Path) -> None:
    """Topic, schema and bytes as recorded; metadata.yaml then the .mcap file, hashed."""
    bag = _bag(tmp_path / 'bag')
    reader = RawBagReader(bag)
    messages = list(reader.read())
    assert [(m.log_time_ns, m.data) for m in messages] == _payloads(bag / 'bag.mcap')
    assert [m.channel.topic for m in messages] == ['/a', '/b'] * 20
    assert {m.channel.schema_name for m in messages} == {'std_msgs/msg/String'}
    assert {(m.channel.message_encoding, m.channel.schema_encoding)
            for m in messages} == {('cdr', 'ros2msg')}
    assert reader.read_errors == ()
    assert reader.messages_seen == 40
    assert [(d.file, d.sha256) for d in reader.files_read] == [
        (name, hashlib.sha256((bag / name).read_bytes()).hexdigest())
        for name in ('metadata.yaml', 'bag.mcap')]
    with pytest.raises(RuntimeError, match='read once'):
        list(reader.read())


def test_a_file_cut_short_is_reported_and_what_precedes_the_cut_is_read(tmp_path: Path) -> None:
    """Damage is diagnosed (TRUNCATED, with the byte offset), not raised."""
    bag = _bag(tmp_path / 'bag')
    mcap = bag / 'bag.mcap'
    data = mcap.read_bytes()
    recorded = _payloads(mcap)
    mcap.write_bytes(data[: len(data) // 2])
    reader = RawBagReader(bag)
    messages = list(reader.read())
    assert 0 < len(messages) < 40
    assert [(m.log_time_ns, m.data) for m in messages] == recorded[: len(messages)]
    kinds = [error.kind for error in reader.read_errors]
    assert kinds == [ReadErrorKind.TRUNCATED]
    error = reader.read_errors[0]
    assert error.file == 'bag.mcap'
    assert f'the file ends at byte {len(data) // 2}' in error.detail


def test_the_layout_lists_files_from_metadata_and_refuses_what_it_cannot_read(
        tmp_path: Path) -> None:
    """metadata.yaml's order and count; rosbag2 compression is refused by name."""
    bag = _bag(tmp_path / 'bag', count=3)
    layout = resolve_bag(bag)
    assert layout.files == (bag / 'bag.mcap',)
    assert layout.metadata == bag / 'metadata.yaml'
    assert layout.message_count == 3
    assert resolve_bag(bag / 'metadata.yaml') == layout
    assert resolve_bag(bag / 'bag.mcap').files == (bag / 'bag.mcap',)
    document = yaml.safe_load((bag / 'metadata.yaml').read_text())
    document['rosbag2_bagfile_information']['compression_mode'] = 'FILE'
    document['rosbag2_bagfile_information']['compression_format'] = 'zstd'
    (bag / 'metadata.yaml').write_text(yaml.safe_dump(document))
    with pytest.raises(BagFormatError, match='per-file compression'):
        resolve_bag(bag)
    with pytest.raises(BagNotFoundError, match='no such file or directory'):
        resolve_bag(tmp_path / 'nothing')
    (bag / 'metadata.yaml').unlink()
    assert resolve_bag(bag).metadata_missing


def _stream_records(data: bytes) -> tuple[list[object], str | None]:
    """The records of `data` (chunks whole) by mcap's own StreamReader, and its error's type."""
    records: list[object] = []
    reader = StreamReader(io.BytesIO(data), emit_chunks=True, validate_crcs=True,
                          record_size_limit=max(len(data), 1))
    try:
        records.extend(reader.records)
    except Exception as err:  # noqa: BLE001 - compared with the reader's
        return records, type(err).__name__
    return records, None


def _our_records(data: bytes) -> tuple[list[object], str | None]:
    records: list[object] = []
    try:
        records.extend(_records(_BoundedStream(io.BytesIO(data), len(data)), max(len(data), 1)))
    except Exception as err:  # noqa: BLE001 - compared with mcap's
        return records, type(err).__name__
    return records, None


def _comparable(records: list[object]) -> list[object]:
    # Message indexes are read whole and their entries not kept (the one difference).
    return [(type(record).__name__, record.channel_id) if isinstance(record, MessageIndex)
            else record for record in records]


def test_the_record_stream_is_mcaps_on_whole_cut_and_altered_files(tmp_path: Path) -> None:
    """mcap_read reads records with mcap's public API: what mcap's StreamReader reads.

    The same records (message indexes aside, whose entries are not kept) and the same error
    type, on a whole file, on the file cut at every 37th byte, and with bytes altered.
    """
    data = (_bag(tmp_path / 'bag', count=12) / 'bag.mcap').read_bytes()
    variants = [data, *(data[:end] for end in range(0, len(data), 37))]
    for offset in range(9, len(data) - 8, 53):
        altered = bytearray(data)
        altered[offset] ^= 0x5A
        variants.append(bytes(altered))
    # A message index cut short ends in EndOfFile here, in struct.error (a short read) in
    # mcap: both are "the file ends inside this record" to the reader (_stream_error).
    cut = {'error': 'EndOfFile'}
    for variant in variants:
        mine, theirs = _our_records(variant), _stream_records(variant)
        assert (_comparable(mine[0]), cut.get(mine[1] or '', mine[1])) == (
            _comparable(theirs[0]), cut.get(theirs[1] or '', theirs[1]))
    assert _our_records(data)[1] is None


def test_a_ulog_given_as_a_bag_says_to_import_it(tmp_path: Path) -> None:
    """Every bag reader resolves the bag first: a PX4 ULog is named as one, with what to run."""
    log = tmp_path / 'flight.ulg'
    log.write_bytes(ULOG_MAGIC + b'\x00' * 16)
    with pytest.raises(BagFormatError, match=r'this is a PX4 ULog, not a bag: run '
                                             r'`ghost_import .*flight\.ulg --output BAG`'):
        resolve_bag(log)


def test_a_dataflash_log_given_as_a_bag_says_to_import_it(tmp_path: Path) -> None:
    """An ArduPilot DataFlash log is named as one too, with the same command."""
    log = tmp_path / 'flight.bin'
    log.write_bytes(DATAFLASH_MAGIC + b'\x80\x59' + b'\x00' * 84)
    with pytest.raises(BagFormatError, match=r'this is an ArduPilot DataFlash log, not a bag: '
                                             r'run `ghost_import .*flight\.bin --output BAG`'):
        resolve_bag(log)
