"""Many flights reviewed: one at a time, in local processes (--jobs) or on Dask (--scheduler).

The work for one flight is :func:`review_one`: its folder made, the flight prepared, read and
verified, report.html and decisions.csv written, and what the index needs sent back as plain
data (so it crosses a process, or a Dask worker, as it is). :func:`review_fleet` runs it for
every flight and hands the outcomes over in the order of the flights, whatever ran them, so
the index and every file are the same either way. The Dask path is ghost_verify's
(``ghost_verify.fleet.map_on_dask``: the same SchedulerError, the same dask[distributed]).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
import os
from pathlib import Path
import shutil
import time

from ghost_core.pipeline import PipelineConfig
from ghost_verify.fleet import VerifyOptions

from .csv_out import decisions_csv
from .errors import ReviewInputError
from .report import report_html
from .review import FlightInput, FlightReview, review_flight

__all__ = ['FlightOutcome', 'review_fleet', 'review_one']


@dataclass(frozen=True, slots=True)
class FlightOutcome:
    """One flight's review (None when it could not be read: `error` says why)."""

    name: str
    review: FlightReview | None
    error: str | None
    #: report.html's size in bytes (0 without a review).
    report_bytes: int = 0
    #: How long the flight took where it ran (not part of any output).
    seconds: float = 0.0


def review_one(flight: FlightInput, folder: str, config: PipelineConfig,
               config_source: str, verify: VerifyOptions | None = None) -> FlightOutcome:
    """Review `flight` into `folder` (created; removed again when the input cannot be read)."""
    started = time.perf_counter()
    path = Path(folder)
    path.mkdir()
    try:
        done = review_flight(flight, path, config, config_source, verify)
    except ReviewInputError as err:
        shutil.rmtree(path)
        return FlightOutcome(flight.name, None, str(err), 0, time.perf_counter() - started)
    thresholds = done.config.pipeline.thresholds if done.config.pipeline else None
    (path / 'decisions.csv').write_text(decisions_csv(done.data.cycles, thresholds),
                                        encoding='utf-8')
    report = report_html(done).encode('utf-8')
    (path / 'report.html').write_bytes(report)
    return FlightOutcome(flight.name, done, None, len(report), time.perf_counter() - started)


def review_fleet(flights: Sequence[FlightInput], staging: Path, config: PipelineConfig,
                 config_source: str, *, jobs: int = 1, scheduler: str | None = None,
                 each: Callable[[FlightOutcome], None] | None = None,
                 started: Callable[[], None] | None = None,
                 verify: VerifyOptions | None = None) -> list[FlightOutcome]:
    """Review every flight into ``staging/<name>``; the outcomes in the order of `flights`.

    In this process with `jobs` 1, in `jobs` local processes otherwise, or on the Dask
    cluster whose scheduler listens at `scheduler` (its workers must see the inputs and
    `staging` at the same paths; SchedulerError when none answers). `each` gets every
    outcome, in order, as soon as it and those before it are in. `started` is called once,
    when the work is handed out: after the local processes are forked (a process with more
    than one thread does not fork them: ghost_verify.fleet.make_pool), so it may start threads.
    """
    # Paths that do not depend on the working directory of whatever runs the flight.
    staged = [replace(flight, path=flight.path.absolute()) for flight in flights]
    folders = [os.fspath((staging / flight.name).absolute()) for flight in flights]
    outcomes: list[FlightOutcome] = []

    def collect(outcome: FlightOutcome) -> None:
        outcomes.append(outcome)
        if each is not None:
            each(outcome)

    def begin() -> None:
        if started is not None:
            started()

    if scheduler is not None:
        from ghost_verify.fleet import map_on_dask

        begin()
        map_on_dask(_review_staged, list(zip(staged, folders, strict=True)), scheduler,
                    collect, config=config, config_source=config_source, verify=verify)
    elif jobs > 1 and len(staged) > 1:
        from ghost_verify.fleet import make_pool

        with make_pool(min(jobs, len(staged))) as executor:
            # map submits every flight at once: the processes exist when it returns.
            done = executor.map(review_one, staged, folders, [config] * len(staged),
                                [config_source] * len(staged), [verify] * len(staged))
            begin()
            for outcome in done:
                collect(outcome)
    else:
        begin()
        for flight, folder in zip(staged, folders, strict=True):
            collect(review_one(flight, folder, config, config_source, verify))
    return outcomes


def _review_staged(job: tuple[FlightInput, str], config: PipelineConfig,
                   config_source: str, verify: VerifyOptions | None) -> FlightOutcome:
    """review_one of a (flight, folder) pair (Dask maps over one sequence)."""
    flight, folder = job
    return review_one(flight, folder, config, config_source, verify)
