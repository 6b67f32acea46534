"""Smoke runs of the verifier benchmark, its bag generator and its decode-only floor."""

import json
from pathlib import Path
import subprocess
import sys

from ghost_verify import verify_all

BENCH = Path(__file__).resolve().parents[1]


def _run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          timeout=timeout, check=False)


def test_generated_bag_verifies_with_every_check_holding(tmp_path) -> None:
    """bagsynth.py: the first flight, then repetitions; verify_all holds on all of it."""
    bag = tmp_path / 'bag'
    done = _run(str(BENCH / 'bagsynth.py'), '130', str(bag))
    assert done.returncode == 0, done.stderr
    result = verify_all(bag)
    assert result.holds, result.summary_lines()
    assert result.baud.covered and result.erur.covered
    assert result.trace.total_decisions == 130
    assert result.trace.decisions_end_to_end_verified == 130


def test_every_decoder_decodes_every_message(tmp_path) -> None:
    """decode_floor.py: each decoder sees the 6 messages of each of the bag's cycles."""
    bag = tmp_path / 'bag'
    assert _run(str(BENCH / 'bagsynth.py'), '60', str(bag)).returncode == 0
    for decoder in ('rosbags', 'mcap_ros2', 'ghost_verify', 'rclpy'):
        done = _run(str(BENCH / 'decode_floor.py'), str(bag), '--decoder', decoder)
        assert done.returncode == 0, done.stderr
        line = json.loads(done.stdout)
        assert line['decoder'] == decoder
        assert line['messages'] == 360


def test_verifier_script_reports_time_memory_and_ratio_per_size(tmp_path) -> None:
    """verifier.py on bags of 100 and 250 cycles: one row per size, verdict holds.

    With --jobs 2 on each size, the decode passes, where the time goes, and a fleet of two
    100-cycle bags on 1 and 2 local workers and a one-worker Dask LocalCluster.
    """
    out = tmp_path / 'verifier.json'
    done = _run(str(BENCH / 'verifier.py'), '--sizes', '100', '250', '--no-cache',
                '--jobs', '2', '--fleet-bags', '2', '--fleet-cycles', '100',
                '--fleet-workers', '1', '2', '--dask-workers', '1', '--json', str(out),
                timeout=300)
    assert done.returncode == 0, f'{done.stdout}\n{done.stderr}'
    result = json.loads(out.read_text())['verifier']
    assert result['floor_decoder'] in ('rosbags', 'mcap_ros2')
    assert set(result['decoder_trial_s']) == {'rosbags', 'mcap_ros2'}
    assert [row['cycles'] for row in result['sizes']] == [100, 250]
    for row in result['sizes']:
        assert row['verifier']['verdict'] == 'holds'
        for side in ('verifier', 'floor'):
            assert row[side]['returncode'] == 0
            assert row[side]['wall_s'] > 0 and row[side]['max_rss_bytes'] > 0
        assert row['ratio_time'] > 0
    assert {'time_exponent', 'rss_mb_per_1e6_cycles', 'us_per_cycle'} <= set(result['growth'])
    assert '| cycles | bag MB |' in done.stdout
    for row in result['sizes']:
        split = row['jobs']['2']
        assert split['verdict'] == 'holds' and split['ratio_time'] > 0
    assert set(result['reference_decoders_s']) == {'ghost_verify', 'rclpy'}
    assert result['breakdown']['cycles'] == 250
    assert {'conformance', 'history', 'tracer'} <= set(result['breakdown']['checkers'])
    runs = result['fleet']['runs']
    assert [(run['runner'], run['workers']) for run in runs] == [
        ('local', 1), ('local', 2), ('dask', 1)]
    assert all(run['verdict'] == 'holds' and run['bags_per_s'] > 0 for run in runs)
    assert '| --jobs 2 s |' in done.stdout and '| bags/s |' in done.stdout
