"""Read a ghost bag in one streaming pass and turn it into typed cycle events.

The orchestration of the verifier's reading: ghost_bag's MCAP reader (layout, damage
diagnosis) with the ghost channels decoded (decode.py) and grouped into cycles (cycles.py).
:class:`ChunkReader` reads chosen chunks as a whole pass would (for split verification,
jobs.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
import hashlib
import os
from typing import NamedTuple

from ghost_bag.errors import BagFormatError
from ghost_bag.layout import BagLayout, display_name, name_in_bag, one_line, resolve_bag
from ghost_bag.mcap_read import (
    BagFileDigest,
    Channel,
    FileScan,
    FileState,
    McapBagReader,
    MessageRecord,
    read_chunk,
    ReadError,
    ReadErrorKind,
    Schema,
)

from .cycles import DEFAULT_CYCLE_WINDOW, group_cycles, group_events
from .decode import compile_ghost_channel, GhostChannel, stamp_ns
from .errors import NoGhostTopicsError
from .events import BagInfo, CycleEvent, GateRecord, ghost_kind_of_schema, GhostMessage

__all__ = [
    'DEFAULT_CYCLE_WINDOW',
    'BagLayout',
    'BagScan',
    'ChunkContent',
    'ChunkReader',
    'FileScan',
    'GhostBag',
    'group_cycles',
    'group_events',
    'resolve_bag',
]


@dataclass(frozen=True, slots=True)
class BagScan:
    """What GhostBag.scan() found: the files, their digests, topics and read errors."""

    files: tuple[FileScan, ...]
    digests: tuple[BagFileDigest, ...]
    read_errors: tuple[ReadError, ...]
    topics: frozenset[tuple[str, str]]
    other_topics: frozenset[tuple[str, str]]
    messages_seen: int
    #: The greatest log time of the message records outside the chunks (None: none).
    last_log_time_ns: int | None = None


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
        self._states: list[FileState[GhostChannel]] = [
            FileState(item, name_in_bag(self._bag.layout, item))
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

    @property
    def last_log_time_ns(self) -> int | None:
        """The greatest log time of the message records read so far (any channel)."""
        return self._bag.last_log_time_ns

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
            chunk = read_chunk(state.path, offset, length)
        except Exception as err:  # noqa: BLE001 - bytes come from the bag
            self.problems.append(f'{state.name}: the chunk at byte {offset}: {one_line(err)}')
            return ChunkContent([], 0, {}, (), frozenset())
        def watch(item: object) -> None:
            # The declarations made up front are the summary's (after every chunk): which
            # channel a chunk declares, and which it uses undeclared so far, is told apart.
            if type(item) is MessageRecord:
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


class GhostBag(McapBagReader[GhostChannel, GhostMessage]):
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
        super().__init__(path)
        self.cycle_window = cycle_window
        self._topics: set[tuple[str, str]] = set()
        self._other_topics: set[tuple[str, str]] = set()
        self._ghost_messages = 0
        self._cycles = 0
        self._info: BagInfo | None = None

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
        for event in group_events(self.read(), self.cycle_window):
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
                f'{display_name(self.layout)}: no ghost topics (no channel has a '
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
            last_log_time_ns=self.last_log_time_ns,
        )

    def _nothing_readable(self) -> str:
        # The most telling problem is one in an .mcap file (a missing metadata.yaml only says
        # that the recorder did not close the bag).
        errors = self._read_errors
        first = next((error for error in errors
                      if error.kind is not ReadErrorKind.METADATA_MISSING), errors[0])
        more = len(errors) - 1
        tail = f' (and {more} more problem{"s" if more > 1 else ""})' if more else ''
        return (f'{display_name(self.layout)}: no ghost message could be read: '
                f'{first.describe()}{tail}')

    def scan(self) -> BagScan:
        """Read every file once without unpacking its chunks: where they are, and the rest.

        What a split reading (jobs.py) needs to know of the bag besides the chunks' content:
        each file's chunk records, declarations and summary statistics, the files' SHA-256,
        the ghost topics the declarations name and every read error outside the chunks. A
        GhostBag is read once: scan() instead of cycles().
        """
        files = self.scan_files()
        return BagScan(files=files, digests=tuple(self._digests),
                       read_errors=tuple(self._read_errors), topics=frozenset(self._topics),
                       other_topics=frozenset(self._other_topics),
                       messages_seen=self._messages_seen,
                       last_log_time_ns=self.last_log_time_ns)

    def _channel(self, state: FileState[GhostChannel], channel: Channel) -> GhostChannel | None:
        """A ghost channel's decoders (its schema checked); None for any other channel."""
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
        ghost = compile_ghost_channel(where, channel.topic, kind, schema.name, text)
        self._topics.add((channel.topic, ghost.type_name))
        return ghost

    def _decode(
        self, state: FileState[GhostChannel], channel: GhostChannel, log_time: int, data: bytes,
        offset: int,
    ) -> GhostMessage | None:
        """Decode one ghost message (None, and counted per topic, when it cannot be)."""
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
            self._undecodable(state, channel.topic, log_time, err, offset)
            return None
        self._ghost_messages += 1
        return GhostMessage(
            topic=channel.topic,
            type_name=channel.type_name,
            kind=channel.kind,
            log_time_ns=log_time,
            stamp_ns=stamp_ns(msg, state.path, channel.topic, log_time),
            msg=msg,
            sha256=sha256,
            part_sha256=part_sha256,
        )


_sha256 = hashlib.sha256
