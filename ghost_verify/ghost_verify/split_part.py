"""One part of a split verification (``ghost_verify.jobs``): what a worker process judges.

A part reads its own chunks, the chunks before them back to a refilled history window, and
the chunk after them; it judges the cycles stamped after ``B_k`` up to ``B_(k+1)`` and
reports, besides its checkers, what the parent must check before merging them (see the
module docstring of ``ghost_verify.jobs``).
"""

from __future__ import annotations

from bisect import bisect_right, insort
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from mcap.records import Channel, Schema

from .bag import ChunkReader, group_events
from .events import CycleEvent, GateRecord, GhostMessage, GhostTopicKind
from .run_parameters import RunParameters
from .single_pass import Checks
from .unverifiable import missing_kinds

__all__ = ['Chunk', 'Declarations', 'Part', 'PartOptions', 'PartResult', 'run_part']

#: A part reads back the chunks before its own (``Part.before``) until they hold this many
#: observed outcomes (its history window's refill; W is 32 by default), or all of them.
_SEED_OUTCOMES = 512
#: How many messages at the start of the first chunk read back are taken to lie before the
#: outcomes the window is refilled with (see _read_back).
_HEAD = 64


@dataclass(frozen=True, slots=True)
class PartOptions:
    """The verify_all options every part is judged with."""

    parameters: RunParameters
    cycle_window: int


@dataclass(frozen=True, slots=True)
class Chunk:
    """One chunk record: which file, where, how long, how big once unpacked."""

    file: int
    offset: int
    length: int
    size: int

    @property
    def ref(self) -> tuple[int, int, int]:
        """What ChunkReader.read takes: (file, offset, length)."""
        return self.file, self.offset, self.length


#: Each file's summary declarations: its schemas and its channels.
Declarations = tuple[tuple[tuple[Schema, ...], tuple[Channel, ...]], ...]


@dataclass(frozen=True, slots=True)
class Part:
    """What one process judges: its chunks, and the chunk before and after them."""

    index: int
    bag: str
    declarations: Declarations
    first: int                    # index of its first chunk in the bag's chunk list
    chunks: tuple[Chunk, ...]
    before: tuple[Chunk, ...]     # the chunks before its first, in file order (part 0: none)
    after: tuple[Chunk, ...]      # the chunks after its last (none for the last part)
    options: PartOptions


@dataclass(slots=True)
class PartResult:
    """What a part found: its checkers, and what the parent checks before merging them."""

    index: int
    checks: Checks | None = None
    problems: list[str] = field(default_factory=list)
    #: The greatest cycle stamp of each of its chunks (None: no cycle message in it).
    chunk_max: list[int | None] = field(default_factory=list)
    start: int | None = None      # B_k: it judged the cycles after this stamp
    end: int | None = None        # B_(k+1): up to this one (None for the last part)
    floor: int | None = None      # its history window holds the outcomes after this stamp
    earliest: int = 0             # the first chunk it read back
    late: int = 0                 # messages of part k - 1's cycles in its first chunk
    late_min: int | None = None
    taken_after: int = 0          # messages it took from the chunks after its own
    records: dict[int, int] = field(default_factory=dict)            # file -> records
    per_channel: dict[int, dict[int, int]] = field(default_factory=dict)
    declared: dict[int, list[int]] = field(default_factory=dict)     # file -> channel ids
    undeclared_uses: dict[int, set[int]] = field(default_factory=dict)
    ghost_messages: int = 0
    cycles: int = 0
    topics: frozenset[tuple[str, str]] = frozenset()
    last_log_time_ns: int | None = None   # the greatest log time of any record it read
    lead_in: bool = True


class _Lateness:
    """How late messages come: the distinct greater stamps read before each (bounded).

    A single pass closes a cycle once its window is full of later ones, so a message with
    fewer than ``window - 1`` distinct greater stamps before it can never arrive too late.
    """

    def __init__(self, window: int) -> None:
        self.window = window
        self._recent: list[int] = []
        self._known: set[int] = set()

    def see(self, stamp: int) -> int:
        """Note one message's stamp; return how many distinct greater stamps came before."""
        recent = self._recent
        greater = 0
        if recent and stamp < recent[-1]:
            if stamp < recent[0] and len(recent) >= self.window:
                greater = self.window
            else:
                greater = len(recent) - bisect_right(recent, stamp)
        if stamp not in self._known:
            self._known.add(stamp)
            if not recent or stamp > recent[-1]:
                recent.append(stamp)
            else:
                insort(recent, stamp)
            if len(recent) > 2 * self.window:
                for old in recent[:self.window]:
                    self._known.discard(old)
                del recent[:self.window]
        return greater


def run_part(part: Part) -> PartResult:
    """Judge one part of the bag (in a worker process); see the module docstring."""
    result = PartResult(part.index)
    try:
        _judge_part(part, result, Checks.new(part.options.parameters,
                                              cycle_window=part.options.cycle_window))
    except Exception as err:  # noqa: BLE001 - a single pass reports what went wrong
        result.problems.append(f'part {part.index}: {type(err).__name__}: '
                               f'{" ".join(str(err).split())}')
        result.checks = None
    return result


def _cycle_stamps(messages: Sequence[GhostMessage], result: PartResult) -> list[int]:
    stamps = []
    for message in messages:
        if message.kind is GhostTopicKind.GATE:
            result.problems.append('the bag holds command gate records')
        else:
            stamps.append(message.stamp_ns)
    return stamps


def _note_uses(result: PartResult, file: int, uses: frozenset[int]) -> None:
    if uses:
        result.undeclared_uses.setdefault(file, set()).update(uses)


class _PartReading:
    """The messages a part judges, in bag order, read chunk by chunk.

    Its chunks' messages of the cycles after ``start`` (B_k), then those of the chunks after
    it up to ``end`` (B_(k+1), the greatest cycle stamp of its own chunks).
    """

    def __init__(self, part: Part, result: PartResult) -> None:
        self.part = part
        self.result = result
        self.reader = ChunkReader(part.bag, part.declarations,
                                  cycle_window=part.options.cycle_window)
        self.lateness = _Lateness(part.options.cycle_window)
        self.start: int | None = None
        self.end: int | None = None

    def read(self, chunk: Chunk) -> list[GhostMessage]:
        """Read one of the part's own chunks, counting what the parent checks."""
        result = self.result
        content = self.reader.read(*chunk.ref)
        result.records[chunk.file] = result.records.get(chunk.file, 0) + content.records
        counts = result.per_channel.setdefault(chunk.file, {})
        for channel, count in content.per_channel.items():
            counts[channel] = counts.get(channel, 0) + count
        result.declared.setdefault(chunk.file, []).extend(content.declared)
        _note_uses(result, chunk.file, content.undeclared_uses)
        result.ghost_messages += len(content.messages)
        stamps = _cycle_stamps(content.messages, result)
        result.chunk_max.append(max(stamps) if stamps else None)
        return content.messages

    def messages(self, first: list[GhostMessage]) -> Iterator[GhostMessage]:
        """The part's messages; `first` is its first chunk's, already read."""
        yield from self._own_chunks(first)
        if self.part.after:
            yield from self._after_chunks()

    def _own(self, message: GhostMessage, greater: int) -> None:
        if greater >= self.part.options.cycle_window - 1:
            self.result.problems.append(f'a message at {message.stamp_ns} ns comes {greater} '
                                        'cycles late (a single pass may reject it)')

    def _own_chunks(self, first: list[GhostMessage]) -> Iterator[GhostMessage]:
        result, start = self.result, self.start
        for position, chunk in enumerate(self.part.chunks):
            for message in first if position == 0 else self.read(chunk):
                if message.kind is GhostTopicKind.GATE:
                    continue
                greater = self.lateness.see(message.stamp_ns)
                if start is None or message.stamp_ns > start:
                    self._own(message, greater)
                    yield message
                elif position == 0:
                    result.late += 1
                    if result.late_min is None or message.stamp_ns < result.late_min:
                        result.late_min = message.stamp_ns
                else:
                    result.problems.append(
                        f'a message of cycle {message.stamp_ns} ns comes after the first '
                        'chunk of the part after its own')

    def _after_chunks(self) -> Iterator[GhostMessage]:
        result, start = self.result, self.start
        maxima = [value for value in result.chunk_max if value is not None]
        end = max(maxima) if maxima else None
        if end is None or (start is not None and end <= start):
            result.problems.append('no cycle of its own in the part')
            return
        self.end = end
        for chunk in self.part.after:
            for message in self.reader.read(*chunk.ref).messages:
                if message.kind is GhostTopicKind.GATE:
                    continue
                greater = self.lateness.see(message.stamp_ns)
                if (start is None or message.stamp_ns > start) and message.stamp_ns <= end:
                    result.taken_after += 1
                    self._own(message, greater)
                    yield message


def _judge_part(part: Part, result: PartResult, checks: Checks) -> None:
    reading = _PartReading(part, result)
    seed: list[GhostMessage] = []
    if part.before:
        found = _read_back(reading)
        if found is None:
            return
        reading.start, seed = found
    start = result.start = reading.start
    first = reading.read(part.chunks[0])
    if start is not None:
        seed.extend(message for message in first
                    if message.stamp_ns <= start and message.kind is GhostTopicKind.OUTCOME
                    and (result.floor is None or message.stamp_ns > result.floor))
        # As a single pass is after the complete cycle B_k: nothing waits to be cut, the
        # history window holds the outcomes before (in cycle order), the lead-in is over.
        checks.baud.resume()
        checks.erur.resume()
        checks.tracer.resume()
        checks.completeness.resume()
        seed.sort(key=lambda message: message.stamp_ns)
        checks.history.resume(seed, complete=result.earliest == 0)
    _feed(reading, checks, first)


def _read_back(reading: _PartReading) -> tuple[int, list[GhostMessage]] | None:
    """B_k and the outcomes to refill the history window with, from the chunks before.

    Read back from the part's first chunk until the outcomes read refill a history window;
    None (a problem noted) when those chunks cannot say where the part starts.
    """
    part, result = reading.part, reading.result
    contents = []
    outcomes = 0
    for chunk in reversed(part.before):
        content = reading.reader.read(*chunk.ref)
        _note_uses(result, chunk.file, content.undeclared_uses)
        contents.append(content)
        outcomes += sum(message.kind is GhostTopicKind.OUTCOME
                        and message.msg.get('observed') is True
                        for message in content.messages)
        if outcomes >= _SEED_OUTCOMES:
            break
    contents.reverse()
    result.earliest = part.first - len(contents)
    stamps = [stamp for content in contents
              for stamp in _cycle_stamps(content.messages, result)]
    if not stamps:
        result.problems.append('no cycle message in the chunks before the part')
        return None
    # The outcomes of the cycles after `floor` are all in the chunks read back or after
    # them (the parent checks that no earlier chunk holds a greater stamp than `floor`).
    head = _cycle_stamps(contents[0].messages[:_HEAD], result)
    floor = None if result.earliest == 0 else max(head) if head else None
    if result.earliest and floor is None:
        result.problems.append('no cycle message at the start of the chunks read back')
        return None
    result.floor = floor
    return max(stamps), [message for content in contents for message in content.messages
                         if message.kind is GhostTopicKind.OUTCOME
                         and (floor is None or message.stamp_ns > floor)]


def _feed(reading: _PartReading, checks: Checks, first: list[GhostMessage]) -> None:
    """Feed the part's cycles to its checkers; note what the parent checks of the result."""
    part, result = reading.part, reading.result
    last: CycleEvent | None = None
    for event in group_events(reading.messages(first), part.options.cycle_window):
        if isinstance(event, GateRecord):
            result.problems.append('the bag holds command gate records')
            continue
        checks.feed(event)
        last = event
        result.cycles += 1
    if part.after:
        result.end = reading.end
        if last is None or last.stamp_ns != result.end or missing_kinds(last):
            result.problems.append('the part does not end with a complete cycle')
    result.problems.extend(reading.reader.problems)
    result.problems.extend(checks.history.unsure)
    result.topics = reading.reader.topics
    result.last_log_time_ns = reading.reader.last_log_time_ns
    result.lead_in = checks.history.lead_in
    result.checks = checks
