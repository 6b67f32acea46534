"""Read the .mcap files of a rosbag2 bag in one streaming pass, diagnosing any damage.

One cohesive job (streaming MCAP reading and damage diagnosis), so one module past 400 lines.

:class:`McapBagReader` reads every file once, in the bag's order, hashing the bytes as they
are read, and yields one item per message record on a channel of interest. Damage does not
stop the pass: a truncated file, a chunk that fails its CRC, a record that cannot be parsed,
a message on a channel never declared, a listed file that is missing are each recorded as a
:class:`ReadError` (a closed catalogue, :class:`ReadErrorKind`) and reading goes on with what
can still be read.

What a message becomes is the subclass's business (it overrides ``_channel`` and
``_decode``): :class:`RawBagReader` keeps every channel and yields each message raw
(:class:`RawMessage`: channel, log time, bytes); ghost_verify's GhostBag decodes the ghost
channels instead. Nothing here knows a Ghost message type.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
import hashlib
import io
import os
from pathlib import Path
import struct
from typing import BinaryIO, Generic, NamedTuple, TypeVar

from mcap.data_stream import ReadDataStream
from mcap.exceptions import EndOfFile, InvalidMagic, RecordLengthLimitExceeded
from mcap.opcode import Opcode
from mcap.records import (
    Attachment,
    AttachmentIndex,
    Channel,
    Chunk,
    ChunkIndex,
    DataEnd,
    Footer,
    Header,
    McapRecord,
    Message,
    MessageIndex,
    Metadata,
    MetadataIndex,
    Schema,
    Statistics,
    SummaryOffset,
)
from mcap.stream_reader import CRCValidationError, get_chunk_data_stream, read_magic

from .errors import BagFormatError
from .layout import BagLayout, name_in_bag, one_line, resolve_bag

__all__ = [
    'MAGIC',
    'BagFileDigest',
    'Channel',
    'Chunk',
    'FileScan',
    'FileState',
    'McapBagReader',
    'MessageRecord',
    'RawBagReader',
    'RawChannel',
    'RawMessage',
    'ReadError',
    'ReadErrorKind',
    'Schema',
    'digest_small_file',
    'read_chunk',
]

_READ_SIZE = 1 << 20
# A chunk declaring more than this uncompressed is treated as corrupt rather than inflated
# (rosbag2 and GhostBagWriter close chunks at about 1 MiB).
_MAX_CHUNK_BYTES = 1 << 30
MAGIC = b'\x89MCAP0\r\n'

#: What the reader keeps of a channel of interest (the subclass's choice; RawChannel by default).
H = TypeVar('H')
#: What the reader yields per message on a channel of interest (RawMessage by default).
M = TypeVar('M')


@dataclass(frozen=True, slots=True)
class BagFileDigest:
    """One file of a bag (by name inside the bag) and the SHA-256 of its bytes."""

    file: str
    sha256: str


class ReadErrorKind(StrEnum):
    """Why part of a bag could not be read (closed catalogue, see docs/properties.md)."""

    NOT_MCAP = 'not_mcap'
    TRUNCATED = 'truncated'
    CRC_MISMATCH = 'crc_mismatch'
    CORRUPT_RECORD = 'corrupt_record'
    UNDECLARED_CHANNEL = 'undeclared_channel'
    UNDECODABLE_MESSAGE = 'undecodable_message'
    FILE_MISSING = 'file_missing'
    FILE_UNREADABLE = 'file_unreadable'
    METADATA_MISSING = 'metadata_missing'
    COUNT_MISMATCH = 'count_mismatch'


@dataclass(frozen=True, slots=True)
class ReadError:
    """One part of a bag that could not be read: which file, why, where, how much was lost.

    `offset` is the byte offset in `file` of the record concerned (None when it does not
    apply); `count` is how many messages the entry stands for when it groups several (the
    messages on one undeclared channel, or the undecodable messages of one topic).
    """

    file: str
    kind: ReadErrorKind
    detail: str
    offset: int | None = None
    count: int = 1

    def describe(self) -> str:
        """Return the one-line human form, ``<file>: <kind>: <detail>``."""
        return f'{self.file}: {self.kind.value}: {self.detail}'


@dataclass(frozen=True, slots=True)
class RawChannel:
    """A channel as declared in the file: its topic, schema name and encodings."""

    topic: str
    schema_name: str
    message_encoding: str
    schema_encoding: str


@dataclass(frozen=True, slots=True)
class RawMessage:
    """One message record as recorded: its channel, MCAP log time and serialized bytes."""

    channel: RawChannel
    log_time_ns: int
    data: bytes


class _HashingRaw(io.RawIOBase):
    """A read-only raw stream that hashes every byte it hands out (each byte exactly once)."""

    def __init__(self, inner: BinaryIO) -> None:
        super().__init__()
        self._inner = inner
        self.digest = hashlib.sha256()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self._inner.read(len(buffer))
        self.digest.update(data)
        buffer[: len(data)] = data
        return len(data)


class _BoundedStream:
    """A read-only view of one file that never asks for more bytes than the file has left.

    mcap's parser reads a length field, then asks for that many bytes; in a damaged file the
    length can be absurd (2**60) and ``BufferedReader.read(n)`` allocates n bytes before it
    reads. Capping each request at the bytes left turns such a record into a clean
    end-of-file. The view also knows its position (for error offsets), the file's first
    bytes (to tell "not MCAP" from "truncated") and the first byte of the record being read
    (its opcode, to name what a truncation cut).
    """

    def __init__(self, inner: BinaryIO, size: int) -> None:
        self._inner = inner
        self.size = size
        self.position = 0
        self.head = b''
        self.record_opcode: int | None = None
        self.record_start = 0
        self._mark_at: int | None = None
        self._header = b''

    def mark_record(self) -> None:
        """Remember the opcode and length of the record about to be read (not the magic)."""
        self._mark_at = max(self.position, len(MAGIC))
        self.record_start = self._mark_at
        self.record_opcode = None
        self._header = b''

    @property
    def record_length(self) -> int | None:
        """The length field of the record being read, once its 9-byte header was read."""
        if len(self._header) < 9:
            return None
        return int.from_bytes(self._header[1:9], 'little')

    def read(self, size: int = -1) -> bytes:
        """Return up to `size` bytes (all that is left if negative), never past the end."""
        left = self.size - self.position
        if size < 0 or size > left:
            size = left
        data = self._inner.read(size) if size else b''
        before = self.position
        self.position += len(data)
        if before < len(MAGIC):
            self.head += data[: len(MAGIC) - before]
        if self._mark_at is not None and before <= self._mark_at < self.position:
            self.record_opcode = data[self._mark_at - before]
            self._mark_at = None
        if self.record_opcode is not None and len(self._header) < 9:
            first = max(self.record_start - before, 0)
            self._header += data[first:first + 9 - len(self._header)]
        return data


@dataclass(slots=True)
class FileState(Generic[H]):
    """What one file's reading has declared and counted so far."""

    path: Path
    name: str
    schemas: dict[int, Schema] = field(default_factory=dict)
    channel_records: dict[int, Channel] = field(default_factory=dict)
    channels: dict[int, H | None] = field(default_factory=dict)
    messages: int = 0
    chunks: int = 0
    # channel id -> messages read on it (for the summary's statistics)
    per_channel: dict[int, int] = field(default_factory=dict)
    failed: bool = False
    footer_seen: bool = False
    ends_with_magic: bool = False
    statistics: Statistics | None = None
    # channel id -> [messages, offset of the first]
    undeclared: dict[int, list[int]] = field(default_factory=dict)
    # topic -> [messages, offset of the first], and the first error's text
    undecodable: dict[str, list[int]] = field(default_factory=dict)
    undecodable_first: dict[str, str] = field(default_factory=dict)
    # A structure scan's findings: (offset, length) of each chunk record, and the channels
    # declared before the first chunk.
    chunk_refs: list[tuple[int, int]] = field(default_factory=list)
    declared_early: set[int] = field(default_factory=set)


@dataclass(frozen=True, slots=True)
class FileScan:
    """One .mcap file as McapBagReader.scan_files() found it.

    `chunks` are the (byte offset, length) of its chunk records in file order;
    `declared_early` the channel ids declared outside the chunks before the first one;
    `schemas` and `channels` every declaration read outside the chunks (the summary's);
    `top_level_messages` the message records outside any chunk.
    """

    name: str
    path: Path
    chunks: tuple[tuple[int, int], ...]
    declared_early: frozenset[int]
    statistics: Statistics | None
    top_level_messages: int
    schemas: tuple[Schema, ...]
    channels: tuple[Channel, ...]


class McapBagReader(Generic[H, M]):
    """A bag opened for one streaming pass over its message records.

    Construction resolves the layout (and fails early on a missing path or a bad
    metadata.yaml); :meth:`read` then reads every file once. Subclasses choose the channels
    of interest (:meth:`_channel`) and what their messages become (:meth:`_decode`):
    :class:`RawBagReader` keeps every channel and yields :class:`RawMessage`.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.layout: BagLayout = resolve_bag(path)
        self._digests: list[BagFileDigest] = []
        self._read_errors: list[ReadError] = []
        self._messages_seen = 0
        #: The greatest log time of any message record read (any channel); None before one.
        self.last_log_time_ns: int | None = None
        self._started = False
        self._unpack_chunks = True
        self._scans: list[FileScan] = []

    @property
    def files_read(self) -> tuple[BagFileDigest, ...]:
        """The files read so far, in reading order, with their SHA-256 (also after an error)."""
        return tuple(self._digests)

    @property
    def messages_seen(self) -> int:
        """How many message records (on any channel) have been read so far."""
        return self._messages_seen

    @property
    def read_errors(self) -> tuple[ReadError, ...]:
        """Every part of the bag that could not be read, so far, in the order met."""
        return tuple(self._read_errors)

    def _start(self, *, unpack_chunks: bool = True) -> None:
        """Begin the one pass: refuse a second, and digest metadata.yaml first."""
        if self._started:
            raise RuntimeError(f'a {type(self).__name__} is read once; open it again for '
                               'another pass')
        self._started = True
        self._unpack_chunks = unpack_chunks
        if self.layout.metadata is not None:
            self._digests.append(digest_small_file(self.layout.metadata))

    def read(self) -> Iterator[M]:
        """The one pass: every readable message of interest, in file order."""
        self._start()
        yield from self.messages_in_file_order()

    def scan_files(self) -> tuple[FileScan, ...]:
        """Read every file once without unpacking its chunks: where they are, and the rest.

        Each file's chunk records, declarations and summary statistics; the files' SHA-256
        are in :attr:`files_read` and the read errors outside the chunks in
        :attr:`read_errors`. A reader is read once: scan_files() instead of read().
        """
        self._start(unpack_chunks=False)
        for _ in self.messages_in_file_order():
            pass
        return tuple(self._scans)

    def _channel(self, state: FileState[H], channel: Channel) -> H | None:
        """What to keep of a newly declared channel; None when its messages are not wanted."""
        raise NotImplementedError

    def _decode(self, state: FileState[H], channel: H, log_time: int, data: bytes,
                offset: int) -> M | None:
        """One message on a channel of interest (None: undecodable, see _undecodable)."""
        raise NotImplementedError

    def _undecodable(self, state: FileState[H], topic: str, log_time: int, err: Exception,
                     offset: int) -> None:
        """Count a message that cannot be decoded (reported per topic at the end of its file)."""
        seen = state.undecodable.setdefault(topic, [0, offset])
        seen[0] += 1
        state.undecodable_first.setdefault(
            topic, f'the first at log time {log_time} ns: {one_line(err)}')

    def messages_in_file_order(self) -> Iterator[M]:
        """Yield every message of interest in file order (files in metadata order)."""
        layout = self.layout
        if layout.metadata_missing:
            names = ', '.join(name_in_bag(layout, path) for path in layout.files)
            self._read_errors.append(ReadError(
                'metadata.yaml', ReadErrorKind.METADATA_MISSING,
                'the bag directory has no metadata.yaml: the recorder did not close the bag '
                f'(it writes metadata.yaml on close); read {names} without it',
            ))
        for item in layout.missing:
            self._read_errors.append(ReadError(
                item, ReadErrorKind.FILE_MISSING,
                'metadata.yaml lists this file but it does not exist; its messages are not '
                'in the verdicts',
            ))
        for path in layout.files:
            yield from self._read_file(path)

    def _read_file(self, path: Path) -> Iterator[M]:
        name = name_in_bag(self.layout, path)
        state: FileState[H] = FileState(path, name)
        try:
            handle = path.open('rb')
        except OSError as err:
            self._read_errors.append(ReadError(
                name, ReadErrorKind.FILE_UNREADABLE, f'cannot be opened: {err.strerror}'))
            return
        with handle:
            try:
                size = os.fstat(handle.fileno()).st_size
                # Whether the file still ends with the closing magic tells a record with a
                # corrupt length (file complete) from a file cut short.
                handle.seek(max(size - len(MAGIC), 0))
                state.ends_with_magic = size > len(MAGIC) and handle.read(len(MAGIC)) == MAGIC
                handle.seek(0)
            except OSError as err:
                self._read_errors.append(ReadError(
                    name, ReadErrorKind.FILE_UNREADABLE, f'cannot be read: {err.strerror}'))
                return
            hashing = _HashingRaw(handle)
            stream = _BoundedStream(io.BufferedReader(hashing, buffer_size=_READ_SIZE), size)
            yield from self._messages_of_stream(state, stream)
            try:
                while stream.read(_READ_SIZE):
                    pass
            except OSError as err:
                self._read_errors.append(ReadError(
                    name, ReadErrorKind.FILE_UNREADABLE, f'read failed: {err.strerror}',
                    stream.position))
        self._finish_file(state)
        self._digests.append(BagFileDigest(name, hashing.digest.hexdigest()))

    def _messages_of_stream(
        self, state: FileState[H], stream: _BoundedStream
    ) -> Iterator[M]:
        # Chunks are taken whole (emit_chunks) and unpacked here, so that one damaged chunk is
        # skipped and reported while the records after it are still read.
        records = _records(stream, record_size_limit=max(stream.size, 1))
        while True:
            start = stream.position
            stream.mark_record()
            try:
                record = next(records)
            except StopIteration:
                return
            except Exception as err:  # noqa: BLE001 - a foreign parser on untrusted bytes
                state.failed = True
                self._read_errors.append(_stream_error(
                    state.name, err, start, stream, after_footer=state.footer_seen,
                    ends_with_magic=state.ends_with_magic))
                return
            length = stream.record_length
            if length is not None and stream.position - stream.record_start > 9 + length:
                # mcap reads a record by its fields; a length field shorter than they are
                # would otherwise go unnoticed.
                state.failed = True
                self._read_errors.append(ReadError(
                    state.name, ReadErrorKind.CORRUPT_RECORD,
                    f'{_opcode_name(stream.record_opcode)} record at byte '
                    f'{stream.record_start} declares {length} bytes but its fields take '
                    f'{stream.position - stream.record_start - 9} (its length field is corrupt)',
                    stream.record_start,
                ))
            if not isinstance(record, Chunk):
                yield from self._record(state, record, start)
                continue
            state.chunks += 1
            if not self._unpack_chunks:
                # A structure scan (see scan()): where the chunk is, not what it holds.
                state.chunk_refs.append((start, stream.position - start))
                continue
            yield from self._chunk_messages(state, record, start)

    def _chunk_messages(
        self,
        state: FileState[H],
        record: Chunk,
        start: int,
        watch: Callable[[object], None] | None = None,
    ) -> Iterator[M]:
        """The messages of interest of one chunk (the chunk record starting at byte `start`).

        `watch` (ChunkReader's) sees every record of the chunk before it is read.
        """
        try:
            inner = _chunk_records(record)
        except CRCValidationError as err:
            state.failed = True
            self._read_errors.append(ReadError(
                state.name, ReadErrorKind.CRC_MISMATCH,
                f'the chunk at byte {start} fails its CRC check (recorded '
                f'{err.expected:#010x}, computed {err.actual:#010x}): its content was '
                'altered; its messages were not read', start,
            ))
            return
        except Exception as err:  # noqa: BLE001 - chunk bytes come from the bag
            state.failed = True
            reason = str(err) if isinstance(err, _ChunkError) else one_line(err)
            self._read_errors.append(ReadError(
                state.name, ReadErrorKind.CORRUPT_RECORD,
                f'the chunk at byte {start} cannot be unpacked ({reason}); its messages '
                'were not read', start,
            ))
            return
        times = [item.log_time for item in inner
                 if isinstance(item, (MessageRecord, Message))]
        if times and (min(times), max(times)) != (record.message_start_time,
                                                  record.message_end_time):
            # Not used to read, but part of the chunk record: a difference means the
            # record was altered (its CRC covers only the content).
            state.failed = True
            self._read_errors.append(ReadError(
                state.name, ReadErrorKind.CORRUPT_RECORD,
                f'the chunk at byte {start} declares message times '
                f'{record.message_start_time}..{record.message_end_time} ns but holds '
                f'{min(times)}..{max(times)} ns (its header was altered)', start,
            ))
        for item in inner:
            if watch is not None:
                watch(item)
            if type(item) is MessageRecord:
                message = self._message(state, item.channel_id, item.log_time, item.data,
                                        start)
                if message is not None:
                    yield message
            else:
                yield from self._record(state, item, start)

    def _message(
        self, state: FileState[H], channel_id: int, log_time: int, data: bytes, offset: int
    ) -> M | None:
        """Count one message record; return it decoded when it is on a channel of interest."""
        self._messages_seen += 1
        if self.last_log_time_ns is None or log_time > self.last_log_time_ns:
            self.last_log_time_ns = log_time
        state.messages += 1
        per_channel = state.per_channel
        per_channel[channel_id] = per_channel.get(channel_id, 0) + 1
        channels = state.channels
        if channel_id not in channels:
            seen = state.undeclared.setdefault(channel_id, [0, offset])
            seen[0] += 1
            return None
        wanted = channels[channel_id]
        if wanted is None:
            return None
        return self._decode(state, wanted, log_time, data, offset)

    def _record(self, state: FileState[H], record: object, offset: int) -> Iterator[M]:
        if isinstance(record, Message):
            message = self._message(state, record.channel_id, record.log_time,
                                    bytes(record.data), offset)
            if message is not None:
                yield message
        elif isinstance(record, Schema):
            known_schema = state.schemas.setdefault(record.id, record)
            if known_schema != record:
                self._redeclared(state, 'schema', record.id, offset)
        elif isinstance(record, Channel):
            known_channel = state.channel_records.setdefault(record.id, record)
            if known_channel != record:
                self._redeclared(state, 'channel', record.id, offset)
            elif record.id not in state.channels:
                state.channels[record.id] = self._channel(state, record)
            if not state.chunks:
                state.declared_early.add(record.id)
        elif isinstance(record, Statistics):
            state.statistics = record
        elif isinstance(record, Footer):
            state.footer_seen = True

    def _redeclared(self, state: FileState[H], what: str, record_id: int, offset: int) -> None:
        # The summary section repeats every schema and channel; a repetition that differs
        # means one of the two copies was altered. The first one (before the messages) is kept.
        state.failed = True
        self._read_errors.append(ReadError(
            state.name, ReadErrorKind.CORRUPT_RECORD,
            f'{what} id {record_id} is declared again at byte {offset} with different '
            'content (one copy was altered); the first declaration was used', offset,
        ))

    def _finish_file(self, state: FileState[H]) -> None:
        for channel_id, (count, offset) in state.undeclared.items():
            self._read_errors.append(ReadError(
                state.name, ReadErrorKind.UNDECLARED_CHANNEL,
                f'{count} message{"s" if count > 1 else ""} (the first in the record at byte '
                f'{offset}) refer to channel id {channel_id}, which is never declared (its '
                'declaration was lost or damaged); they were not read', offset, count,
            ))
        for topic, (count, offset) in state.undecodable.items():
            self._read_errors.append(ReadError(
                state.name, ReadErrorKind.UNDECODABLE_MESSAGE,
                f'{count} message{"s" if count > 1 else ""} on {topic} cannot be decoded '
                f'({state.undecodable_first[topic]}); they were skipped', offset, count,
            ))
        statistics = state.statistics
        if not self._unpack_chunks:
            self._scans.append(FileScan(
                name=state.name, path=state.path, chunks=tuple(state.chunk_refs),
                declared_early=frozenset(state.declared_early), statistics=statistics,
                top_level_messages=state.messages,
                schemas=tuple(state.schemas.values()),
                channels=tuple(state.channel_records.values())))
            return
        if statistics is None or state.failed or state.undeclared or state.undecodable:
            return
        # The summary's statistics count what the writer wrote: a chunk cut out or repeated
        # whole (valid framing, valid CRCs) still changes these counts.
        recorded = {key: value for key, value in statistics.channel_message_counts.items()
                    if value}
        if statistics.message_count != state.messages:
            detail = f'{statistics.message_count} messages but {state.messages} were read'
        elif recorded and recorded != state.per_channel:
            detail = 'per channel other message counts than were read'
        elif statistics.chunk_count != state.chunks:
            detail = f'{statistics.chunk_count} chunks but {state.chunks} were read'
        else:
            return
        self._read_errors.append(ReadError(
            state.name, ReadErrorKind.COUNT_MISMATCH, f"the file's summary counts {detail}"))


class RawBagReader(McapBagReader[RawChannel, RawMessage]):
    """Every message record of a bag, undecoded, with the reader's damage diagnosis."""

    def _channel(self, state: FileState[RawChannel], channel: Channel) -> RawChannel | None:
        schema = state.schemas.get(channel.schema_id)
        return RawChannel(channel.topic, '' if schema is None else schema.name,
                          channel.message_encoding, '' if schema is None else schema.encoding)

    def _decode(self, state: FileState[RawChannel], channel: RawChannel, log_time: int,
                data: bytes, offset: int) -> RawMessage | None:
        return RawMessage(channel, log_time, data)


def _records(source: _BoundedStream, record_size_limit: int) -> Iterator[McapRecord]:
    """The top-level records of an MCAP stream, chunks whole, CRCs validated, with mcap's API.

    What ``mcap.stream_reader.StreamReader(source, emit_chunks=True, validate_crcs=True,
    record_size_limit=...).records`` yields, with the same reads and the same errors, built
    from mcap's public pieces (``ReadDataStream``, the record classes' ``read``) rather than
    by overriding the stream reader's private ``_read_record``: the one record read
    differently is a message index (see _read_message_index).
    """
    stream = ReadDataStream(source, calculate_crc=True)  # type: ignore[arg-type]
    read_magic(stream)
    while True:
        checksum_before = stream.checksum()
        opcode = stream.read1()
        length = stream.read8()
        if length > record_size_limit:
            raise RecordLengthLimitExceeded(opcode, length, record_size_limit)
        start = stream.count
        record = _read_record(stream, opcode, length)
        if isinstance(record, DataEnd) and record.data_section_crc not in (0, checksum_before):
            raise CRCValidationError(expected=record.data_section_crc, actual=checksum_before,
                                     record=record)
        padding = length - (stream.count - start)
        if padding > 0:
            stream.read(padding)
        if record is not None:
            yield record
        if isinstance(record, Footer):
            read_magic(stream)
            return


#: How each other record mcap knows is read (its class's ``read``, mcap.records), by opcode.
_RECORD_READERS: dict[int, Callable[[ReadDataStream], McapRecord]] = {
    int(Opcode.ATTACHMENT): Attachment.read,
    int(Opcode.ATTACHMENT_INDEX): AttachmentIndex.read,
    int(Opcode.CHANNEL): Channel.read,
    int(Opcode.CHUNK): Chunk.read,
    int(Opcode.CHUNK_INDEX): ChunkIndex.read,
    int(Opcode.DATA_END): DataEnd.read,
    int(Opcode.FOOTER): Footer.read,
    int(Opcode.HEADER): Header.read,
    int(Opcode.METADATA): Metadata.read,
    int(Opcode.METADATA_INDEX): MetadataIndex.read,
    int(Opcode.SCHEMA): Schema.read,
    int(Opcode.STATISTICS): Statistics.read,
    int(Opcode.SUMMARY_OFFSET): SummaryOffset.read,
}


def _read_record(stream: ReadDataStream, opcode: int, length: int) -> McapRecord | None:
    """One record after its header, as mcap reads it (an unknown record is skipped: None).

    But a message index: the verifier does not use message indexes (one per channel after
    every chunk, 16 bytes per message); mcap parses each entry with two 8-byte reads, which
    made them a tenth of the whole pass. Their bytes are read (and CRC'd, and hashed) all the
    same.
    """
    if opcode == _MESSAGE_OPCODE:
        message: Message = Message.read(stream, length)
        return message
    if opcode == _MESSAGE_INDEX_OPCODE:
        return _read_message_index(stream, length)
    read = _RECORD_READERS.get(opcode)
    if read is None:
        stream.read(length)
        return None
    return read(stream)


def _read_message_index(stream: ReadDataStream, length: int) -> MessageIndex:
    """MessageIndex.read with the same reads, the entries taken whole (and not kept)."""
    channel_id = stream.read2()
    entries_length = stream.read4()
    # mcap reads 16 bytes per entry until it has read entries_length.
    todo = -(-entries_length // 16) * 16
    if todo > length:
        # A corrupt length: read as mcap does, entry by entry, to fail where it fails.
        entries: list[tuple[int, int]] = []
        end = stream.count + entries_length
        while stream.count < end:
            entries.append((stream.read8(), stream.read8()))
        return MessageIndex(channel_id, entries)
    if todo and len(stream.read(todo)) < todo:
        raise EndOfFile()
    return MessageIndex(channel_id, [])


class _ChunkError(ValueError):
    """A chunk whose framing contradicts itself (its message says how)."""


class MessageRecord(NamedTuple):
    """A message record of a chunk: what the reader needs of it."""

    channel_id: int
    log_time: int
    data: bytes


_RECORD_HEADER = struct.Struct('<BQ').unpack_from
_MESSAGE_HEADER = struct.Struct('<HIQQ').unpack_from
_MESSAGE_OPCODE = int(Opcode.MESSAGE)
_MESSAGE_INDEX_OPCODE = int(Opcode.MESSAGE_INDEX)
_DECLARATION_OPCODES = {int(Opcode.SCHEMA): Schema.read, int(Opcode.CHANNEL): Channel.read}


def _chunk_records(chunk: Chunk) -> list[object]:
    """Return the records of one chunk, after checking its size and CRC (all or nothing).

    Like mcap's ``breakup_chunk``, but a record whose fields overrun its declared length, or
    a chunk whose content is not the size it declares, is an error rather than read on.
    """
    if chunk.uncompressed_size > _MAX_CHUNK_BYTES:
        raise _ChunkError(
            f'it declares {chunk.uncompressed_size} bytes uncompressed, over the '
            f'{_MAX_CHUNK_BYTES} byte limit')
    stream, length = get_chunk_data_stream(chunk, validate_crc=True)
    if length != chunk.uncompressed_size:
        raise _ChunkError(
            f'it declares {chunk.uncompressed_size} bytes uncompressed but holds {length}')
    data = stream.read(length)
    fast = _split_chunk(data)
    if fast is not None:
        return fast
    # Something in the chunk is not as a writer makes it: read it record by record, as mcap
    # does, to say exactly what.
    stream = ReadDataStream(io.BytesIO(data))
    records: list[object] = []
    while stream.count < length:
        opcode = stream.read1()
        size = stream.read8()
        start = stream.count
        if opcode == Opcode.MESSAGE:
            records.append(Message.read(stream, size))
        elif opcode == Opcode.CHANNEL:
            records.append(Channel.read(stream))
        elif opcode == Opcode.SCHEMA:
            records.append(Schema.read(stream))
        used = stream.count - start
        if used > size:
            raise _ChunkError(f'a record at byte {start - 9} of its content overruns its '
                              f'declared length {size}')
        if size > used:
            stream.read(size - used)
    return records


def _split_chunk(data: bytes) -> list[object] | None:
    """The records of a well-formed chunk content; None at the first thing out of the ordinary.

    Messages come as MessageRecord, schemas and channels as mcap's records, other records
    are skipped: what _chunk_records' record-by-record reading gives, without its cost per
    field. None (a record cut short or overrunning its length, a message shorter than its
    header) sends the caller to that reading, which reports the problem.
    """
    records: list[object] = []
    append = records.append
    position, end = 0, len(data)
    while position < end:
        if end - position < 9:
            return None
        opcode, size = _RECORD_HEADER(data, position)
        start = position + 9
        stop = start + size
        if stop > end:
            return None
        if opcode == _MESSAGE_OPCODE:
            if size < 22:
                return None
            channel_id, _sequence, log_time, _publish_time = _MESSAGE_HEADER(data, start)
            append(MessageRecord(channel_id, log_time, data[start + 22:stop]))
        elif opcode in _DECLARATION_OPCODES:
            stream = ReadDataStream(io.BytesIO(data[start:]))
            try:
                append(_DECLARATION_OPCODES[opcode](stream))
            except Exception:  # noqa: BLE001 - the record-by-record reading says what it is
                return None
            if stream.count > size:
                return None
        position = stop
    return records


def _stream_error(
    name: str,
    err: Exception,
    start: int,
    stream: _BoundedStream,
    *,
    after_footer: bool,
    ends_with_magic: bool,
) -> ReadError:
    """Describe why the record stream of a file stopped at the record starting at `start`."""
    size = stream.size
    if size == 0:
        return ReadError(name, ReadErrorKind.TRUNCATED,
                         'the file is empty (0 bytes): an empty or truncated file', 0)
    if not MAGIC.startswith(stream.head) or (isinstance(err, InvalidMagic) and start == 0):
        return ReadError(name, ReadErrorKind.NOT_MCAP,
                         'bad magic bytes at the start (not an MCAP file)', 0)
    start = max(start, len(MAGIC))  # the first read takes the magic and the first record
    past_end = isinstance(err, RecordLengthLimitExceeded) or (
        isinstance(err, (EndOfFile, struct.error)) and stream.position >= size)
    if past_end and ends_with_magic and not after_footer and start < size:
        # The file still ends with the closing magic, so it was not cut: the record's own
        # length field sends the parser past the end.
        return ReadError(name, ReadErrorKind.CORRUPT_RECORD,
                         f'{_opcode_name(stream.record_opcode)} record at byte {start} runs '
                         'past the end of a file that otherwise ends with the MCAP magic (its '
                         'length field is corrupt); reading of this file stopped there', start)
    if past_end:
        if size < len(MAGIC):
            where = 'inside the MCAP magic'
        elif after_footer:
            where = 'inside the closing MCAP magic, after the footer'
        elif start >= size:
            last = ('the MCAP magic' if start == len(MAGIC)
                    else f'the complete record that ends at byte {start}')
            where = (f'after {last}, before the MCAP footer (no summary: the writer did not '
                     'close the file)')
        else:
            what = _opcode_name(stream.record_opcode)
            where = (f'inside {what} record that starts at byte {start} (cut short, or its '
                     'length field is corrupt)')
        return ReadError(name, ReadErrorKind.TRUNCATED,
                         f'the file ends at byte {size} {where}; reading stopped there', start)
    if isinstance(err, CRCValidationError):
        return ReadError(name, ReadErrorKind.CRC_MISMATCH,
                         'the data section fails its CRC check (bytes between the chunks were '
                         f'altered; computed {err.actual:#010x}, recorded {err.expected:#010x})',
                         start)
    if isinstance(err, InvalidMagic):
        detail = f'bad closing magic bytes at byte {start}'
    else:
        detail = (f'{_opcode_name(stream.record_opcode)} record at byte {start} cannot be '
                  f'parsed ({one_line(err)})')
    return ReadError(name, ReadErrorKind.CORRUPT_RECORD,
                     f'{detail}; reading of this file stopped there', start)


def _opcode_name(opcode: int | None) -> str:
    try:
        return f'a {Opcode(opcode).name.lower()}' if opcode is not None else 'a'
    except ValueError:
        return f'an unknown (opcode {opcode:#04x})'


def digest_small_file(path: Path) -> BagFileDigest:
    """The SHA-256 of a small file of the bag (metadata.yaml), read whole."""
    try:
        data = path.read_bytes()
    except OSError as err:
        raise BagFormatError(f'{path}: cannot read: {err.strerror}') from err
    return BagFileDigest(path.name, hashlib.sha256(data).hexdigest())


def read_chunk(path: Path, offset: int, length: int) -> Chunk:
    """The chunk record of `length` bytes at `offset` of an .mcap file (ValueError otherwise).

    ``Channel``, ``Chunk`` and ``Schema`` (mcap's records, re-exported here) are what a
    ``FileScan`` and this function give: ghost_bag is the one package importing mcap.
    """
    with path.open('rb') as handle:
        handle.seek(offset)
        raw = handle.read(length)
    if len(raw) != length or raw[0] != Opcode.CHUNK:
        raise ValueError('not a chunk record')
    chunk: Chunk = Chunk.read(ReadDataStream(io.BytesIO(raw[9:])))
    return chunk
