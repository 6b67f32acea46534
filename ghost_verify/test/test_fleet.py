"""verify_all BAG BAG ...: one line per bag and a total, JSON Lines, exit codes, Dask.

A fleet run verifies each bag as ``verify_all BAG`` does: every bag's report (the JSON line's
``report``) is the single-bag --json document, whether the bags run in this process, in local
processes (--jobs) or on a Dask LocalCluster started here (--scheduler).
"""

from __future__ import annotations

from collections.abc import Iterator
import functools
import json
from pathlib import Path
from typing import Any

from bags import trace_entries, with_policy, write_bag
from distributed import LocalCluster
import pytest

from ghost_core.cli import ExitCode
from ghost_core.levels import DecisionKind
from ghost_core.pipeline import CycleTrace
from ghost_core.scenarios import generate_scenario, run_scenario
from ghost_verify import cli, fleet


@functools.cache
def _traces(cycles: int) -> tuple[CycleTrace, ...]:
    return run_scenario(generate_scenario('smoke', cycles=cycles))


@pytest.fixture(scope='module')
def bags(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two bags that hold, one that violates BAUD-v1 and conformance, one that is no bag."""
    root = tmp_path_factory.mktemp('fleet')
    made = {
        'short': write_bag(root / 'short', trace_entries(_traces(40))),
        'long': write_bag(root / 'long', trace_entries(_traces(120)), chunk_size=16384),
        'proceeds': write_bag(root / 'proceeds', trace_entries(with_policy(
            _traces(60), DecisionKind.PROCEED, 'always_proceed_v1'))),
    }
    junk = root / 'junk.mcap'
    junk.write_bytes(b'not an mcap file at all')
    made['junk'] = junk
    return made


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str], str]:
    capsys.readouterr()
    code = cli.verify_all_main(argv)
    captured = capsys.readouterr()
    return code, captured.out.splitlines(), captured.err


def _single(bag: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
            ) -> tuple[int, dict[str, Any] | None]:
    out = tmp_path / f'{bag.name}.single.json'
    code, _, _ = _run([str(bag), '--json', str(out)], capsys)
    return code, json.loads(out.read_text()) if out.exists() else None


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_one_line_per_bag_a_total_and_the_worst_exit_code(
        bags: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """Holding bags say so; the others say their exit code and what failed; then the total."""
    names = [str(bags[key]) for key in ('short', 'proceeds', 'long', 'junk')]
    code, lines, err = _run(names, capsys)
    assert code == ExitCode.BAD_INPUT  # the largest: junk cannot be read
    assert len(lines) == 5
    assert lines[0] == f'{names[0]}: holds (40 cycles)'
    assert lines[1].startswith(f'{names[1]}: fails, exit 1 (60 cycles): ')
    assert 'BAUD-v1' in lines[1] and 'conformance' in lines[1]
    assert lines[2] == f'{names[2]}: holds (120 cycles)'
    assert lines[3].startswith(f'{names[3]}: exit 3: ')
    total = lines[4]
    assert total.startswith('total: 4 bags, 220 cycles in ')
    assert total.endswith(f'2 hold, 2 fail: {names[1]} (exit 1), {names[3]} (exit 3)')
    assert 'bags/s' in total and 'cycles/s' in total
    assert f'verify_all: error: {names[3]}' in err
    # Without the unreadable bag, the worst is a violation.
    code, lines, _ = _run(names[:3], capsys)
    assert code == ExitCode.VIOLATED and lines[-1].endswith(f'1 fail: {names[1]} (exit 1)')
    code, lines, _ = _run([names[0], names[2]], capsys)
    assert code == ExitCode.OK and lines[-1].endswith('2 hold, 0 fail')


def test_json_writes_one_line_per_bag_with_its_single_bag_report(
        bags: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--json PATH with several bags: JSON Lines, in the order of the bags."""
    keys = ('long', 'proceeds', 'junk', 'short')
    out = tmp_path / 'fleet.jsonl'
    code, _, _ = _run([*(str(bags[key]) for key in keys), '--json', str(out)], capsys)
    assert code == ExitCode.BAD_INPUT
    written = _lines(out)
    assert [item['bag'] for item in written] == [str(bags[key]) for key in keys]
    for key, item in zip(keys, written, strict=True):
        single_code, document = _single(bags[key], tmp_path, capsys)
        assert item['exit_code'] == single_code
        assert item['report'] == document
        assert (item['error'] is None) == (document is not None)
    assert written[2]['report'] is None and 'MCAP' in written[2]['error']
    # '-' writes the lines to stdout (and the per-bag lines to stderr).
    code, lines, err = _run([str(bags['short']), str(bags['long']), '--json', '-'], capsys)
    assert code == ExitCode.OK
    assert [json.loads(line)['bag'] for line in lines] == [str(bags['short']), str(bags['long'])]
    assert err.splitlines()[-1].startswith('total: 2 bags')


def test_one_bag_keeps_the_single_bag_output(
        bags: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One bag: the usual lines and the --json document file, not a fleet's."""
    out = tmp_path / 'one.json'
    code, lines, _ = _run([str(bags['proceeds']), '--json', str(out)], capsys)
    assert code == ExitCode.VIOLATED
    assert lines[0].startswith('BAUD-v1: VIOLATED') and not lines[-1].startswith('total:')
    assert json.loads(out.read_text())['baud']['holds'] is False


def _without_total(lines: list[str]) -> list[str]:
    assert lines[-1].startswith('total: ')
    return lines[:-1]


def test_jobs_runs_the_bags_in_local_processes(
        bags: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--jobs 2: the same lines (but the total's time) and the same JSON Lines."""
    names = [str(bags[key]) for key in ('short', 'proceeds', 'long', 'junk')]
    one, two = tmp_path / 'one.jsonl', tmp_path / 'two.jsonl'
    code, lines, _ = _run([*names, '--json', str(one)], capsys)
    code2, lines2, _ = _run([*names, '--jobs', '2', '--json', str(two)], capsys)
    assert code2 == code
    assert _without_total(lines2) == _without_total(lines)
    assert '2 workers' in lines2[-1] and '1 worker)' in lines[-1]
    assert two.read_text() == one.read_text()


@pytest.fixture(scope='module')
def threads_cluster() -> Iterator[LocalCluster]:
    """One worker thread in this process: the scheduler's address is inproc://."""
    with LocalCluster(processes=False, n_workers=1, threads_per_worker=1,
                      dashboard_address=':0') as cluster:
        yield cluster


def test_the_scheduler_runs_the_same_work_on_a_dask_cluster(
        bags: dict[str, Path], tmp_path: Path, threads_cluster: LocalCluster,
        capsys: pytest.CaptureFixture[str]) -> None:
    """--scheduler: every bag's line, exit code and report as verified locally."""
    names = [str(bags[key]) for key in ('proceeds', 'short', 'junk', 'long')]
    local, remote = tmp_path / 'local.jsonl', tmp_path / 'dask.jsonl'
    code, lines, _ = _run([*names, '--json', str(local)], capsys)
    address = threads_cluster.scheduler_address
    code2, lines2, _ = _run([*names, '--scheduler', address, '--json', str(remote)], capsys)
    assert code2 == code == ExitCode.BAD_INPUT
    assert _without_total(lines2) == _without_total(lines)
    assert remote.read_text() == local.read_text()


def test_one_bag_on_the_scheduler_prints_what_it_prints_locally(
        bags: dict[str, Path], tmp_path: Path, threads_cluster: LocalCluster,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A single bag sent to the cluster: the single-bag lines and document."""
    local, remote = tmp_path / 'local.json', tmp_path / 'dask.json'
    code, lines, _ = _run([str(bags['proceeds']), '--json', str(local)], capsys)
    code2, lines2, _ = _run([str(bags['proceeds']), '--json', str(remote),
                             '--scheduler', threads_cluster.scheduler_address], capsys)
    assert (code2, lines2) == (code, lines)
    assert remote.read_bytes() == local.read_bytes()


def test_worker_processes_of_a_dask_cluster(
        bags: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two worker processes (tcp://): the reports are still the local ones."""
    names = [str(bags[key]) for key in ('long', 'short', 'proceeds')]
    local, remote = tmp_path / 'local.jsonl', tmp_path / 'dask.jsonl'
    _run([*names, '--json', str(local)], capsys)
    with LocalCluster(processes=True, n_workers=2, threads_per_worker=1,
                      dashboard_address=':0') as cluster:
        code, lines, _ = _run([*names, '--scheduler', cluster.scheduler_address,
                               '--json', str(remote)], capsys)
    assert code == ExitCode.VIOLATED
    assert '2 workers' in lines[-1]
    assert remote.read_text() == local.read_text()


def test_a_scheduler_that_does_not_answer_is_a_usage_error(
        bags: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Nothing listens at the address: exit 2, saying so."""
    monkeypatch.setattr(fleet, 'SCHEDULER_TIMEOUT_S', 1.0)
    code, _, err = _run([str(bags['short']), '--scheduler', 'tcp://127.0.0.1:9'], capsys)
    assert code == ExitCode.USAGE
    assert 'no Dask scheduler answers at tcp://127.0.0.1:9' in err


def test_jobs_and_scheduler_together_are_a_usage_error(
        bags: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """The cluster has its own workers."""
    with pytest.raises(SystemExit) as caught:
        cli.verify_all_main([str(bags['short']), '--jobs', '2', '--scheduler', 'tcp://x:1'])
    assert caught.value.code == ExitCode.USAGE
    assert '--jobs and --scheduler' in capsys.readouterr().err
