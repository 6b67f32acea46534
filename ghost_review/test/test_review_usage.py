"""ghost_review speaks ghost_core.cli: --help, --version, one-line errors and exit codes.

Every bad input or usage is one line on stderr naming the tool, with the exit code of
docs/cli.md (2 usage, 3 unusable input, 4 internal fault, 130 interrupted), never a
traceback, and leaves nothing at the output nor beside it. The progress is tqdm's bar on a
terminal and a periodic status line otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
import io
from pathlib import Path
import subprocess
import sys
import time

from ghost_review_test.review_bags import write_scenario_inputs
import pytest

from ghost_core.cli import EXIT_CODES_HELP, ExitCode
from ghost_review import fleet, px4
from ghost_review.cli import main
from ghost_review.errors import ReviewInputError, ReviewUsageError
from ghost_review.progress import FleetProgress

pytestmark = pytest.mark.bag


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, '-m', 'ghost_review', *args], capture_output=True,
                          text=True, check=False, timeout=120)


def _nothing_written(folder: Path) -> bool:
    """Neither the output nor a staging folder beside it."""
    return not (folder / 'out').exists() and not list(folder.glob('.out.*'))


def test_help_ends_with_the_exit_codes_and_version_names_the_tool() -> None:
    """--help and --version: exit 0; the help ends with ghost_core.cli's exit codes."""
    helped = _run('--help')
    assert helped.returncode == 0 and helped.stderr == ''
    words = ' '.join(helped.stdout.split())
    assert words.endswith(EXIT_CODES_HELP)
    for flag in ('--output', '-o', '--params-file', '--jobs', '-j', '--scheduler', '--version'):
        assert f' {flag}' in words, flag
    versioned = _run('--version')
    assert versioned.returncode == 0 and versioned.stderr == ''
    assert versioned.stdout.startswith('ghost_review ') and versioned.stdout.count('\n') == 1


def _text(folder: Path) -> str:
    (folder / 'notes.txt').write_text('not a flight\n', encoding='utf-8')
    return str(folder / 'notes.txt')


def _bytes(name: str) -> Callable[[Path], str]:
    def make(folder: Path) -> str:
        (folder / name).write_bytes(b'abc')
        return str(folder / name)
    return make


def _empty(folder: Path) -> str:
    (folder / 'empty').mkdir()
    return str(folder / 'empty')


def _truncated_bag(folder: Path) -> str:
    """An input bag cut short inside its first chunk."""
    bag = write_scenario_inputs(folder / 'whole')
    (mcap,) = bag.glob('*.mcap')
    cut = folder / 'cut.mcap'
    cut.write_bytes(mcap.read_bytes()[:600])
    return str(cut)


OUT = ('-o', 'OUT')

#: (case, the input it makes, the arguments after it (OUT: the output), exit code, what the
#: line says)
BAD = [
    ('nonexistent path', lambda folder: str(folder / 'missing'), OUT, ExitCode.BAD_INPUT,
     'no such file or directory'),
    ('empty folder', _empty, OUT, ExitCode.BAD_INPUT,
     'a folder with no flight log (PX4 ULog, ArduPilot .bin) and no bag'),
    ('text file', _text, OUT, ExitCode.BAD_INPUT,
     'neither a flight log (PX4 ULog, ArduPilot DataFlash) nor a rosbag2 bag'),
    ('file of 3 bytes', _bytes('three'), OUT, ExitCode.BAD_INPUT,
     'neither a flight log (PX4 ULog, ArduPilot DataFlash) nor a rosbag2 bag'),
    ('.ulg of 3 bytes', _bytes('three.ulg'), OUT, ExitCode.BAD_INPUT,
     'three.ulg: not a ULog file'),
    ('.mcap of 3 bytes', _bytes('three.mcap'), OUT, ExitCode.BAD_INPUT,
     'three.mcap: cannot be read as a bag: bad magic bytes'),
    ('truncated bag', _truncated_bag, OUT, ExitCode.BAD_INPUT,
     'cut.mcap: cannot be read as a bag: the file ends at byte 600'),
    ('--jobs 0', _empty, (*OUT, '--jobs', '0'), ExitCode.USAGE,
     'argument --jobs/-j: must be a finite number > 0, got 0 (see --help)'),
    ('--jobs x', _empty, (*OUT, '--jobs', 'x'), ExitCode.USAGE,
     "argument --jobs/-j: not a int: 'x' (see --help)"),
    ('-j -1', _empty, (*OUT, '-j', '-1'), ExitCode.USAGE, 'argument --jobs/-j'),
    ('--jobs with --scheduler', _empty, (*OUT, '-j', '1', '--scheduler', 'tcp://127.0.0.1:9'),
     ExitCode.USAGE, '--jobs and --scheduler: give one'),
    ('blank --scheduler', _empty, (*OUT, '--scheduler', ' '), ExitCode.USAGE,
     'argument --scheduler: an empty address'),
    ('missing --params-file', _empty, (*OUT, '--params-file', 'nowhere.yaml'), ExitCode.USAGE,
     '--params-file: '),
    ('no --output', _empty, (), ExitCode.USAGE,
     'the following arguments are required: --output/-o'),
]


@pytest.mark.parametrize(('case', 'make', 'args', 'code', 'says'), BAD,
                         ids=[row[0] for row in BAD])
def test_a_bad_input_or_usage_is_one_line_and_its_exit_code(
        tmp_path: Path, case: str, make: Callable[[Path], str], args: tuple[str, ...],
        code: ExitCode, says: str) -> None:
    """Exit 2 or 3, exactly one line `ghost_review: error: ...`, no traceback, no output."""
    output = str(tmp_path / 'out')
    done = _run(make(tmp_path), *(output if arg == 'OUT' else arg for arg in args))
    assert done.returncode == code, (case, done.stderr)
    assert done.stderr.startswith('ghost_review: error: '), done.stderr
    assert done.stderr.count('\n') == 1 and done.stderr.endswith('\n'), done.stderr
    assert 'Traceback' not in done.stderr
    assert says in done.stderr, done.stderr
    assert done.stdout == ''
    assert _nothing_written(tmp_path)


def test_an_existing_output_is_a_usage_error(tmp_path: Path) -> None:
    """The output folder is never overwritten: exit 2, one line, left as it was."""
    (tmp_path / 'out').mkdir()
    (tmp_path / 'out' / 'mine.txt').write_text('kept\n', encoding='utf-8')
    done = _run(str(tmp_path / 'out'), '--output', str(tmp_path / 'out'))
    assert done.returncode == ExitCode.USAGE and done.stderr.count('\n') == 1
    assert done.stderr.startswith('ghost_review: error: ') and 'exists' in done.stderr
    assert 'Traceback' not in done.stderr
    assert [path.name for path in (tmp_path / 'out').iterdir()] == ['mine.txt']


@pytest.mark.parametrize(('raised', 'code', 'says'), [
    (KeyboardInterrupt(), ExitCode.INTERRUPTED, 'ghost_review: error: interrupted\n'),
    (ZeroDivisionError('a bug'), ExitCode.FAULT,
     'ghost_review: error: internal fault (ZeroDivisionError: a bug); '),
])
def test_a_review_stopped_midway_leaves_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        raised: BaseException, code: ExitCode, says: str) -> None:
    """Ctrl-C or a fault after a flight's files are half written: one line, nothing left."""
    source = write_scenario_inputs(tmp_path / 'drift')

    def stops(flight: object, folder: Path, *_: object) -> object:
        (folder / 'report.html').write_text('<html', encoding='utf-8')  # half written
        raise raised

    monkeypatch.setattr(fleet, 'review_flight', stops)
    monkeypatch.delenv('GHOST_FAULT_LOG', raising=False)
    assert main([str(source), '-o', str(tmp_path / 'out')]) == code
    captured = capsys.readouterr()
    assert captured.err.startswith(says) and captured.err.count('\n') == 1, captured.err
    assert captured.out == ''
    assert _nothing_written(tmp_path)


@pytest.mark.parametrize(('exit_code', 'raised'), [
    (ExitCode.BAD_INPUT, ReviewInputError), (ExitCode.USAGE, ReviewUsageError),
    (ExitCode.INTERRUPTED, KeyboardInterrupt), (ExitCode.FAULT, RuntimeError)])
def test_the_importers_exit_code_becomes_the_reviews_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exit_code: ExitCode,
        raised: type[BaseException]) -> None:
    """An unusable log is an input error; Ctrl-C in the importer stops the review."""
    pytest.importorskip('ghost_px4')
    from ghost_px4 import ulog_import

    def importer(argv: list[str]) -> int:
        print(f'ghost_import: error: {argv[0]}: what went wrong', file=sys.stderr)
        return int(exit_code)

    monkeypatch.setattr(ulog_import, 'main', importer)
    with pytest.raises(raised):
        px4.import_ulog(tmp_path / 'log.ulg', tmp_path / 'input')


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_not_a_terminal_gets_a_status_line_now_and_then() -> None:
    """No bar; while no flight comes in, `<tool>: N/M flights reviewed, T s` every every_s."""
    stream = io.StringIO()
    with FleetProgress('ghost_review', 2, Path('DIR'), stream=stream, every_s=0.05) as progress:
        progress.start()
        time.sleep(0.4)
    lines = stream.getvalue().splitlines()
    assert len(lines) >= 2 and '\r' not in stream.getvalue()
    assert all(line.startswith('ghost_review: 0/2 flights reviewed, ') and line.endswith(' s')
               for line in lines), lines


def test_a_terminal_gets_a_tqdm_bar_and_errors_above_it() -> None:
    """A bar (tqdm) that is taken away at the end; an error is a whole line of its own."""
    stream = _Terminal()
    with FleetProgress('ghost_review', 2, Path('DIR'), stream=stream) as progress:
        progress.error('a.txt: neither a PX4 ULog nor a rosbag2 bag')
        progress.start()
        progress.flight(fleet.FlightOutcome('a', None, 'b.mcap: cut short'))
    text = stream.getvalue()
    assert text.startswith('ghost_review: error: a.txt: neither a PX4 ULog nor a rosbag2 '
                           'bag\n')
    assert '\rghost_review:   0%|' in text and '1/2 [' in text and 'flight' in text
    assert '\rghost_review: error: b.mcap: cut short\n' in text
    assert text.endswith('\r')  # the bar is cleared (leave=False): the summary follows


def test_a_json_report_is_one_flights(tmp_path: Path) -> None:
    """--json writes one flight's verification: several flights are a usage error."""
    for name in ('a', 'b'):
        write_scenario_inputs(tmp_path / 'inputs' / name, 'smoke')
    assert main([str(tmp_path / 'inputs'), '--output', str(tmp_path / 'review'),
                 '--json', str(tmp_path / 'r.json')]) == ExitCode.USAGE
    assert not (tmp_path / 'review').exists() and not (tmp_path / 'r.json').exists()
    assert main([str(tmp_path / 'inputs' / 'a'), '--output', str(tmp_path / 'one'),
                 '--json', str(tmp_path / 'r.json')]) == ExitCode.OK
    report = (tmp_path / 'r.json').read_text(encoding='utf-8')
    assert '"exit_code": 0' in report and '"VERIFIED' in report
