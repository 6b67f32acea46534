"""verify_all --jobs N on one bag: the bag cut into N parts, each judged by its own process.

The result is the one of a single pass, field for field: each part's checkers start in the
state a single pass has at that point, the parent merges the parts' checkers, and whatever
the parts could not know is checked afterwards; when a check fails, the bag is verified again
in a single pass (never a different answer, at worst the time of both). This module plans
the parts, runs them and checks and merges what they found; ``ghost_verify.split_part`` is what
one part does.

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

from collections.abc import Sequence
import concurrent.futures
from dataclasses import dataclass, fields
import logging
import multiprocessing
import os
from pathlib import Path
import threading

from mcap.reader import make_reader

from .bag import BagScan, DEFAULT_CYCLE_WINDOW, FileScan, GhostBag, resolve_bag
from .events import BagInfo
from .manifest import check_manifest, ManifestCheck
from .recovery import RecoveryChecker
from .rederive import RederivationReport
from .run_parameters import load_run_parameters, RunParameters
from .single_pass import Checks, rederive_following, VerificationResult, verify_single_pass
from .split_part import Chunk, Declarations, Part, PartOptions, PartResult, run_part

__all__ = ['Pool', 'SplitRun', 'make_pool', 'run_split', 'verify_split']

#: Where verify_split says why a bag was verified in a single pass (logging.INFO).
log = logging.getLogger(__name__)

#: What runs the parts: any executor of processes (verify_split makes one when none is given).
Pool = concurrent.futures.Executor

#: The chunks a part reads after its own (for the cycles it judges that end there).
_AFTER = 1
#: The most chunks before its own a part may read back to refill its history window.
_BEFORE = 64

_KNOWN_CHECKS = frozenset({'baud', 'erur', 'tracer', 'completeness', 'history', 'conformance',
                           'gate', 'parameters', 'recovery', 'strict'})


@dataclass(frozen=True, slots=True)
class SplitRun:
    """How run_split verified a bag: in how many parts, or why in a single pass.

    `starts` are the cycle stamps after which each part but the first judged (B_k).
    """

    parts: int
    starts: tuple[int, ...] = ()
    single_pass: str | None = None


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
    parameters: RunParameters,
    *,
    cycle_window: int = DEFAULT_CYCLE_WINDOW,
    manifest: ManifestCheck | None = None,
    strict: bool = False,
    pool: Pool | None = None,
    replay: bool = True,
) -> VerificationResult:
    """verify_all of `bag` with its chunks cut into `jobs` parts judged in parallel.

    Returns what ``verify_all(bag, ...)`` returns in a single pass (which is what runs when
    a split could not be exact, see the module docstring; `log` says why). With `replay`,
    this process re-derives the bag from its inputs while the parts run.
    """
    result, _ = run_split(bag, jobs, parameters, cycle_window=cycle_window, manifest=manifest,
                          strict=strict, pool=pool, replay=replay)
    return result


def run_split(
    bag: str | os.PathLike[str],
    jobs: int,
    parameters: RunParameters | None = None,
    *,
    cycle_window: int = DEFAULT_CYCLE_WINDOW,
    manifest: ManifestCheck | None = None,
    strict: bool = False,
    pool: Pool | None = None,
    replay: bool = True,
) -> tuple[VerificationResult, SplitRun]:
    """verify_split, and how the bag was split (or why it was verified in a single pass)."""
    if manifest is None:
        manifest = check_manifest(bag, None)
    if parameters is None:
        parameters = load_run_parameters(bag)
    options = PartOptions(parameters, cycle_window)

    def single(reason: str) -> tuple[VerificationResult, SplitRun]:
        log.info('%s: verified in a single pass: %s', bag, reason)
        assert parameters is not None
        return verify_single_pass(bag, manifest, parameters, cycle_window=cycle_window,
                                  strict=strict, replay=replay), SplitRun(1, single_pass=reason)

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
        futures = [executor.submit(run_part, part) for part in parts]
        # Meanwhile, this process reads the whole bag as a single pass does, but for the
        # chunks' content: digests, read errors outside the chunks, declarations.
        try:
            scan = GhostBag(bag, cycle_window=cycle_window).scan()
        except Exception as err:  # noqa: BLE001 - a single pass raises what it raises
            for future in futures:
                future.cancel()
            return single(f'the bag cannot be scanned ({" ".join(str(err).split())})')
        # And the re-derivation from the inputs, a pass of its own (it reads the bag for
        # what it needs; a single pass, when one runs below, does it again), with RECOVERY-v1
        # on the inputs it reads.
        replayed, recovery = (rederive_following(bag, cycle_window, parameters) if replay
                              else (None, None))
        results = [future.result() for future in futures]
    finally:
        if pool is None:
            executor.shutdown(cancel_futures=True)
    reason = _disagreement(bag, chunks, declarations, parts, results, scan)
    if reason is not None:
        return single(reason)
    return _merged_result(bag, results, scan, manifest, replayed, recovery)


def _merged_result(bag: str | os.PathLike[str], results: Sequence[PartResult], scan: BagScan,
                   manifest: ManifestCheck, replayed: RederivationReport | None = None,
                   recovery: RecoveryChecker | None = None,
                   ) -> tuple[VerificationResult, SplitRun]:
    """The parts' checkers merged into the result of a single pass, and how it was split."""
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
        last_log_time_ns=max((time for time in (scan.last_log_time_ns,
                                                *(r.last_log_time_ns for r in results))
                              if time is not None), default=None),
    )
    starts = tuple(result.start for result in results[1:] if result.start is not None)
    if recovery is not None:
        merged.recovery = recovery  # the same levels, and every input judged as read
    return (merged.result(info, manifest, replayed, bag=bag,
                          recovery_inputs_read=recovery is not None),
            SplitRun(len(results), starts))


def _plan(bag: str | os.PathLike[str]) -> tuple[list[Chunk], Declarations]:
    """Every chunk of the bag in reading order, and each file's summary declarations."""
    layout = resolve_bag(bag)
    if layout.missing or layout.metadata_missing:
        raise ValueError('the bag lacks a file or its metadata.yaml')
    chunks: list[Chunk] = []
    declarations = []
    for index, path in enumerate(layout.files):
        with Path(path).open('rb') as handle:
            summary = make_reader(handle).get_summary()
        if summary is None or not summary.chunk_indexes:
            raise ValueError(f'{path.name} has no chunk index')
        for item in sorted(summary.chunk_indexes, key=lambda item: item.chunk_start_offset):
            chunks.append(Chunk(index, item.chunk_start_offset, item.chunk_length,
                                 item.uncompressed_size))
        declarations.append((tuple(summary.schemas.values()),
                             tuple(summary.channels.values())))
    return chunks, tuple(declarations)


def _parts(bag: str, chunks: Sequence[Chunk], declarations: Declarations, jobs: int,
           options: PartOptions) -> list[Part]:
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
        parts.append(Part(
            index=index, bag=bag, declarations=declarations, first=first,
            chunks=tuple(chunks[first:stop]),
            before=tuple(chunks[max(first - _BEFORE, 0):first]),
            after=tuple(chunks[stop:stop + _AFTER]),
            options=options,
        ))
    return parts


def _disagreement(
    bag: str | os.PathLike[str],
    chunks: Sequence[Chunk],
    declarations: Declarations,
    parts: Sequence[Part],
    results: Sequence[PartResult],
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
    for index, item in enumerate(scan.files):
        reason = _file_disagreement(index, item, chunks, declarations, results)
        if reason is not None:
            return reason
    layout = resolve_bag(bag)
    total = scan.messages_seen + sum(sum(result.records.values()) for result in results)
    if layout.message_count is not None and layout.message_count != total:
        return 'metadata.yaml counts other messages'
    reason = _boundary_disagreement(parts, results)
    if reason is not None:
        return reason
    if results[0].lead_in:
        return 'the first part never verified a history (its lead-in goes on)'
    return _unmerged_state(results)


def _file_disagreement(
    index: int,
    item: FileScan,
    chunks: Sequence[Chunk],
    declarations: Declarations,
    results: Sequence[PartResult],
) -> str | None:
    """Why file `index` is not what the parts read: its chunks, declarations, statistics."""
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
    return None


def _boundary_disagreement(parts: Sequence[Part], results: Sequence[PartResult]) -> str | None:
    """Why the parts do not follow each other: B_k is the greatest cycle stamp before part k."""
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
    return None


def _unmerged_state(results: Sequence[PartResult]) -> str | None:
    """Which checker holds state that _merge would not carry over (None: none does)."""
    for result in results:
        assert result.checks is not None
        for name in ('baud', 'erur', 'tracer', 'completeness', 'history', 'conformance',
                     'parameters', 'recovery'):
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
    checks.parameters.absorb(later.parameters)
    checks.recovery.absorb(later.recovery)
    # The gate checker saw no record (checked): the first part's says so for the bag.



