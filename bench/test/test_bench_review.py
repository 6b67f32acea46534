"""Smoke run of bench/review.py at tiny size: every measurement made, targets beside them."""

import json
from pathlib import Path
import subprocess
import sys

import pytest

BENCH = Path(__file__).resolve().parents[1]
REALDATA = BENCH.parents[1] / 'shared' / 'realdata'

pytestmark = pytest.mark.skipif(not list(REALDATA.glob('*.ulg')),
                                reason=f'no PX4 log in {REALDATA}')


def test_review_bench_measures_three_ways_and_the_report_cost(tmp_path: Path) -> None:
    """2 flights, 1 configuration: 1 process, --jobs 2, Dask; identical files; two targets."""
    out = tmp_path / 'review.json'
    done = subprocess.run([sys.executable, str(BENCH / 'review.py'), '--flights', '2',
                           '--configs', '1', '--repeat', '1', '--json', str(out)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(out.read_text())['review']
    throughput = result['throughput']
    assert throughput['flights'] == 2 and throughput['identical'] is True
    assert set(throughput['runs']) == {'1 process', '--jobs 2', 'Dask LocalCluster, 2 workers'}
    assert all(row['flights_per_minute'] > 0 for row in throughput['runs'].values())
    cost = result['report_cost']
    assert cost['seconds']['replay + report'] > 0 and cost['seconds']['replay'] > 0
    assert [t['target'] for t in result['targets']] == [
        'ghost_review --jobs 2 >= 1.7x one process',
        'the report adds <= 20 % to ghost_replay']
    assert '| ghost_review --jobs 2 >= 1.7x one process |' in done.stdout
