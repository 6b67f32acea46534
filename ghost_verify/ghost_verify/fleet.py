"""verify_all on a fleet: many bags, each verified as ``verify_all BAG`` verifies one.

The work for one bag is :func:`verify_bag`: the manifest check, ``verify.verify_all`` and its
whole --json document, the lines ``verify_all BAG`` prints and its exit code, as plain data
(so it crosses a process, or a Dask worker, as it is; a new report of verify_all is in the
document without anything here knowing of it). :func:`verify_fleet` runs it for every bag, in
this process, in local processes (``--jobs N``) or on a Dask distributed cluster
(``--scheduler ADDRESS``: ``dask[distributed]``, imported only then), and returns the verdicts
in the order of the bags.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import concurrent.futures
from dataclasses import dataclass, replace
import json
import multiprocessing
import os
from pathlib import Path
import threading
import time
import traceback
from typing import Any, TYPE_CHECKING, TypeVar

from ghost_bag.errors import BagError
from ghost_bag.manifest import load_public_key, ManifestError
from ghost_core.cli import ExitCode
from ghost_core.properties import JsonValue

from .manifest import check_manifest

if TYPE_CHECKING:
    from .single_pass import VerificationResult

__all__ = [
    'BagVerdict',
    'FleetRun',
    'map_on_dask',
    'SchedulerError',
    'VerifyOptions',
    'verify_bag',
    'verify_bag_or_fault',
    'verify_fleet',
]

#: How long to wait for the Dask scheduler to answer.
SCHEDULER_TIMEOUT_S = 10.0

_Result = TypeVar('_Result')


class SchedulerError(RuntimeError):
    """The Dask scheduler cannot be used: dask[distributed] missing, or nothing answers."""


def make_pool(workers: int) -> concurrent.futures.ProcessPoolExecutor:
    """A pool of `workers` processes (forked when this process may fork: no other thread)."""
    methods = multiprocessing.get_all_start_methods()
    method = ('fork' if 'fork' in methods and threading.active_count() == 1
              else 'forkserver' if 'forkserver' in methods else 'spawn')
    return concurrent.futures.ProcessPoolExecutor(
        max_workers=workers, mp_context=multiprocessing.get_context(method))


@dataclass(frozen=True, slots=True)
class VerifyOptions:
    """What verify_all is asked for, for every bag (the command line's options)."""

    min_outcomes: int | None = None
    downgrade_threshold: int | None = None
    window_size: int | None = None
    cycle_window: int | None = None
    strict: bool = False
    replay: bool = True
    require_coverage: bool = False
    #: The Ed25519 public key (PEM file) the manifests are checked with; None: not checked.
    public_key: str | None = None
    prog: str = 'verify_all'


@dataclass(frozen=True, slots=True)
class BagVerdict:
    """What ``verify_all BAG`` found for one bag, as data.

    `lines` are what it prints (stdout), `errors` what it prints on stderr, `code` its exit
    code, `document` its --json document (None when the bag could not be read), `cycles`
    the cycles seen, `line` the one-line verdict a fleet run prints, `seconds` how long the
    bag took (not part of the document).
    """

    bag: str
    code: int
    lines: tuple[str, ...]
    errors: tuple[str, ...]
    document: dict[str, JsonValue] | None
    cycles: int
    line: str
    seconds: float = 0.0

    def to_json_line(self) -> str:
        """The bag's line of the fleet's --json output (JSON Lines: one object per bag)."""
        return json.dumps({'bag': self.bag, 'exit_code': self.code, 'report': self.document,
                           'error': ' '.join(self.errors) or None},
                          sort_keys=True, ensure_ascii=False) + '\n'


@dataclass(frozen=True, slots=True)
class FleetRun:
    """Every bag's verdict, in the order the bags were given, and how long they took."""

    verdicts: tuple[BagVerdict, ...]
    seconds: float
    workers: int

    @property
    def code(self) -> int:
        """The exit code of the run: the largest of the bags' (0 when every bag holds)."""
        return max((verdict.code for verdict in self.verdicts), default=ExitCode.OK)

    @property
    def cycles(self) -> int:
        """The cycles of every bag."""
        return sum(verdict.cycles for verdict in self.verdicts)

    def total_line(self) -> str:
        """The last line of a fleet run: counts, throughput, and which bags fail."""
        count = len(self.verdicts)
        failed = [verdict for verdict in self.verdicts if verdict.code != ExitCode.OK]
        seconds = max(self.seconds, 1e-9)
        line = (f'total: {count} bag{"s" if count != 1 else ""}, {self.cycles} cycles in '
                f'{self.seconds:.1f} s ({count / seconds:.2f} bags/s, '
                f'{self.cycles / seconds:.0f} cycles/s, {self.workers} '
                f'worker{"s" if self.workers != 1 else ""}): '
                f'{count - len(failed)} hold, {len(failed)} fail')
        if failed:
            line += ': ' + ', '.join(f'{verdict.bag} (exit {verdict.code})'
                                     for verdict in failed)
        return line


def _one_line(err: BaseException) -> str:
    return ' '.join(str(err).split())


def verify_bag(bag: str, options: VerifyOptions) -> BagVerdict:
    """Verify one bag as ``verify_all BAG`` does; return everything it would print or write."""
    from .verify import verify_all

    started = time.perf_counter()
    prog = options.prog
    public_key = None
    if options.public_key is not None:
        try:
            public_key = load_public_key(options.public_key)
        except ManifestError as err:
            message = f'{prog}: error: --public-key {err}'
            return BagVerdict(bag, ExitCode.USAGE, (), (message,), None, 0,
                              f'{bag}: exit {ExitCode.USAGE}: --public-key {err}')
    lines: list[str] = []
    # The manifest is checked before the bag is read: its verdict stands even when the bag
    # cannot be read at all.
    manifest = check_manifest(bag, public_key, options.public_key or '')
    if public_key is not None:
        lines.extend(manifest.summary_lines())
    extra: dict[str, Any] = {} if options.cycle_window is None else {
        'cycle_window': options.cycle_window}
    try:
        result = verify_all(bag, min_outcomes=options.min_outcomes,
                            downgrade_threshold=options.downgrade_threshold,
                            window_size=options.window_size,
                            manifest=manifest, strict=options.strict, replay=options.replay,
                            **extra)
    except BagError as err:
        unread = ExitCode.VIOLATED if not manifest.ok else ExitCode.BAD_INPUT
        return BagVerdict(bag, unread, tuple(lines), (f'{prog}: error: {_one_line(err)}',),
                          None, 0, f'{bag}: exit {int(unread)}: {_one_line(err)}',
                          time.perf_counter() - started)
    lines.extend(result.summary_lines())
    if public_key is None:
        lines.extend(manifest.summary_lines())
    code, line = _verdict(bag, result, manifest.ok, options.require_coverage, lines)
    lines.append(result.verdict_line(options.require_coverage))
    document: dict[str, JsonValue] = {**result.to_json(), 'lines': list(lines),
                                      'exit_code': int(code)}
    return BagVerdict(bag, code, tuple(lines), (), document,
                      result.completeness.cycles_seen, line, time.perf_counter() - started)


def verify_bag_or_fault(bag: str, options: VerifyOptions) -> BagVerdict:
    """:func:`verify_bag`, with an internal fault turned into that bag's verdict (exit 4).

    For a fleet: one bag that trips a fault gets its own line, and the others are verified
    (the traceback goes to ``$GHOST_FAULT_LOG`` when set, as ``ghost_core.cli.guarded`` does).
    """
    started = time.perf_counter()
    try:
        return verify_bag(bag, options)
    except Exception as err:  # noqa: BLE001 - one bag's fault must not cost the others theirs
        where = os.environ.get('GHOST_FAULT_LOG')
        if where:
            with open(where, 'a', encoding='utf-8') as log:
                traceback.print_exc(file=log)
        fault = f'internal fault ({type(err).__name__}: {_one_line(err)})'
        return BagVerdict(bag, ExitCode.FAULT, (), (f'{options.prog}: error: {fault}',), None,
                          0, f'{bag}: exit {int(ExitCode.FAULT)}: {fault}',
                          time.perf_counter() - started)


def _verdict(bag: str, result: VerificationResult, manifest_ok: bool, require_coverage: bool,
             lines: list[str]) -> tuple[int, str]:
    """The exit code of a verified bag and its one line (a coverage failure adds to `lines`)."""
    code: int = ExitCode.OK
    reasons = [line.split(':', 1)[0] for line in result.summary_lines() if 'VIOLATED' in line]
    if not manifest_ok:
        reasons.append('manifest')
    if result.incomplete_input:
        reasons.append('input incomplete')
    if not result.holds:
        code = ExitCode.VIOLATED
    else:
        uncovered = result.uncovered()
        if require_coverage and uncovered:
            lines.append(f'precondition never held: {", ".join(uncovered)} '
                         '(--require-coverage)')
            reasons.append('coverage')
            code = ExitCode.VIOLATED
    seen = f'{result.completeness.cycles_seen} cycles'
    if result.cycles_unverifiable:
        seen += f', {result.cycles_unverifiable} unverifiable'
    if code == ExitCode.OK:
        return code, f'{bag}: holds ({seen})'
    return code, (f'{bag}: fails, exit {code} ({seen}): '
                  f'{", ".join(reasons) or "see its report"}')


def verify_fleet(
    bags: Sequence[str | os.PathLike[str]],
    options: VerifyOptions,
    *,
    jobs: int = 1,
    scheduler: str | None = None,
    each: Callable[[BagVerdict], None] | None = None,
) -> FleetRun:
    """Verify every bag (each as one ``verify_all BAG``, one process per bag at a time).

    In this process with ``jobs`` 1, in `jobs` local processes otherwise, or on the Dask
    distributed cluster whose scheduler listens at `scheduler` (its workers must see the
    bags at the same paths). `each` is called with every verdict, in the order of `bags`,
    as soon as it and those before it are in.
    """
    names = [os.fspath(bag) for bag in bags]
    started = time.perf_counter()
    verdicts: list[BagVerdict] = []

    def collect(verdict: BagVerdict) -> None:
        verdicts.append(verdict)
        if each is not None:
            each(verdict)

    if scheduler is not None:
        workers = _on_dask(names, options, scheduler, collect)
    elif jobs > 1 and len(names) > 1:

        workers = min(jobs, len(names))
        with make_pool(workers) as executor:
            for verdict in executor.map(verify_bag_or_fault, names, [options] * len(names)):
                collect(verdict)
    else:
        workers = 1
        for name in names:
            collect(verify_bag_or_fault(name, options))
    return FleetRun(tuple(verdicts), time.perf_counter() - started, workers)


def _on_dask(names: Sequence[str], options: VerifyOptions, scheduler: str,
             collect: Callable[[BagVerdict], None]) -> int:
    """Run verify_bag for every bag on the Dask cluster at `scheduler`; return its workers."""
    # The workers open the bags themselves: give them paths that do not depend on where
    # this command runs from.
    absolute = [str(Path(name).absolute()) for name in names]
    given = iter(names)
    return map_on_dask(verify_bag_or_fault, absolute, scheduler,
                       lambda verdict: collect(_renamed(verdict, next(given))), options=options)


def map_on_dask(function: Callable[..., _Result], items: Sequence[Any], scheduler: str,
                collect: Callable[[_Result], None], **kwargs: Any) -> int:
    """``function(item, **kwargs)`` for every item on the Dask cluster at `scheduler`.

    `collect` gets the results in the order of `items`, each as soon as it and those before
    it are in; returns the cluster's worker count. SchedulerError when dask[distributed] is
    not installed or no scheduler answers at `scheduler`; an exception `function` raises is
    raised here.
    """
    try:
        from distributed import Client
    except ImportError as err:
        raise SchedulerError(f'needs dask[distributed] ({err}); pip install -r '
                             'requirements.txt (or requirements-ros.txt)') from err
    try:
        client = Client(scheduler, set_as_default=False,  # type: ignore[no-untyped-call]
                        timeout=SCHEDULER_TIMEOUT_S)
    except (OSError, TimeoutError, ValueError) as err:
        raise SchedulerError(f'no Dask scheduler answers at {scheduler} ({_one_line(err)})'
                             ) from err
    with client:
        workers = max(len(client.scheduler_info().get('workers', {})), 1)
        futures = client.map(function, items, pure=False, **kwargs)
        for future in futures:
            collect(future.result())
    return workers


def _renamed(verdict: BagVerdict, name: str) -> BagVerdict:
    """The verdict with the bag named as it was given (the workers saw its absolute path)."""
    if verdict.bag == name:
        return verdict
    line = name + verdict.line[len(verdict.bag):] if verdict.line.startswith(verdict.bag) \
        else verdict.line
    return replace(verdict, bag=name, line=line)
