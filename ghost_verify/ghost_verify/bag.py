"""Read a rosbag2 MCAP bag in one streaming pass and turn it into typed cycle events."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
import hashlib
import io
import os
from pathlib import Path
import re
import struct
from typing import BinaryIO, NamedTuple

from mcap.data_stream import ReadDataStream
from mcap.exceptions import EndOfFile, InvalidMagic, RecordLengthLimitExceeded
from mcap.opcode import Opcode
from mcap.records import (
    Channel,
    Chunk,
    Footer,
    McapRecord,
    Message,
    MessageIndex,
    Schema,
    Statistics,
)
from mcap.stream_reader import CRCValidationError, get_chunk_data_stream, StreamReader
import yaml  # type: ignore[import-untyped, unused-ignore]

from .cdr import compile_decoder, compile_json_decoder, DictDecoder, JsonDecoder
from .errors import (
    BagFormatError,
    BagNotFoundError,
    LateMessageError,
    NoGhostTopicsError,
    SchemaMismatchError,
)
from .events import (
    Actuation,
    actuation_of,
    BagFileDigest,
    BagInfo,
    Calibrated,
    calibrated_of,
    CycleEvent,
    gate_record_of,
    GateRecord,
    ghost_kind_of_schema,
    GhostMessage,
    GhostTopicKind,
    Rationale,
    rationale_of,
    raw_assessment_of,
    RawAssessment,
    ReadError,
    ReadErrorKind,
    stamp_ns_of,
)
from .schema import quiet_parser, schema_problems

__all__ = [
    'DEFAULT_CYCLE_WINDOW',
    'BagLayout',
    'GhostBag',
    'decoded_to_msg_dict',
    'group_cycles',
    'group_events',
    'resolve_bag',
]

# How many cycles may be open (seen but not yet handed to the judges) at once. A cycle is
# closed when a message of a new cycle arrives while this many are open (the oldest stamp is
# closed first), or at the end of the bag. 256 cycles is 25.6 s of recorder lag at 10 Hz.
DEFAULT_CYCLE_WINDOW = 256

_READ_SIZE = 1 << 20
# A chunk declaring more than this uncompressed is treated as corrupt rather than inflated
# (rosbag2 and GhostBagWriter close chunks at about 1 MiB).
_MAX_CHUNK_BYTES = 1 << 30
MAGIC = b'\x89MCAP0\r\n'


@dataclass(frozen=True, slots=True)
class BagLayout:
    """Where a bag's files are: metadata.yaml (if any) and the .mcap files in reading order.

    `missing` names the files metadata.yaml lists that do not exist; `metadata_missing` is
    True for a bag directory without metadata.yaml (what a recorder that never closed the bag
    leaves); `message_count` is the total metadata.yaml records, when it records one.
    """

    root: Path
    metadata: Path | None
    files: tuple[Path, ...]
    missing: tuple[str, ...] = ()
    metadata_missing: bool = False
    message_count: int | None = None


def resolve_bag(path: str | os.PathLike[str]) -> BagLayout:
    """Resolve a bag path: a rosbag2 directory, its metadata.yaml, or one .mcap file.

    A directory's .mcap files are read in the order metadata.yaml lists them under
    ``rosbag2_bagfile_information.relative_file_paths``; listed files that do not exist are
    reported in `missing` (BagNotFoundError when none exists). A directory without
    metadata.yaml is read from its .mcap file (several only when named ``<name>_<N>.mcap``,
    read in N order), with `metadata_missing` set.
    """
    bag = Path(path)
    if not bag.exists():
        raise BagNotFoundError(f'{bag}: no such file or directory')
    if bag.is_file() and bag.name == 'metadata.yaml':
        bag = bag.parent
    if bag.is_file():
        return BagLayout(root=bag.parent, metadata=None, files=(bag,))
    if not bag.is_dir():
        raise BagFormatError(f'{bag}: neither a regular file nor a directory')
    metadata = bag / 'metadata.yaml'
    if not metadata.is_file():
        return BagLayout(root=bag, metadata=None, files=_files_without_metadata(bag),
                         metadata_missing=True)
    files, missing, count = _files_from_metadata(bag, metadata)
    return BagLayout(root=bag, metadata=metadata, files=files, missing=missing,
                     message_count=count)


def _files_without_metadata(bag: Path) -> tuple[Path, ...]:
    try:
        mcaps = sorted(item for item in bag.iterdir() if item.suffix == '.mcap'
                       and item.is_file())
    except OSError as err:
        raise BagFormatError(f'{bag}: cannot list the directory: {err.strerror}') from err
    if not mcaps:
        raise BagFormatError(
            f'{bag}: a directory without metadata.yaml and without .mcap files is not a '
            'rosbag2 bag'
        )
    if len(mcaps) == 1:
        return (mcaps[0],)
    # rosbag2 names the files of a split bag <name>_<N>.mcap: without metadata.yaml, that
    # index is the only trustworthy reading order.
    indexed = [(re.fullmatch(r'(.*)_(\d+)\.mcap', item.name), item) for item in mcaps]
    prefixes = {match.group(1) for match, _ in indexed if match is not None}
    if any(match is None for match, _ in indexed) or len(prefixes) != 1:
        raise BagFormatError(
            f'{bag}: a directory without metadata.yaml holding {len(mcaps)} .mcap files not '
            'all named <name>_<N>.mcap: their reading order is unknown (give one .mcap file)'
        )
    return tuple(item for _, item in sorted(
        indexed, key=lambda pair: int(pair[0].group(2)) if pair[0] is not None else 0))


#: rosbag2 compression modes (metadata.yaml `compression_mode`, any case) read as
#: uncompressed. MCAP's own chunk compression (lz4, zstd, inside the .mcap file) is another
#: thing, and is read.
_UNCOMPRESSED_MODES = frozenset({'', 'none'})


def _refuse_unhandled_storage_options(metadata: Path, info: dict[object, object]) -> None:
    """Raise BagFormatError naming any rosbag2 storage option the reader does not handle.

    Handled: the ``mcap`` storage plugin without rosbag2 compression. Refused, by name:
    another storage plugin (``sqlite3``, ...); rosbag2 per-file compression (the .mcap files
    are themselves compressed, e.g. ``.mcap.zstd``); rosbag2 per-message compression (each
    message's CDR bytes compressed inside the MCAP file, which otherwise decode as garbage);
    an unknown compression mode; a compression format without a mode.
    """
    storage = info.get('storage_identifier', 'mcap')
    if storage != 'mcap':
        raise BagFormatError(
            f'{metadata}: storage {storage!r} is not supported; the verifier reads rosbag2 '
            'mcap storage only (record with -s mcap)'
        )
    mode_value = info.get('compression_mode') or ''
    format_value = info.get('compression_format') or ''
    mode = mode_value.strip().lower() if isinstance(mode_value, str) else mode_value
    fmt = format_value.strip() if isinstance(format_value, str) else format_value
    named = f' (compression_format {fmt!r})' if fmt else ''
    if mode == 'message':
        raise BagFormatError(
            f'{metadata}: compression_mode {mode_value!r}{named}: rosbag2 per-message '
            'compression is not supported (every message payload is compressed, so it cannot '
            'be decoded); record without --compression-mode, or decompress the bag first '
            '(ros2 bag convert)'
        )
    if mode == 'file':
        raise BagFormatError(
            f'{metadata}: compression_mode {mode_value!r}{named}: rosbag2 per-file '
            'compression (file-compressed bags) is not supported; decompress the files first '
            '(ros2 bag convert)'
        )
    if mode not in _UNCOMPRESSED_MODES:
        raise BagFormatError(
            f'{metadata}: compression_mode {mode_value!r}{named} is not a rosbag2 '
            "compression mode the verifier handles (only none or '' is read)"
        )
    if fmt:
        raise BagFormatError(
            f'{metadata}: compression_format {fmt!r} without a compression_mode is not '
            'supported: the verifier cannot tell how the bag is compressed'
        )


def _files_from_metadata(
    bag: Path, metadata: Path
) -> tuple[tuple[Path, ...], tuple[str, ...], int | None]:
    try:
        text = metadata.read_text(encoding='utf-8')
        document = yaml.safe_load(text)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise BagFormatError(f'{metadata}: cannot be read as YAML: {_one_line(err)}') from err
    info = document.get('rosbag2_bagfile_information') if isinstance(document, dict) else None
    if not isinstance(info, dict):
        raise BagFormatError(f'{metadata}: no rosbag2_bagfile_information mapping')
    _refuse_unhandled_storage_options(metadata, info)
    relative = info.get('relative_file_paths')
    if (
        not isinstance(relative, list)
        or not relative
        or not all(isinstance(item, str) and item for item in relative)
    ):
        raise BagFormatError(f'{metadata}: relative_file_paths is not a list of file names')
    files = []
    missing = []
    for item in relative:
        candidate = bag / item
        if not candidate.is_file() and (bag.parent / item).is_file():
            # Bags written by early rosbag2 releases list paths relative to the bag's parent.
            candidate = bag.parent / item
        if candidate.is_file():
            files.append(candidate)
        else:
            missing.append(item)
    if not files:
        listed = ', '.join(repr(item) for item in missing)
        which = 'which does not exist' if len(missing) == 1 else 'none of which exists'
        raise BagNotFoundError(f'{metadata}: lists {listed}, {which}')
    count = info.get('message_count')
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        count = None
    return tuple(files), tuple(missing), count


def decoded_to_msg_dict(decoded: object) -> dict[str, object]:
    """Convert a message decoded by mcap_ros2 into the message dict of SPEC section 4.

    Every field by its .msg name, nested messages as dicts, arrays as lists, byte and uint8
    arrays as lists of ints; scalars keep the type the CDR decoder gave them.
    """
    names = getattr(type(decoded), '__slots__', None)
    if not isinstance(names, (list, tuple)):
        raise BagFormatError(f'decoded value of type {type(decoded).__name__} is not a message')
    return {name: _plain(getattr(decoded, name)) for name in names}


def _plain(value: object) -> object:
    if isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return list(bytes(value))
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return decoded_to_msg_dict(value)


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


@dataclass(slots=True)
class _CycleBuilder:
    stamp_ns: int
    raw: list[RawAssessment] = field(default_factory=list)
    predictions: list[GhostMessage] = field(default_factory=list)
    outcomes: list[GhostMessage] = field(default_factory=list)
    calibrated: list[Calibrated] = field(default_factory=list)
    rationales: list[Rationale] = field(default_factory=list)
    actuations: list[Actuation] = field(default_factory=list)

    def add(self, message: GhostMessage) -> None:
        kind = message.kind
        if kind is GhostTopicKind.RAW_ASSESSMENT:
            self.raw.append(raw_assessment_of(message))
        elif kind is GhostTopicKind.PREDICTION:
            self.predictions.append(message)
        elif kind is GhostTopicKind.OUTCOME:
            self.outcomes.append(message)
        elif kind is GhostTopicKind.CALIBRATED:
            self.calibrated.append(calibrated_of(message))
        elif kind is GhostTopicKind.RATIONALE:
            self.rationales.append(rationale_of(message))
        elif kind is GhostTopicKind.ACTUATION:
            self.actuations.append(actuation_of(message))
        else:
            raise ValueError(f'a {kind.value} message is not part of a cycle')

    def build(self) -> CycleEvent:
        return CycleEvent(
            stamp_ns=self.stamp_ns,
            raw_assessments=tuple(self.raw),
            predictions=tuple(self.predictions),
            outcomes=tuple(self.outcomes),
            calibrated=tuple(self.calibrated),
            rationales=tuple(self.rationales),
            actuations=tuple(self.actuations),
        )


def group_cycles(
    messages: Iterable[GhostMessage], cycle_window: int = DEFAULT_CYCLE_WINDOW
) -> Iterator[CycleEvent]:
    """Group ghost messages by cycle stamp, yielding each cycle once, in increasing stamp order.

    At most ``cycle_window`` cycles are held open. When a message of a new cycle arrives and
    the window is full, the open cycle with the smallest stamp is closed and yielded; the rest
    are yielded at the end. A message whose stamp is not newer than a closed cycle cannot be
    placed any more and raises LateMessageError. Gate records are not part of a cycle: they
    are dropped here (see :func:`group_events`).
    """
    for event in group_events(messages, cycle_window):
        if isinstance(event, CycleEvent):
            yield event


def group_events(
    messages: Iterable[GhostMessage], cycle_window: int = DEFAULT_CYCLE_WINDOW
) -> Iterator[CycleEvent | GateRecord]:
    """Like :func:`group_cycles`, and every gate record as it is read, between the cycles.

    A gate record (GateEmission) is stamped when the gate sent it, not with a cycle stamp, so
    it is not grouped: it is yielded at once, in bag order, and never held in the window. The
    cycle it cites may therefore come after it (that cycle is still open).
    """
    if cycle_window < 1:
        raise ValueError(f'cycle_window must be at least 1, got {cycle_window}')
    open_cycles: dict[int, _CycleBuilder] = {}
    closed_up_to: int | None = None
    for message in messages:
        if message.kind is GhostTopicKind.GATE:
            yield gate_record_of(message)
            continue
        builder = open_cycles.get(message.stamp_ns)
        if builder is None:
            if len(open_cycles) >= cycle_window:
                oldest = min(open_cycles)
                yield open_cycles.pop(oldest).build()
                closed_up_to = oldest
            if closed_up_to is not None and message.stamp_ns <= closed_up_to:
                raise LateMessageError(
                    f'{message.topic}: message for cycle stamp {message.stamp_ns} ns arrived '
                    f'after cycles up to {closed_up_to} ns were closed (more than '
                    f'{cycle_window} cycles open); rerun with a larger --cycle-window'
                )
            builder = open_cycles[message.stamp_ns] = _CycleBuilder(message.stamp_ns)
        builder.add(message)
    for stamp_ns in sorted(open_cycles):
        yield open_cycles[stamp_ns].build()


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
class _FileState:
    """What one file's reading has declared and counted so far."""

    path: Path
    name: str
    schemas: dict[int, Schema] = field(default_factory=dict)
    channel_records: dict[int, Channel] = field(default_factory=dict)
    channels: dict[int, _GhostChannel | None] = field(default_factory=dict)
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
    """One .mcap file as GhostBag.scan() found it.

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


@dataclass(frozen=True, slots=True)
class BagScan:
    """What GhostBag.scan() found: the files, their digests, topics and read errors."""

    files: tuple[FileScan, ...]
    digests: tuple[BagFileDigest, ...]
    read_errors: tuple[ReadError, ...]
    topics: frozenset[tuple[str, str]]
    other_topics: frozenset[tuple[str, str]]
    messages_seen: int


class ChunkReader:
    """Reads chosen chunks of a bag, one by one, as GhostBag reads them (jobs.py).

    Each file's channels are first declared as `declarations` gives them (a FileScan's
    schemas and channels, in reading order), so that a chunk is read as it is in a whole
    pass once its channels are declared. What reading the chunks found wrong is in
    :attr:`problems` (empty when they were read as a whole pass reads them).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        declarations: Iterable[tuple[Iterable[Schema], Iterable[Channel]]],
        *,
        cycle_window: int = DEFAULT_CYCLE_WINDOW,
    ) -> None:
        self._bag = GhostBag(path, cycle_window=cycle_window)
        self._states = [_FileState(item, _name_in_bag(self._bag.layout, item))
                        for item in self._bag.layout.files]
        self._declared: list[set[int]] = [set() for _ in self._states]
        self.problems: list[str] = []
        for state, (schemas, channels) in zip(self._states, declarations, strict=True):
            for record in (*schemas, *channels):
                for _ in self._bag._record(state, record, 0):
                    pass

    @property
    def topics(self) -> frozenset[tuple[str, str]]:
        """The ghost (topic, type) pairs the declarations made so far name."""
        return frozenset(self._bag._topics)

    @property
    def other_topics(self) -> frozenset[tuple[str, str]]:
        """The other (topic, schema name) pairs declared so far."""
        return frozenset(self._bag._other_topics)

    def read(self, file_index: int, offset: int, length: int) -> ChunkContent:
        """Read the chunk record at `offset` of file `file_index` (`length` bytes)."""
        state = self._states[file_index]
        before_errors = len(self._bag._read_errors)
        before_messages = state.messages
        before_channels = dict(state.per_channel)
        declared = self._declared[file_index]
        newly: list[int] = []
        undeclared_uses: set[int] = set()
        try:
            with state.path.open('rb') as handle:
                handle.seek(offset)
                raw = handle.read(length)
            if len(raw) != length or raw[0] != Opcode.CHUNK:
                raise ValueError('not a chunk record')
            chunk = Chunk.read(ReadDataStream(io.BytesIO(raw[9:])))
        except Exception as err:  # noqa: BLE001 - bytes come from the bag
            self.problems.append(f'{state.name}: the chunk at byte {offset}: {_one_line(err)}')
            return ChunkContent([], 0, {}, (), frozenset())
        def watch(item: object) -> None:
            # The declarations made up front are the summary's (after every chunk): which
            # channel a chunk declares, and which it uses undeclared so far, is told apart.
            if type(item) is _MessageRecord:
                if item.channel_id not in declared:
                    undeclared_uses.add(item.channel_id)
            elif isinstance(item, Channel) and item.id not in declared:
                declared.add(item.id)
                newly.append(item.id)

        messages = list(self._bag._chunk_messages(state, chunk, offset, watch))
        if (len(self._bag._read_errors) != before_errors or state.undeclared
                or state.undecodable):
            self.problems.append(f'{state.name}: the chunk at byte {offset} could not be read '
                                 'as a whole pass reads it')
        counts = {channel: count - before_channels.get(channel, 0)
                  for channel, count in state.per_channel.items()
                  if count != before_channels.get(channel, 0)}
        return ChunkContent(messages, state.messages - before_messages, counts, tuple(newly),
                            frozenset(undeclared_uses))


class ChunkContent(NamedTuple):
    """What ChunkReader.read found in one chunk.

    `messages` are its ghost messages in file order; `records` its message records (any
    channel) and `per_channel` their count per channel id; `declared` the channel ids it
    declares first; `undeclared_uses` those its messages use that no chunk read before
    (nor itself, before them) declared.
    """

    messages: list[GhostMessage]
    records: int
    per_channel: dict[int, int]
    declared: tuple[int, ...]
    undeclared_uses: frozenset[int]


class GhostBag:
    """A bag opened for one streaming pass over its ghost messages.

    Construction resolves the layout (and fails early on a missing path or a bad
    metadata.yaml); :meth:`cycles` then reads every file once, in order, hashing the bytes as
    they are read. :attr:`info` is available once :meth:`cycles` has been exhausted.

    Damage does not stop the pass: a truncated file, a chunk that fails its CRC, a record
    that cannot be parsed, a message that cannot be decoded, a listed file that is missing
    are each recorded in :attr:`read_errors` (and in ``info.read_errors``), and reading goes
    on with what can still be read. Only when no ghost message at all could be read does the
    pass raise (BagFormatError naming the first problem). A ghost channel whose schema does
    not define the fields the verifier reads raises SchemaMismatchError at once.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, cycle_window: int = DEFAULT_CYCLE_WINDOW
    ) -> None:
        if cycle_window < 1:
            raise ValueError(f'cycle_window must be at least 1, got {cycle_window}')
        self.layout = resolve_bag(path)
        self.cycle_window = cycle_window
        self._digests: list[BagFileDigest] = []
        self._topics: set[tuple[str, str]] = set()
        self._other_topics: set[tuple[str, str]] = set()
        self._read_errors: list[ReadError] = []
        self._messages_seen = 0
        self._ghost_messages = 0
        self._cycles = 0
        self._info: BagInfo | None = None
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

    @property
    def info(self) -> BagInfo:
        """File digests, ghost topics and read errors; only after :meth:`cycles` finished."""
        if self._info is None:
            raise RuntimeError('GhostBag.info is known only after cycles() has been exhausted')
        return self._info

    def cycles(self) -> Iterator[CycleEvent]:
        """Yield one CycleEvent per cycle stamp (see :func:`group_cycles` for the rule).

        At the end, raises BagFormatError if read errors left no ghost message readable, or
        NoGhostTopicsError if no channel carried a ghost_interfaces schema. Gate records are
        read but not yielded (see :meth:`events`).
        """
        for event in self.events():
            if isinstance(event, CycleEvent):
                yield event

    def events(self) -> Iterator[CycleEvent | GateRecord]:
        """Yield the cycles as :meth:`cycles` does, and every gate record as it is read.

        See :func:`group_events` for the order; the end of the pass is that of :meth:`cycles`.
        """
        if self._started:
            raise RuntimeError('a GhostBag is read once; open it again for another pass')
        self._started = True
        if self.layout.metadata is not None:
            self._digests.append(_digest_small_file(self.layout.metadata))
        for event in group_events(self.messages_in_file_order(), self.cycle_window):
            if isinstance(event, CycleEvent):
                self._cycles += 1
            yield event
        if (not self._read_errors and self.layout.message_count is not None
                and self.layout.message_count != self._messages_seen):
            self._read_errors.append(ReadError(
                'metadata.yaml', ReadErrorKind.COUNT_MISMATCH,
                f'metadata.yaml records {self.layout.message_count} messages but the bag '
                f'files hold {self._messages_seen}',
            ))
        if self._ghost_messages == 0 and self._read_errors:
            raise BagFormatError(self._nothing_readable())
        if not self._topics:
            found = sorted(self._other_topics)
            shown = ', '.join(f'{topic} [{type_name}]' for topic, type_name in found[:4])
            more = f' and {len(found) - 4} more' if len(found) > 4 else ''
            raise NoGhostTopicsError(
                f'{_display(self.layout)}: no ghost topics (no channel has a '
                f'ghost_interfaces/msg/* schema; found {shown or "no channel"}{more}); '
                'nothing to verify'
            )
        self._info = BagInfo(
            files=tuple(self._digests),
            ghost_topics=tuple(sorted(self._topics)),
            messages_total=self._messages_seen,
            ghost_messages=self._ghost_messages,
            cycles=self._cycles,
            read_errors=tuple(self._read_errors),
        )

    def _nothing_readable(self) -> str:
        # The most telling problem is one in an .mcap file (a missing metadata.yaml only says
        # that the recorder did not close the bag).
        errors = self._read_errors
        first = next((error for error in errors
                      if error.kind is not ReadErrorKind.METADATA_MISSING), errors[0])
        more = len(errors) - 1
        tail = f' (and {more} more problem{"s" if more > 1 else ""})' if more else ''
        return f'{_display(self.layout)}: no ghost message could be read: {first.describe()}{tail}'

    def scan(self) -> BagScan:
        """Read every file once without unpacking its chunks: where they are, and the rest.

        What a split reading (jobs.py) needs to know of the bag besides the chunks' content:
        each file's chunk records, declarations and summary statistics, the files' SHA-256,
        the ghost topics the declarations name and every read error outside the chunks. A
        GhostBag is read once: scan() instead of cycles().
        """
        if self._started:
            raise RuntimeError('a GhostBag is read once; open it again for another pass')
        self._started = True
        self._unpack_chunks = False
        if self.layout.metadata is not None:
            self._digests.append(_digest_small_file(self.layout.metadata))
        for _ in self.messages_in_file_order():
            pass
        return BagScan(files=tuple(self._scans), digests=tuple(self._digests),
                       read_errors=tuple(self._read_errors), topics=frozenset(self._topics),
                       other_topics=frozenset(self._other_topics),
                       messages_seen=self._messages_seen)

    def messages_in_file_order(self) -> Iterator[GhostMessage]:
        """Yield every readable ghost message in file order (files in metadata order)."""
        layout = self.layout
        if layout.metadata_missing:
            names = ', '.join(_name_in_bag(layout, path) for path in layout.files)
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

    def _read_file(self, path: Path) -> Iterator[GhostMessage]:
        name = _name_in_bag(self.layout, path)
        state = _FileState(path, name)
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
        self, state: _FileState, stream: _BoundedStream
    ) -> Iterator[GhostMessage]:
        # Chunks are taken whole (emit_chunks) and unpacked here, so that one damaged chunk is
        # skipped and reported while the records after it are still read.
        reader = _StreamReader(
            stream,  # type: ignore[arg-type]
            emit_chunks=True, validate_crcs=True, record_size_limit=max(stream.size, 1))
        records = reader.records
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
        state: _FileState,
        record: Chunk,
        start: int,
        watch: Callable[[object], None] | None = None,
    ) -> Iterator[GhostMessage]:
        """The ghost messages of one chunk (the chunk record starting at byte `start`).

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
            reason = str(err) if isinstance(err, _ChunkError) else _one_line(err)
            self._read_errors.append(ReadError(
                state.name, ReadErrorKind.CORRUPT_RECORD,
                f'the chunk at byte {start} cannot be unpacked ({reason}); its messages '
                'were not read', start,
            ))
            return
        times = [item.log_time for item in inner
                 if isinstance(item, (_MessageRecord, Message))]
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
            if type(item) is _MessageRecord:
                message = self._message(state, item.channel_id, item.log_time, item.data,
                                        start)
                if message is not None:
                    yield message
            else:
                yield from self._record(state, item, start)

    def _message(
        self, state: _FileState, channel_id: int, log_time: int, data: bytes, offset: int
    ) -> GhostMessage | None:
        """Count one message record; return it decoded when it is on a ghost channel."""
        self._messages_seen += 1
        state.messages += 1
        per_channel = state.per_channel
        per_channel[channel_id] = per_channel.get(channel_id, 0) + 1
        channels = state.channels
        if channel_id not in channels:
            seen = state.undeclared.setdefault(channel_id, [0, offset])
            seen[0] += 1
            return None
        ghost = channels[channel_id]
        if ghost is None:
            return None
        return self._decode(state, ghost, log_time, data, offset)

    def _record(self, state: _FileState, record: object, offset: int) -> Iterator[GhostMessage]:
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
                state.channels[record.id] = self._ghost_channel(state, record)
            if not state.chunks:
                state.declared_early.add(record.id)
        elif isinstance(record, Statistics):
            state.statistics = record
        elif isinstance(record, Footer):
            state.footer_seen = True

    def _redeclared(self, state: _FileState, what: str, record_id: int, offset: int) -> None:
        # The summary section repeats every schema and channel; a repetition that differs
        # means one of the two copies was altered. The first one (before the messages) is kept.
        state.failed = True
        self._read_errors.append(ReadError(
            state.name, ReadErrorKind.CORRUPT_RECORD,
            f'{what} id {record_id} is declared again at byte {offset} with different '
            'content (one copy was altered); the first declaration was used', offset,
        ))

    def _finish_file(self, state: _FileState) -> None:
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

    def _ghost_channel(self, state: _FileState, channel: Channel) -> _GhostChannel | None:
        schema = state.schemas.get(channel.schema_id)
        kind = None if schema is None else ghost_kind_of_schema(schema.name)
        if schema is None or kind is None:
            self._other_topics.add((channel.topic, '' if schema is None else schema.name))
            return None
        where = f'{state.path}: channel {channel.topic} ({schema.name})'
        if channel.message_encoding != 'cdr' or schema.encoding != 'ros2msg':
            raise BagFormatError(
                f'{where}: encoding {channel.message_encoding}/{schema.encoding} is not '
                'supported (expected cdr with a ros2msg schema)'
            )
        try:
            text = schema.data.decode('utf-8')
        except UnicodeDecodeError as err:
            raise BagFormatError(f'{where}: the schema text is not UTF-8') from err
        problems = schema_problems(kind, schema.name, text)
        if problems:
            raise SchemaMismatchError(
                f'{where}: the embedded schema does not define the fields the verifier reads: '
                f'{"; ".join(problems)}. The bag was written with another definition of this '
                'type (or its schema record is damaged); its messages cannot be judged without '
                'being mis-read'
            )
        try:
            with quiet_parser():
                decoder = compile_decoder(schema.name, text)
                hashing = None
                if kind in HASHED_KINDS:
                    # The canonical JSON (what is hashed) rendered in the decoding pass.
                    hashing = compile_json_decoder(schema.name, text, _HASHED_PARTS.get(kind, ()))
        except Exception as err:  # noqa: BLE001 - schema text comes from the bag
            raise BagFormatError(f'{where}: schema cannot be parsed: {_one_line(err)}') from err
        type_name = _full_type_name(schema.name)
        self._topics.add((channel.topic, type_name))
        return _GhostChannel(channel.topic, type_name, kind, decoder, hashing,
                             _HASHED_PARTS.get(kind, ()))

    def _decode(
        self, state: _FileState, channel: _GhostChannel, log_time: int, data: bytes,
        offset: int,
    ) -> GhostMessage | None:
        sha256 = ''
        part_sha256: tuple[tuple[str, str], ...] = ()
        try:
            # Straight to the message dict in one pass (cdr.py), with, for the cited streams,
            # the canonical JSON that content_address hashes.
            if channel.hashing is None:
                msg = channel.decoder(data)
            else:
                msg, text, parts = channel.hashing(data)
                sha256 = _sha256(text.encode('utf-8')).hexdigest()
                part_sha256 = tuple(
                    (name, _sha256(part.encode('utf-8')).hexdigest())
                    for name, part in zip(channel.parts, parts, strict=True))
        except Exception as err:  # noqa: BLE001 - payload bytes come from the bag
            seen = state.undecodable.setdefault(channel.topic, [0, offset])
            seen[0] += 1
            state.undecodable_first.setdefault(
                channel.topic, f'the first at log time {log_time} ns: {_one_line(err)}')
            return None
        self._ghost_messages += 1
        return GhostMessage(
            topic=channel.topic,
            type_name=channel.type_name,
            kind=channel.kind,
            log_time_ns=log_time,
            stamp_ns=_stamp_ns(msg, state, channel, log_time),
            msg=msg,
            sha256=sha256,
            part_sha256=part_sha256,
        )


def _stamp_ns(msg: dict[str, object], state: _FileState, channel: _GhostChannel,
              log_time: int) -> int:
    """header.stamp of a decoded ghost message in nanoseconds (stamp_ns_of, without its cost)."""
    header = msg.get('header')
    stamp = header.get('stamp') if type(header) is dict else None
    if type(stamp) is dict:
        sec, nanosec = stamp.get('sec'), stamp.get('nanosec')
        if type(sec) is int and type(nanosec) is int:
            return sec * 1_000_000_000 + nanosec
    # Not the shape the schema check promised: let stamp_ns_of say what is wrong, and where.
    return stamp_ns_of(msg, f'{state.path}: {channel.topic} at log time {log_time} ns')


#: The streams some message cites by content address (SPEC section 4); only their messages
#: are hashed. Predictions, outcomes and actuations are cited by none.
HASHED_KINDS = frozenset({GhostTopicKind.RAW_ASSESSMENT, GhostTopicKind.CALIBRATED,
                          GhostTopicKind.RATIONALE})
#: The nested messages hashed too: the raw assessment a calibrated one carries inline (the
#: chain compares its address with the claimed one).
_HASHED_PARTS: dict[GhostTopicKind, tuple[str, ...]] = {
    GhostTopicKind.CALIBRATED: ('raw_assessment',)}
_sha256 = hashlib.sha256


class _StreamReader(StreamReader):
    """mcap's stream reader, reading a message index record in one read.

    The verifier does not use message indexes (one per channel after every chunk, 16 bytes
    per message); mcap parses each entry with two 8-byte reads, which made them a tenth of
    the whole pass. Their bytes are read (and CRC'd, and hashed) all the same.
    """

    def _read_record(self, opcode: int, length: int) -> McapRecord | None:
        if opcode == Opcode.MESSAGE_INDEX:
            return _read_message_index(self._stream, length)
        return super()._read_record(opcode, length)


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


@dataclass(frozen=True, slots=True)
class _GhostChannel:
    topic: str
    type_name: str
    kind: GhostTopicKind
    decoder: DictDecoder
    #: For the hashed streams: the decoder that also renders the canonical JSON.
    hashing: JsonDecoder | None
    #: The nested messages whose JSON `hashing` gives apart (see _HASHED_PARTS).
    parts: tuple[str, ...]


class _MessageRecord(NamedTuple):
    """A message record of a chunk: what the reader needs of it."""

    channel_id: int
    log_time: int
    data: bytes


_RECORD_HEADER = struct.Struct('<BQ').unpack_from
_MESSAGE_HEADER = struct.Struct('<HIQQ').unpack_from
_MESSAGE_OPCODE = int(Opcode.MESSAGE)
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

    Messages come as _MessageRecord, schemas and channels as mcap's records, other records
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
            append(_MessageRecord(channel_id, log_time, data[start + 22:stop]))
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
                  f'parsed ({_one_line(err)})')
    return ReadError(name, ReadErrorKind.CORRUPT_RECORD,
                     f'{detail}; reading of this file stopped there', start)


def _opcode_name(opcode: int | None) -> str:
    try:
        return f'a {Opcode(opcode).name.lower()}' if opcode is not None else 'a'
    except ValueError:
        return f'an unknown (opcode {opcode:#04x})'


def _full_type_name(name: str) -> str:
    parts = name.split('/')
    if len(parts) == 2:
        return f'{parts[0]}/msg/{parts[1]}'
    return name


def _digest_small_file(path: Path) -> BagFileDigest:
    try:
        data = path.read_bytes()
    except OSError as err:
        raise BagFormatError(f'{path}: cannot read: {err.strerror}') from err
    return BagFileDigest(path.name, hashlib.sha256(data).hexdigest())


def _name_in_bag(layout: BagLayout, path: Path) -> str:
    try:
        return path.relative_to(layout.root).as_posix()
    except ValueError:
        return path.name


def _display(layout: BagLayout) -> str:
    if layout.metadata is None and len(layout.files) == 1 and not layout.metadata_missing:
        return str(layout.files[0])
    return str(layout.root)


def _one_line(err: BaseException) -> str:
    text = ' '.join(str(err).split())
    return f'{type(err).__name__}: {text}' if text else type(err).__name__
