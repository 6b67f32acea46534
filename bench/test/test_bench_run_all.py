"""Smoke run of the whole suite (run_all.py --quick at tiny size) and of node_costs.py."""

import json
from pathlib import Path
import sys

BENCH = Path(__file__).resolve().parents[1]


def test_run_all_quick_writes_tables_json_and_plots(tmp_path, ros_env, processes) -> None:
    """run_all.py --quick: every section runs; JSON, both plots and the targets are written."""
    out = tmp_path / 'results'
    proc = processes.start([sys.executable, str(BENCH / 'run_all.py'), '--quick',
                            '--rates', '20', '--cycles', '20', '--sizes', '100',
                            '--no-cache', '--out-dir', str(out),
                            # bench/review.py has its own smoke test (test_bench_review.py).
                            '--skip-review'], ros_env)
    stdout, stderr = proc.communicate(timeout=150)
    assert proc.returncode == 0, f'stdout:\n{stdout}\nstderr:\n{stderr}'
    document = json.loads((out / 'quick.json').read_text())
    assert document['mode'] == 'quick'
    assert {'date_utc', 'machine', 'closed_loop', 'node_costs', 'verifier',
            'targets'} <= set(document)
    assert document['machine']['cpus'] >= 1
    (row,) = document['closed_loop']['rates']
    assert 'error' not in row['ghost'] and 'error' not in row['floor']
    costs = document['node_costs']
    assert costs['actuations'] == 200
    assert len(costs['nodes']) == 6
    assert all(node['breakdown'] for node in costs['nodes'].values())
    assert [r['cycles'] for r in document['verifier']['sizes']] == [100]
    targets = document['targets']
    assert [t['key'] for t in targets] == [
        'loop_zero_loss', 'loop_mp_100hz_p50', 'loop_p50_p99', 'loop_sp_500hz', 'verify_erur',
        'verify_all_100000', 'verify_all_1000000', 'verifier_memory',
        'verifier_linear', 'fleet_dask']
    assert all(set(t) == {'key', 'target', 'measured', 'value', 'met'} for t in targets)
    # The quick fleet ran both Dask sizes, so its row is measured (never asserted met).
    assert document['fleet']['bags'] == 4
    assert next(t for t in targets if t['key'] == 'fleet_dask')['value'] is not None
    for name in ('quick_closed_loop.png', 'quick_verifier.png'):
        assert (out / name).read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
    for heading in ('## Closed loop', '## Ghost node callbacks', '## Verifier', '## Targets'):
        assert heading in stdout


def test_history_keeps_every_measured_row(tmp_path) -> None:
    """A full run's measured rows go to the history, which prints oldest first per row."""
    sys.path.insert(0, str(BENCH))
    from run_all import history_table, record_history

    path = tmp_path / 'history.csv'
    targets = [{'key': 'verify_erur', 'target': 't', 'measured': '1.40x (1 vs 1 s)',
                'value': 1.4, 'met': True},
               {'key': 'verify_all_1000000', 'target': 't', 'measured': 'not measured',
                'value': None, 'met': None}]
    record_history({'date_utc': '2026-12-03T11:00:00Z', 'commit': 'abc1234',
                    'targets': targets}, path)
    record_history({'date_utc': '2026-12-02T11:00:00Z', 'commit': 'abc1233',
                    'targets': [{**targets[0], 'value': 2.14, 'met': False}]}, path)
    table = history_table(path).splitlines()
    assert table[0] == '| row | date (UTC) | commit | value | status | measured |'
    assert [line.split(' | ')[2] for line in table[2:]] == ['abc1233', 'abc1234']
    assert 'verify_all_1000000' not in history_table(path)  # not measured: not kept


def test_history_command_prints_the_kept_rows() -> None:
    """`python bench/run_all.py --history` (docs/performance.md) prints the repository's rows."""
    import subprocess

    done = subprocess.run([sys.executable, str(BENCH / 'run_all.py'), '--history'],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == '| row | date (UTC) | commit | value | status | measured |'
    assert any(line.startswith('| verify_all_1000000 |') for line in lines)
