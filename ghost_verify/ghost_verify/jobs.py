"""verify_all --jobs N on one bag: the bag cut into N parts, each judged by its own process.

The result is the one of a single pass, field for field: each part's checkers start in the
state a single pass has at that point, the parent merges the parts' checkers, and whatever
the parts could not know is checked afterwards; when a check fails, the bag is verified again
in a single pass (never a different answer, at worst the time of both).

How the bag is cut. The chunks of its .mcap files (the summary's chunk index, in file order)
are cut into runs of consecutive chunks of about equal size, one per process. Part k judges
the cycles stamped after ``B_k``, the greatest cycle stamp in the chunks before its own: every
message of those cycles is in its chunks or after them, so it reads them all; the messages of
earlier cycles that a recorder wrote late, at the start of its chunks, belong to part k - 1,
which also reads part k's first chunk for them (part k - 1 judges up to ``B_k`` included).

What carries over from part k - 1 to part k, and how:

- the cycle window (LateMessageError): a message whose cycle a single pass would already have
  closed has as many greater stamps before it as the window holds; every part measures that
  for its messages (the greater stamps before each, up to the window) and a message that late
  sends the bag to a single pass;
- the cuts at the recording's edges: part k - 1 must end with a complete cycle (``B_k``), the
  state in which a single pass has nothing waiting and nothing more to cut at the start;
- the calibration history W (HistoryChecker): part k refills its window with the observed
  outcomes of the cycles before ``B_k`` that it reads in the chunk before its own (about a
  chunk of cycles, far more than W); a history needing more of them than that is noted and
  sends the bag to a single pass; the lead-in (histories counting outcomes before the bag)
  must be over within part 0;
- M and K (ParameterTracker), the precondition runs, the chain, completeness, conformance:
  counts add up, lists follow each other, a run open at the end of a part goes on in the
  next part's first run when that starts with its first cycle;
- the bag itself: the parent reads every file once while the parts run, as a single pass
  does but without unpacking the chunks (GhostBag.scan): the files' SHA-256, every read error
  outside the chunks, the declarations; the parts report their chunks' messages per channel,
  which must match each file's summary statistics (and metadata.yaml's count).

A single pass is also what runs when a split cannot help or cannot be exact by construction:
``--strict`` (the first M and K for every cycle), a bag with a command gate's records, a file
without a chunk index, fewer than two chunks per part, or anything read wrong (a damaged bag
is judged on what can be read, which only a single pass reports exactly).
"""

from __future__ import annotations

from bisect import bisect_right, insort
from collections.abc import Iterator, Sequence
import concurrent.futures
from dataclasses import dataclass, field, fields
import logging
import multiprocessing
import os
from pathlib import Path
import threading

from mcap.reader import make_reader
from mcap.records import Channel, Schema

from .bag import BagScan, ChunkReader, DEFAULT_CYCLE_WINDOW, GhostBag, group_events, resolve_bag
from .events import BagInfo, CycleEvent, GateRecord, GhostMessage, GhostTopicKind
from .manifest import check_manifest, ManifestCheck
from .single_pass import Checks, VerificationResult, verify_single_pass
from .unverifiable import missing_kinds

__all__ = ['Pool', 'SplitRun', 'make_pool', 'run_split', 'verify_split']

#: Where verify_split says why a bag was verified in a single pass (logging.INFO).
log = logging.getLogger(__name__)

#: What runs the parts: any executor of processes (verify_split makes one when none is given).
Pool = concurrent.futures.Executor

#: The chunks a part reads after its own (for the cycles it judges that end there).
_AFTER = 1
#: A part reads back chunks before its own until they hold this many observed outcomes (its
#: history window's refill; W is 32 by default) or this many chunks, or the bag's first.
_SEED_OUTCOMES = 512
_BEFORE = 64
#: How many messages at the start of the first chunk read back are taken to lie before the
#: outcomes the window is refilled with (see _judge_part).
_HEAD = 64

_KNOWN_CHECKS = frozenset({'baud', 'erur', 'tracer', 'completeness', 'history', 'conformance',
                           'gate', 'strict'})


@dataclass(frozen=True, slots=True)
class SplitRun:
    """How run_split verified a bag: in how many parts, or why in a single pass.

    `starts` are the cycle stamps after which each part but the first judged (B_k).
    """

    parts: int
    starts: tuple[int, ...] = ()
    single_pass: str | None = None


@dataclass(frozen=True, slots=True)
class _Options:
    min_outcomes: int | None
    downgrade_threshold: int | None
    cycle_window: int


@dataclass(frozen=True, slots=True)
class _Chunk:
    """One chunk record: which file, where, how long, how big once unpacked."""

    file: int
    offset: int
    length: int
    size: int

    @property
    def ref(self) -> tuple[int, int, int]:
        return self.file, self.offset, self.length


Declarations = tuple[tuple[tuple[Schema, ...], tuple[Channel, ...]], ...]


@dataclass(frozen=True, slots=True)
class _Part:
    """What one process judges: its chunks, and the chunk before and after them."""

    index: int
    bag: str
    declarations: Declarations
    first: int                    # index of its first chunk in the bag's chunk list
    chunks: tuple[_Chunk, ...]
    before: tuple[_Chunk, ...]    # the chunks before its first, in file order (part 0: none)
    after: tuple[_Chunk, ...]     # the chunks after its last (none for the last part)
    options: _Options


@dataclass(slots=True)
class _PartResult:
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


def make_pool(workers: int) -> concurrent.futures.ProcessPoolExecutor:
    """A pool of `workers` processes for verify_split (forked when this process may fork)."""
    methods = multiprocessing.get_all_start_methods()
    method = ('fork' if 'fork' in methods and threading.active_count() == 1
              else 'forkserver' if 'forkserver' in methods else 'spawn')
    return concurrent.futures.ProcessPoolExecutor(
        max_workers=workers, mp_context=multiprocessing.get_context(method))


def verify_split(
    bag: str | os.PathLike[str],
    jobs: int,
    *,
    min_outcomes: int | None = None,
    downgrade_threshold: int | None = None,
    cycle_window: int = DEFAULT_CYCLE_WINDOW,
    manifest: ManifestCheck | None = None,
    strict: bool = False,
    pool: Pool | None = None,
) -> VerificationResult:
    """verify_all of `bag` with its chunks cut into `jobs` parts judged in parallel.

    Returns what ``verify_all(bag, ...)`` returns in a single pass (which is what runs when
    a split could not be exact, see the module docstring; `log` says why).
    """
    result, _ = run_split(bag, jobs, min_outcomes=min_outcomes,
                          downgrade_threshold=downgrade_threshold, cycle_window=cycle_window,
                          manifest=manifest, strict=strict, pool=pool)
    return result


def run_split(
    bag: str | os.PathLike[str],
    jobs: int,
    *,
    min_outcomes: int | None = None,
    downgrade_threshold: int | None = None,
    cycle_window: int = DEFAULT_CYCLE_WINDOW,
    manifest: ManifestCheck | None = None,
    strict: bool = False,
    pool: Pool | None = None,
) -> tuple[VerificationResult, SplitRun]:
    """verify_split, and how the bag was split (or why it was verified in a single pass)."""
    if manifest is None:
        manifest = check_manifest(bag, None)
    options = _Options(min_outcomes, downgrade_threshold, cycle_window)

    def single(reason: str) -> tuple[VerificationResult, SplitRun]:
        log.info('%s: verified in a single pass: %s', bag, reason)
        return verify_single_pass(
            bag, manifest, min_outcomes=min_outcomes, downgrade_threshold=downgrade_threshold,
            cycle_window=cycle_window, strict=strict), SplitRun(1, single_pass=reason)

    if strict:
        return single('--strict judges every cycle with the first recorded M and K')
    if {item.name for item in fields(Checks)} != _KNOWN_CHECKS:
        return single('verify_all has checks this module does not know how to merge')
    try:
        chunks, declarations = _plan(bag)
    except Exception as err:  # noqa: BLE001 - a single pass says what is wrong with the bag
        return single(f'no plan ({" ".join(str(err).split())})')
    parts = _parts(str(bag), chunks, declarations, jobs, options)
    if len(parts) < 2:
        return single(f'{len(chunks)} chunks are too few to split {jobs} ways')
    executor = make_pool(len(parts)) if pool is None else pool
    try:
        futures = [executor.submit(_run_part, part) for part in parts]
        # Meanwhile, this process reads the whole bag as a single pass does, but for the
        # chunks' content: digests, read errors outside the chunks, declarations.
        try:
            scan = GhostBag(bag, cycle_window=cycle_window).scan()
        except Exception as err:  # noqa: BLE001 - a single pass raises what it raises
            for future in futures:
                future.cancel()
            return single(f'the bag cannot be scanned ({" ".join(str(err).split())})')
        results = [future.result() for future in futures]
    finally:
        if pool is None:
            executor.shutdown(cancel_futures=True)
    reason = _disagreement(bag, chunks, declarations, parts, results, scan)
    if reason is not None:
        return single(reason)
    merged = results[0].checks
    assert merged is not None
    for result in results[1:]:
        assert result.checks is not None
        _merge(merged, result.checks)
    topics = set(scan.topics)
    for result in results:
        topics |= result.topics
    info = BagInfo(
        files=scan.digests,
        ghost_topics=tuple(sorted(topics)),
        messages_total=scan.messages_seen + sum(sum(r.records.values()) for r in results),
        ghost_messages=sum(result.ghost_messages for result in results),
        cycles=sum(result.cycles for result in results),
        read_errors=(),
    )
    starts = tuple(result.start for result in results[1:] if result.start is not None)
    return merged.result(info, manifest), SplitRun(len(results), starts)


def _plan(bag: str | os.PathLike[str]) -> tuple[list[_Chunk], Declarations]:
    """Every chunk of the bag in reading order, and each file's summary declarations."""
    layout = resolve_bag(bag)
    if layout.missing or layout.metadata_missing:
        raise ValueError('the bag lacks a file or its metadata.yaml')
    chunks: list[_Chunk] = []
    declarations = []
    for index, path in enumerate(layout.files):
        with Path(path).open('rb') as handle:
            summary = make_reader(handle).get_summary()
        if summary is None or not summary.chunk_indexes:
            raise ValueError(f'{path.name} has no chunk index')
        for item in sorted(summary.chunk_indexes, key=lambda item: item.chunk_start_offset):
            chunks.append(_Chunk(index, item.chunk_start_offset, item.chunk_length,
                                 item.uncompressed_size))
        declarations.append((tuple(summary.schemas.values()),
                             tuple(summary.channels.values())))
    return chunks, tuple(declarations)


def _parts(bag: str, chunks: Sequence[_Chunk], declarations: Declarations, jobs: int,
           options: _Options) -> list[_Part]:
    """Cut the chunks into at most `jobs` runs of at least two chunks, of about equal size."""
    count = min(jobs, len(chunks) // 2)
    if count < 2:
        return []
    total = sum(max(chunk.size, 1) for chunk in chunks)
    starts = [0]
    running = 0
    for index, chunk in enumerate(chunks):
        if len(starts) < count and running >= total * len(starts) / count:
            if index - starts[-1] >= 2 and len(chunks) - index >= 2 * (count - len(starts)):
                starts.append(index)
        running += max(chunk.size, 1)
    starts.append(len(chunks))
    parts = []
    for index, (first, stop) in enumerate(zip(starts, starts[1:], strict=False)):
        parts.append(_Part(
            index=index, bag=bag, declarations=declarations, first=first,
            chunks=tuple(chunks[first:stop]),
            before=tuple(chunks[max(first - _BEFORE, 0):first]),
            after=tuple(chunks[stop:stop + _AFTER]),
            options=options,
        ))
    return parts


def _run_part(part: _Part) -> _PartResult:
    """Judge one part of the bag (in a worker process); see the module docstring."""
    result = _PartResult(part.index)
    try:
        _judge_part(part, result, Checks.new(
            min_outcomes=part.options.min_outcomes,
            downgrade_threshold=part.options.downgrade_threshold,
            cycle_window=part.options.cycle_window))
    except Exception as err:  # noqa: BLE001 - a single pass reports what went wrong
        result.problems.append(f'part {part.index}: {type(err).__name__}: '
                               f'{" ".join(str(err).split())}')
        result.checks = None
    return result


def _cycle_stamps(messages: Sequence[GhostMessage], result: _PartResult) -> list[int]:
    stamps = []
    for message in messages:
        if message.kind is GhostTopicKind.GATE:
            result.problems.append('the bag holds command gate records')
        else:
            stamps.append(message.stamp_ns)
    return stamps


def _judge_part(part: _Part, result: _PartResult, checks: Checks) -> None:
    reader = ChunkReader(part.bag, part.declarations, cycle_window=part.options.cycle_window)
    lateness = _Lateness(part.options.cycle_window)
    window = part.options.cycle_window
    seed: list[GhostMessage] = []
    start = None
    if part.before:
        # Back from the part's first chunk, until the outcomes read refill a history window.
        contents = []
        outcomes = 0
        for chunk in reversed(part.before):
            content = reader.read(*chunk.ref)
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
            return
        start = max(stamps)
        # The outcomes of the cycles after `floor` are all in the chunks read back or after
        # them (the parent checks that no earlier chunk holds a greater stamp than `floor`).
        head = _cycle_stamps(contents[0].messages[:_HEAD], result)
        floor = None if result.earliest == 0 else max(head) if head else None
        if result.earliest and floor is None:
            result.problems.append('no cycle message at the start of the chunks read back')
            return
        result.floor = floor
        seed = [message for content in contents for message in content.messages
                if message.kind is GhostTopicKind.OUTCOME
                and (floor is None or message.stamp_ns > floor)]
    result.start = start

    def own(message: GhostMessage, greater: int) -> None:
        if greater >= window - 1:
            result.problems.append(f'a message at {message.stamp_ns} ns comes {greater} '
                                   'cycles late (a single pass may reject it)')

    def read(chunk: _Chunk) -> list[GhostMessage]:
        content = reader.read(*chunk.ref)
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

    first = read(part.chunks[0])
    for message in first:
        if start is not None and message.stamp_ns <= start:
            if message.kind is GhostTopicKind.OUTCOME and (
                    result.floor is None or message.stamp_ns > result.floor):
                seed.append(message)
    if start is not None:
        # As a single pass is after the complete cycle B_k: nothing waits to be cut, the
        # history window holds the outcomes before (in cycle order), the lead-in is over.
        checks.baud.resume()
        checks.erur.resume()
        checks.tracer.resume()
        checks.completeness.resume()
        seed.sort(key=lambda message: message.stamp_ns)
        checks.history.resume(seed, complete=result.earliest == 0)
    maxima = [value for value in result.chunk_max if value is not None]
    end_holder: list[int] = []

    def owned() -> Iterator[GhostMessage]:
        # The part's messages in bag order: its chunks' messages of the cycles after B_k,
        # then those of the chunks after it up to B_(k+1).
        for position, chunk in enumerate(part.chunks):
            messages = first if position == 0 else read(chunk)
            if position and result.chunk_max[-1] is not None:
                maxima.append(result.chunk_max[-1])
            for message in messages:
                if message.kind is GhostTopicKind.GATE:
                    continue
                greater = lateness.see(message.stamp_ns)
                if start is None or message.stamp_ns > start:
                    own(message, greater)
                    yield message
                elif position == 0:
                    result.late += 1
                    if result.late_min is None or message.stamp_ns < result.late_min:
                        result.late_min = message.stamp_ns
                else:
                    result.problems.append(
                        f'a message of cycle {message.stamp_ns} ns comes after the first '
                        'chunk of the part after its own')
        if not part.after:
            return
        end = max(maxima) if maxima else None
        if end is None or (start is not None and end <= start):
            result.problems.append('no cycle of its own in the part')
            return
        end_holder.append(end)
        for chunk in part.after:
            for message in reader.read(*chunk.ref).messages:
                if message.kind is GhostTopicKind.GATE:
                    continue
                greater = lateness.see(message.stamp_ns)
                if (start is None or message.stamp_ns > start) and message.stamp_ns <= end:
                    result.taken_after += 1
                    own(message, greater)
                    yield message

    last: CycleEvent | None = None
    for event in group_events(owned(), part.options.cycle_window):
        if isinstance(event, GateRecord):
            result.problems.append('the bag holds command gate records')
            continue
        checks.feed(event)
        last = event
        result.cycles += 1
    if part.after:
        result.end = end_holder[0] if end_holder else None
        if last is None or last.stamp_ns != result.end or missing_kinds(last):
            result.problems.append('the part does not end with a complete cycle')
    result.problems.extend(reader.problems)
    result.problems.extend(checks.history.unsure)
    result.topics = reader.topics
    result.lead_in = checks.history.lead_in
    result.checks = checks


def _note_uses(result: _PartResult, file: int, uses: frozenset[int]) -> None:
    if uses:
        result.undeclared_uses.setdefault(file, set()).update(uses)


def _disagreement(
    bag: str | os.PathLike[str],
    chunks: Sequence[_Chunk],
    declarations: Declarations,
    parts: Sequence[_Part],
    results: Sequence[_PartResult],
    scan: BagScan,
) -> str | None:
    """Why the parts' results are not those of a single pass (None: they are)."""
    if scan.read_errors:
        return 'part of the bag cannot be read'
    for result in results:
        if result.problems or result.checks is None:
            return result.problems[0] if result.problems else 'a part failed'
    if not scan.topics and not any(result.topics for result in results):
        return 'no ghost topics'
    # The chunks, declarations and statistics of every file, as the scan read them.
    for index, item in enumerate(scan.files):
        planned = [(chunk.offset, chunk.length) for chunk in chunks if chunk.file == index]
        if list(item.chunks) != planned:
            return f'{item.name}: the chunk index does not list the chunks the file holds'
        if item.top_level_messages:
            return f'{item.name}: messages outside chunks'
        schemas, channels = declarations[index]
        if ({schema.id: schema for schema in item.schemas} != {s.id: s for s in schemas}
                or {c.id: c for c in item.channels} != {c.id: c for c in channels}):
            return f'{item.name}: declarations differ from its summary'
        declared = set(item.declared_early)
        for result in results:
            if result.undeclared_uses.get(index, set()) - declared:
                return f'{item.name}: a channel is used before it is declared'
            declared.update(result.declared.get(index, ()))
        statistics = item.statistics
        if statistics is not None:
            records = sum(result.records.get(index, 0) for result in results)
            per_channel: dict[int, int] = {}
            for result in results:
                for channel, count in result.per_channel.get(index, {}).items():
                    per_channel[channel] = per_channel.get(channel, 0) + count
            recorded = {key: value for key, value in statistics.channel_message_counts.items()
                        if value}
            if (statistics.message_count != records
                    or (recorded and recorded != per_channel)
                    or statistics.chunk_count != len(item.chunks)):
                return f"{item.name}: the summary's statistics differ from what was read"
    layout = resolve_bag(bag)
    total = scan.messages_seen + sum(sum(result.records.values()) for result in results)
    if layout.message_count is not None and layout.message_count != total:
        return 'metadata.yaml counts other messages'
    # The boundaries: B_k is the greatest cycle stamp of every chunk before part k.
    maxima: list[int | None] = []
    for result in results:
        maxima.extend(result.chunk_max)
    for part, result in zip(parts, results, strict=True):
        if part.index == 0:
            continue
        before = [value for value in maxima[:part.first] if value is not None]
        bound = max(before) if before else None
        previous = results[part.index - 1]
        if bound is None or result.start != bound or previous.end != bound:
            return f'part {part.index} does not start where part {part.index - 1} ends'
        earlier = [value for value in maxima[:result.earliest] if value is not None]
        if result.floor is not None and earlier and result.floor < max(earlier):
            return f'part {part.index} would miss outcomes of its history window'
        if result.late != previous.taken_after or (
                result.late_min is not None and previous.start is not None
                and result.late_min <= previous.start):
            return f'messages at the start of part {part.index} belong to no part'
    if results[0].lead_in:
        return 'the first part never verified a history (its lead-in goes on)'
    for result in results:
        assert result.checks is not None
        for name in ('baud', 'erur', 'tracer', 'completeness', 'history', 'conformance'):
            checker = getattr(result.checks, name)
            if _state_names(checker) != checker.ABSORBED_STATE:
                return f'{type(checker).__name__} has state this module does not merge'
    # The gate checker is not merged: a part that read a gate record said so above.
    return None


def _state_names(checker: object) -> frozenset[str]:
    names: set[str] = set(getattr(checker, '__dict__', {}))
    for klass in type(checker).__mro__:
        names.update(getattr(klass, '__slots__', ()))
    names.discard('__weakref__')
    names.discard('__dict__')
    return frozenset(names)


def _merge(checks: Checks, later: Checks) -> None:
    """Continue `checks` (one part of the bag) with `later` (the next part)."""
    checks.baud.absorb(later.baud)
    checks.erur.absorb(later.erur)
    checks.tracer.absorb(later.tracer)
    checks.completeness.absorb(later.completeness)
    checks.history.absorb(later.history)
    checks.conformance.absorb(later.conformance)
    # The gate checker saw no record (checked): the first part's says so for the bag.



