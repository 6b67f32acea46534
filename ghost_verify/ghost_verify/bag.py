"""Read a rosbag2 MCAP bag in one streaming pass and turn it into typed cycle events."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
import hashlib
import io
import os
from pathlib import Path
import re
import struct
from typing import BinaryIO

from mcap.exceptions import EndOfFile, InvalidMagic
from mcap.records import Channel, Message, Schema
from mcap.stream_reader import StreamReader
from mcap_ros2.decoder import DecoderFactory
import yaml  # type: ignore[import-untyped, unused-ignore]

from ghost_core.hashing import content_address

from .errors import BagFormatError, BagNotFoundError, LateMessageError, NoGhostTopicsError
from .events import (
    Actuation,
    actuation_of,
    BagFileDigest,
    BagInfo,
    Calibrated,
    calibrated_of,
    CycleEvent,
    ghost_kind_of_schema,
    GhostMessage,
    GhostTopicKind,
    Rationale,
    rationale_of,
    raw_assessment_of,
    RawAssessment,
    stamp_ns_of,
)

__all__ = [
    'DEFAULT_CYCLE_WINDOW',
    'BagLayout',
    'GhostBag',
    'decoded_to_msg_dict',
    'group_cycles',
    'resolve_bag',
]

# How many cycles may be open (seen but not yet handed to the judges) at once. A cycle is
# closed when a message of a new cycle arrives while this many are open (the oldest stamp is
# closed first), or at the end of the bag. 256 cycles is 25.6 s of recorder lag at 10 Hz.
DEFAULT_CYCLE_WINDOW = 256

_READ_SIZE = 1 << 20
_Decoder = Callable[[bytes], object]


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
    storage = info.get('storage_identifier', 'mcap')
    if storage != 'mcap':
        raise BagFormatError(
            f'{metadata}: storage {storage!r} is not supported; record with -s mcap'
        )
    if info.get('compression_mode') == 'FILE' or info.get('compression_mode') == 'file':
        raise BagFormatError(f'{metadata}: file-compressed bags are not supported')
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
        else:
            self.actuations.append(actuation_of(message))

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
    placed any more and raises LateMessageError.
    """
    if cycle_window < 1:
        raise ValueError(f'cycle_window must be at least 1, got {cycle_window}')
    open_cycles: dict[int, _CycleBuilder] = {}
    closed_up_to: int | None = None
    for message in messages:
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


class GhostBag:
    """A bag opened for one streaming pass over its ghost messages.

    Construction resolves the layout (and fails early on a missing path or a bad
    metadata.yaml); :meth:`cycles` then reads every file once, in order, hashing the bytes as
    they are read. :attr:`info` is available once :meth:`cycles` has been exhausted.
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
        self._messages_seen = 0
        self._ghost_messages = 0
        self._cycles = 0
        self._info: BagInfo | None = None
        self._started = False

    @property
    def files_read(self) -> tuple[BagFileDigest, ...]:
        """The files read so far, in reading order, with their SHA-256 (also after an error)."""
        return tuple(self._digests)

    @property
    def messages_seen(self) -> int:
        """How many message records (on any channel) have been read so far."""
        return self._messages_seen

    @property
    def info(self) -> BagInfo:
        """File digests and ghost topics of the bag; only after :meth:`cycles` finished."""
        if self._info is None:
            raise RuntimeError('GhostBag.info is known only after cycles() has been exhausted')
        return self._info

    def cycles(self) -> Iterator[CycleEvent]:
        """Yield one CycleEvent per cycle stamp (see :func:`group_cycles` for the rule).

        Raises NoGhostTopicsError at the end if no channel carried a ghost_interfaces schema.
        """
        if self._started:
            raise RuntimeError('a GhostBag is read once; open it again for another pass')
        self._started = True
        if self.layout.metadata is not None:
            self._digests.append(_digest_small_file(self.layout.metadata))
        for event in group_cycles(self.messages_in_file_order(), self.cycle_window):
            self._cycles += 1
            yield event
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
        )

    def messages_in_file_order(self) -> Iterator[GhostMessage]:
        """Yield every ghost message in file order (files in metadata order)."""
        for path in self.layout.files:
            yield from self._read_file(path)

    def _read_file(self, path: Path) -> Iterator[GhostMessage]:
        try:
            handle = path.open('rb')
        except OSError as err:
            raise BagFormatError(f'{path}: cannot open: {err.strerror}') from err
        with handle:
            hashing = _HashingRaw(handle)
            stream = io.BufferedReader(hashing, buffer_size=_READ_SIZE)
            yield from self._messages_of_stream(path, stream)
            try:
                while stream.read(_READ_SIZE):
                    pass
            except OSError as err:
                raise BagFormatError(f'{path}: read failed: {err.strerror}') from err
        self._digests.append(
            BagFileDigest(_name_in_bag(self.layout, path), hashing.digest.hexdigest())
        )

    def _messages_of_stream(self, path: Path, stream: BinaryIO) -> Iterator[GhostMessage]:
        schemas: dict[int, Schema] = {}
        channels: dict[int, _GhostChannel | None] = {}
        factory = DecoderFactory()
        records = StreamReader(stream, validate_crcs=True).records
        while True:
            try:
                record = next(records)
            except StopIteration:
                return
            except Exception as err:  # noqa: BLE001 - a foreign parser on untrusted bytes
                raise BagFormatError(
                    f'{path}: not a readable MCAP file: {_mcap_error(err)}'
                ) from err
            if isinstance(record, Schema):
                schemas[record.id] = record
            elif isinstance(record, Channel):
                channels[record.id] = self._ghost_channel(path, record, schemas, factory)
            elif isinstance(record, Message):
                self._messages_seen += 1
                if record.channel_id not in channels:
                    raise BagFormatError(
                        f'{path}: message refers to channel id {record.channel_id}, '
                        'which was never declared'
                    )
                ghost = channels[record.channel_id]
                if ghost is not None:
                    yield self._decode(path, record, ghost)

    def _ghost_channel(
        self,
        path: Path,
        channel: Channel,
        schemas: Mapping[int, Schema],
        factory: DecoderFactory,
    ) -> _GhostChannel | None:
        schema = schemas.get(channel.schema_id)
        kind = None if schema is None else ghost_kind_of_schema(schema.name)
        if schema is None or kind is None:
            self._other_topics.add((channel.topic, '' if schema is None else schema.name))
            return None
        where = f'{path}: channel {channel.topic} ({schema.name})'
        if channel.message_encoding != 'cdr' or schema.encoding != 'ros2msg':
            raise BagFormatError(
                f'{where}: encoding {channel.message_encoding}/{schema.encoding} is not '
                'supported (expected cdr with a ros2msg schema)'
            )
        try:
            decoder = factory.decoder_for(channel.message_encoding, schema)
        except Exception as err:  # noqa: BLE001 - schema text comes from the bag
            raise BagFormatError(f'{where}: schema cannot be parsed: {_one_line(err)}') from err
        if decoder is None:
            raise BagFormatError(f'{where}: no decoder for this schema')
        type_name = _full_type_name(schema.name)
        self._topics.add((channel.topic, type_name))
        return _GhostChannel(channel.topic, type_name, kind, decoder)

    def _decode(self, path: Path, record: Message, channel: _GhostChannel) -> GhostMessage:
        where = f'{path}: {channel.topic} at log time {record.log_time} ns'
        try:
            decoded = channel.decoder(bytes(record.data))
        except Exception as err:  # noqa: BLE001 - payload bytes come from the bag
            raise BagFormatError(f'{where}: cannot be decoded: {_one_line(err)}') from err
        msg = decoded_to_msg_dict(decoded)
        self._ghost_messages += 1
        return GhostMessage(
            topic=channel.topic,
            type_name=channel.type_name,
            kind=channel.kind,
            log_time_ns=record.log_time,
            stamp_ns=stamp_ns_of(msg, where),
            msg=msg,
            sha256=content_address(msg),
        )


@dataclass(frozen=True, slots=True)
class _GhostChannel:
    topic: str
    type_name: str
    kind: GhostTopicKind
    decoder: _Decoder


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
    if layout.metadata is None and len(layout.files) == 1:
        return str(layout.files[0])
    return str(layout.root)


def _mcap_error(err: Exception) -> str:
    if isinstance(err, EndOfFile):
        return 'unexpected end of data (empty or truncated file)'
    if isinstance(err, InvalidMagic):
        return 'bad magic bytes (not an MCAP file)'
    if isinstance(err, struct.error):
        return f'truncated or corrupt record ({err})'
    return _one_line(err)


def _one_line(err: BaseException) -> str:
    text = ' '.join(str(err).split())
    return f'{type(err).__name__}: {text}' if text else type(err).__name__
