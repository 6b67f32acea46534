"""ghost_review over several flights: one process, --jobs 2 and a Dask cluster give the same files.

Three input bags (two scenarios, one twice under another name) and one unreadable input are
reviewed three ways; the index and every flight's report.html and decisions.csv must be
byte-identical, and the lines per flight (not a terminal) the same and in input order.
"""

from collections.abc import Iterator
from pathlib import Path
import re

from distributed import LocalCluster
from ghost_review_test.review_bags import SCENARIO_PARAMS, write_scenario_inputs
import pytest

from ghost_core.cli import ExitCode
from ghost_review.cli import main

pytestmark = pytest.mark.bag

FLIGHT_FILES = ('report.html', 'decisions.csv')


@pytest.fixture(scope='module')
def inputs(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Three input bags and a file that is no flight."""
    folder = tmp_path_factory.mktemp('fleet')
    made = [write_scenario_inputs(folder / 'drift'),
            write_scenario_inputs(folder / 'nominal', 'nominal'),
            write_scenario_inputs(folder / 'drift_again')]
    (folder / 'notes.txt').write_text('not a flight\n', encoding='utf-8')
    return [str(path) for path in made] + [str(folder / 'notes.txt')]


def _review(inputs: list[str], output: Path, capsys: pytest.CaptureFixture[str],
            *extra: str) -> tuple[int, list[str], str]:
    params = [arg for path in SCENARIO_PARAMS for arg in ('--params-file', str(path))]
    code = main([*inputs, '--output', str(output), *params, *extra])
    captured = capsys.readouterr()
    return code, captured.out.replace(str(output), 'DIR').splitlines(), captured.err


def _files(output: Path) -> dict[str, bytes]:
    return {str(path.relative_to(output)): path.read_bytes() for path in sorted(
        output.rglob('*')) if path.name in (*FLIGHT_FILES, 'index.html')}


@pytest.fixture(scope='module')
def threads_cluster() -> Iterator[LocalCluster]:
    """One worker thread in this process: the scheduler's address is inproc://."""
    with LocalCluster(processes=False, n_workers=1, threads_per_worker=1,
                      dashboard_address=':0') as cluster:
        yield cluster


def test_jobs_and_a_dask_cluster_write_the_files_of_one_process(
        inputs: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        threads_cluster: LocalCluster) -> None:
    """Same exit code, same lines in input order, byte-identical index, reports and CSVs."""
    one = _review(inputs, tmp_path / 'one', capsys)
    two = _review(inputs, tmp_path / 'two', capsys, '--jobs', '2')
    dask = _review(inputs, tmp_path / 'dask', capsys, '--scheduler',
                   threads_cluster.scheduler_address)
    assert one[0] == two[0] == dask[0] == ExitCode.BAD_INPUT  # notes.txt
    flights = [line.split(':')[1].strip() for line in one[1][:-1]]
    assert flights == ['drift', 'nominal', 'drift_again']
    assert one[1] == two[1] == dask[1]
    for _, _, err in (one, two, dask):
        assert err.count('notes.txt: neither a flight log (PX4 ULog, ArduPilot DataFlash) '
                         'nor a rosbag2 bag') == 1, err
    files = _files(tmp_path / 'one')
    assert len(files) == 1 + 3 * len(FLIGHT_FILES)
    assert _files(tmp_path / 'two') == files
    assert _files(tmp_path / 'dask') == files
    # Two flights of the same input under two names differ only where the name is shown.
    assert files['drift/decisions.csv'] == files['drift_again/decisions.csv']


@pytest.mark.parametrize('jobs', ['1', '2'])
def test_jobs_and_scheduler_together_are_a_usage_error(
        inputs: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        jobs: str) -> None:
    """Any --jobs with --scheduler: exit 2, one line; no output folder."""
    with pytest.raises(SystemExit) as stopped:
        main([inputs[0], '--output', str(tmp_path / 'out'), '--jobs', jobs,
              '--scheduler', 'tcp://127.0.0.1:9'])
    assert stopped.value.code == ExitCode.USAGE
    err = capsys.readouterr().err
    assert err == ('ghost_review: error: --jobs and --scheduler: give one (the cluster has its '
                   'own workers) (see --help)\n')
    assert not (tmp_path / 'out').exists()


def test_a_scheduler_that_does_not_answer_is_a_usage_error(
        inputs: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing listens at the address: exit 2 saying so, and no output folder."""
    from ghost_verify import fleet

    monkeypatch.setattr(fleet, 'SCHEDULER_TIMEOUT_S', 1.0)
    code, _, err = _review(inputs[:1], tmp_path / 'out', capsys, '--scheduler',
                           'tcp://127.0.0.1:9')
    assert code == ExitCode.USAGE
    assert err.startswith('ghost_review: error: --scheduler: no Dask scheduler answers at '
                          'tcp://127.0.0.1:9')
    assert not (tmp_path / 'out').exists() and not list(tmp_path.glob('.out.*'))


def test_a_terminal_gets_a_progress_bar_instead_of_the_lines(
        inputs: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """On a terminal (stderr): no line per flight on stdout, tqdm's bar that ends at 3/3."""
    monkeypatch.setattr('sys.stderr.isatty', lambda: True)
    code, out, err = _review(inputs[:3], tmp_path / 'out', capsys)
    assert code == 0
    assert out == ['ghost_review: 3 flights -> DIR/index.html']
    assert '\rghost_review:   0%|' in err and '| 0/3 [' in err
    # tqdm shows the rate as flight/s, or s/flight when a flight takes over a second (load).
    assert '3/3 [' in err and re.search(r'(flight/s|s/flight), drift_again\]', err), err
    assert err.endswith('\r') and 'Traceback' not in err  # the bar is taken away at the end
