"""One flight reviewed: its input found and prepared (imported, replayed), read and verified.

An input is a PX4 ULog or an ArduPilot DataFlash log (imported with ghost_import, then
replayed), an input bag
(/state/nav and /observations: replayed with ghost.replay), a Ghost bag (read as it is), or a
folder of any of these. Bags are read through ghost_bag and ghost_verify only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import os
from pathlib import Path

from ghost_bag.errors import BagError
from ghost_bag.layout import resolve_bag
from ghost_core.errors import GhostError
from ghost_core.pipeline import PipelineConfig
from ghost_core.properties import JsonValue
from ghost_verify import GhostBag
from ghost_verify.fleet import verify_bag, VerifyOptions

from .ardupilot import dataflash_log_info, is_dataflash
from .config import resolve_config, ReviewConfig
from .episodes import Episode, episodes
from .errors import ReviewInputError
from .events import LogInfo
from .flight import FlightData, read_flight
from .px4 import import_ulog, log_info
from .verdict import Verdict, verdict_of

__all__ = ['SHARED_GNSS', 'FlightInput', 'FlightReview', 'find_inputs', 'fixes_note',
           'review_flight']

_ULOG_MAGIC = b'ULog\x01\x12\x35'
ULOG, INPUT_BAG, GHOST_BAG = 'PX4 ULog', 'input bag', 'Ghost bag'
DATAFLASH = 'ArduPilot DataFlash log'
_STATE_TYPE = 'nav_msgs/msg/Odometry'


@dataclass(frozen=True, slots=True)
class FlightInput:
    """One flight to review: its path, what it is, its name in the output, its path as given."""

    path: Path
    kind: str
    name: str
    #: The path as the user gave it (the report shows it); '': `path`.
    shown: str = ''


@dataclass(frozen=True, slots=True)
class FlightReview:
    """Everything the report and the index show of one flight."""

    name: str
    source: str
    bag: Path
    log: LogInfo | None
    data: FlightData
    config: ReviewConfig
    verdict_lines: tuple[str, ...]
    verdict_code: int
    episodes: tuple[Episode, ...]
    warnings: tuple[str, ...] = ()
    #: verify_all's JSON report of the bag (with its printed lines), None when unreadable.
    verdict_document: dict[str, JsonValue] | None = None
    #: The verdict at a glance (word, limits, where it first failed).
    verdict: Verdict | None = None
    #: One line when the fixes are not independent of the estimator ('' otherwise).
    fixes_note: str = ''

    @property
    def glance(self) -> Verdict:
        """The verdict at a glance (built from the verification when not given)."""
        if self.verdict is not None:
            return self.verdict
        return verdict_of(self.verdict_lines, self.verdict_code, self.verdict_document)


#: The limit a flight whose fixes are the GNSS its estimator fuses is verified with.
SHARED_GNSS = 'fixes not independent of the estimator'


def fixes_note(log: LogInfo | None, data: FlightData) -> str:
    """One line when the fixes the outcomes used are the GNSS the log's estimator fuses."""
    if log is None or log.fixes is None or not log.fixes.fused \
            or not any(row.fix_stamp_ns is not None for row in data.cycles):
        return ''
    return (f"The fixes are this log's {log.fixes.topic}, the GNSS its estimator fuses "
            f'({log.fixes.why}): the check sees the estimator depart from its own GNSS, not a '
            'GNSS fault. An independent source (RTK GNSS in the map frame, motion capture, '
            'vision) would check the position itself.')


def _is_ulog(path: Path) -> bool:
    if not path.is_file():
        return False
    if path.suffix.lower() == '.ulg':
        return True
    try:
        with path.open('rb') as handle:
            return handle.read(len(_ULOG_MAGIC)) == _ULOG_MAGIC
    except OSError:
        return False


def _bag_kind(path: Path) -> str:
    """GHOST_BAG or INPUT_BAG; ReviewInputError when the bag is neither."""
    try:
        scan = GhostBag(path).scan()
    except (BagError, OSError) as err:
        raise ReviewInputError(f'{path}: {err}') from err
    if scan.topics:
        return GHOST_BAG
    if any(type_name.endswith('Odometry') for _, type_name in scan.other_topics):
        return INPUT_BAG
    if scan.read_errors:
        # Nothing usable read: say why (not an MCAP file, cut short), not what is missing.
        first = scan.read_errors[0]
        where = '' if path.is_file() else f'{first.file}: '
        raise ReviewInputError(f'{path}: cannot be read as a bag: {where}{first.detail}')
    raise ReviewInputError(f'{path}: a bag with neither Ghost topics nor a {_STATE_TYPE} '
                           'belief to replay')


def _is_bag(path: Path) -> bool:
    try:
        resolve_bag(path)
    except (BagError, OSError):
        return False
    return path.suffix == '.mcap' or path.is_dir()


def _classify(path: Path, errors: list[str]) -> list[tuple[Path, str]]:
    """The flights at `path`; a folder's unusable entries go to `errors`, not the folder."""
    if not path.exists():
        raise ReviewInputError(f'{path}: no such file or directory')
    if _is_ulog(path):
        return [(path, ULOG)]
    if is_dataflash(path):
        return [(path, DATAFLASH)]
    if _is_bag(path):
        return [(path, _bag_kind(path))]
    if path.is_dir():
        found = []
        for child in sorted(path.iterdir()):
            if _is_ulog(child) or is_dataflash(child) or (
                    child.suffix == '.mcap' and child.is_file()) or (
                    child.is_dir() and _is_bag(child)):
                try:
                    found.extend(_classify(child, errors))
                except ReviewInputError as err:
                    errors.append(str(err))
        if not found and not errors:
            raise ReviewInputError(f'{path}: a folder with no flight log (PX4 ULog, ArduPilot '
                                   '.bin) and no bag in it')
        return found
    raise ReviewInputError(f'{path}: neither a flight log (PX4 ULog, ArduPilot DataFlash) nor '
                           'a rosbag2 bag')


def find_inputs(paths: Sequence[Path]) -> tuple[list[FlightInput], list[str]]:
    """The flights of `paths` (folders expanded, in order), and one error per unusable path."""
    flights: list[FlightInput] = []
    errors: list[str] = []
    names: set[str] = set()
    for given in paths:
        try:
            found = _classify(given, errors)
        except ReviewInputError as err:
            errors.append(str(err))
            continue
        for path, kind in found:
            base = (path.stem if path.is_file() else path.name) or 'flight'
            name, number = base, 2
            while name in names:
                name, number = f'{base}-{number}', number + 1
            names.add(name)
            flights.append(FlightInput(path, kind, name, str(path)))
    return flights, errors


def _replay(input_bag: Path, output: Path, config: PipelineConfig) -> None:
    from ghost.replay import replay_bag

    try:
        replay_bag(input_bag, output, config)
    except (BagError, GhostError, OSError, ValueError) as err:
        raise ReviewInputError(f'{input_bag}: cannot be replayed: {err}') from err


def review_flight(flight: FlightInput, folder: Path, config: PipelineConfig,
                  config_source: str, verify: VerifyOptions | None = None) -> FlightReview:
    """Prepare the flight's Ghost bag in `folder` (unless it is one), read and verify it."""
    warnings: list[str] = []
    log = None
    if flight.kind in (ULOG, DATAFLASH):
        # The importer names the log by the path it was given; say it as the user did.
        def shown(text: str) -> str:
            return text.replace(str(flight.path), flight.shown or str(flight.path))

        try:
            log = (log_info(flight.path) if flight.kind == ULOG
                   else dataflash_log_info(flight.path))
            warnings += [shown(warning)
                         for warning in import_ulog(flight.path, folder / 'input')]
        except ReviewInputError as err:
            raise ReviewInputError(shown(str(err))) from err
        bag = folder / 'bag'
        _replay(folder / 'input', bag, config)
    elif flight.kind == INPUT_BAG:
        bag = folder / 'bag'
        _replay(flight.path, bag, config)
    else:
        bag = flight.path
    try:
        data = read_flight(bag)
    except (BagError, OSError) as err:
        raise ReviewInputError(f'{bag}: {err}') from err
    review_config = resolve_config(bag, data.thresholds_sha256, config, config_source)
    verdict = verify_bag(os.fspath(bag), verify or VerifyOptions(prog='ghost_review'))
    lines = verdict.lines + verdict.errors
    found = episodes(data.cycles,
                     review_config.pipeline.thresholds if review_config.pipeline else None)
    source = f'{flight.kind} {flight.shown or flight.path}'
    if flight.kind != GHOST_BAG:
        source += f' (replayed into {flight.name}/bag)'
    note = fixes_note(log, data)
    glance = verdict_of(lines, verdict.code, verdict.document, [SHARED_GNSS] if note else [])
    return FlightReview(flight.name, source, bag, log, data, review_config, lines,
                        verdict.code, found, tuple(warnings),
                        None if verdict.document is None else dict(verdict.document),
                        glance, note)
