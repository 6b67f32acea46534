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
    assert len(targets) == 8
    assert all(set(t) == {'target', 'measured', 'met'} for t in targets)
    for name in ('quick_closed_loop.png', 'quick_verifier.png'):
        assert (out / name).read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
    for heading in ('## Closed loop', '## Ghost node callbacks', '## Verifier', '## Targets'):
        assert heading in stdout
