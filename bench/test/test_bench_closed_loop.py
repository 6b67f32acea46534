"""Smoke runs of the closed-loop benchmark and of its per-hop profile, at tiny size.

Real DDS on the test's own domain (the ros_env fixture); every process the script starts is
stopped by the script itself, and the script by the processes fixture. No timing is asserted:
timings are benchmark numbers, not test results.
"""

import json
from pathlib import Path
import re
import sys

BENCH = Path(__file__).resolve().parents[1]
ROLES = ('self_assessor', 'forward_predictor', 'outcome_evaluator', 'calibrator',
         'decision_policy', 'action_emitter')


def test_closed_loop_script_reports_loss_latency_and_cpu_per_graph(
        tmp_path, ros_env, processes) -> None:
    """closed_loop.py at one rate x 20 cycles: every graph actuates and reports every field."""
    out = tmp_path / 'loop.json'
    proc = processes.start([sys.executable, str(BENCH / 'closed_loop.py'), '--rates', '100',
                            '--cycles', '20', '--json', str(out),
                            '--work-dir', str(tmp_path / 'logs')], ros_env)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, f'stdout:\n{stdout}\nstderr:\n{stderr}'
    result = json.loads(out.read_text())['closed_loop']
    assert result['config']['cycles_per_rate'] == 20
    assert result['config']['ros_domain_id'] == int(ros_env['ROS_DOMAIN_ID'])
    (row,) = result['rates']
    assert row['rate_hz'] == 100
    systems = ('floor', 'ghost', 'ghost_mp_events', 'ghost_single', 'ghost_events',
               'ghost_events_dds', 'ghost_events_recorded')
    for system in systems:
        stats = row[system]
        assert 'error' not in stats, stats
        assert stats['cycles'] == 20
        assert 0 <= stats['lost'] < 20, 'no actuation came back at all'
        assert set(stats['latency_ms']) == {'p50', 'p90', 'p99', 'max', 'mean'}
        assert isinstance(stats['keeps_up'], bool)
        # Single-process mode: the six nodes are one ghost_agent process.
        processes_of = {*ROLES} if system in ('floor', 'ghost', 'ghost_mp_events') else {
            'ghost_agent'}
        if system == 'ghost_events_recorded':
            processes_of.add('recorder')
        assert set(stats['cpu_s']) == {*processes_of, 'driver'}
        assert all(v >= 0 for v in stats['cpu_s'].values())
    for key in ('ratio_p50', 'ratio_p99', 'ratio_max', 'ratio_cpu'):
        assert key in row
    assert set(row['ratios']) == set(systems[1:])
    assert set(result['highest_zero_loss_rate_hz']) == set(systems)
    assert set(result['highest_sustained_rate_hz']) == set(systems)
    assert re.search(r'\| rate Hz \| +graph \|', stdout), stdout
    # Every process of both graphs was stopped by the script.
    for log in (tmp_path / 'logs').glob('*/driver.json'):
        assert json.loads(log.read_text())['cycles'] == 20


def test_hop_profile_splits_every_nodes_cpu_per_cycle_on_both_executors(
        tmp_path, ros_env, processes) -> None:
    """hop_profile.py at 100 Hz x 20 cycles: a JSON line and a table, every node split."""
    proc = processes.start([sys.executable, str(BENCH / 'hop_profile.py'), '--cycles', '20',
                            '--work-dir', str(tmp_path / 'logs')], ros_env)
    stdout, stderr = proc.communicate(timeout=180)
    assert proc.returncode == 0, f'stdout:\n{stdout}\nstderr:\n{stderr}'
    first, *table = stdout.splitlines()
    result = json.loads(first)['hop_profile']
    assert set(result['executors']) == {'single_threaded', 'events'}
    columns = {'take', 'deserialise', 'callback', 'hash', 'publish', 'other', 'total', 'rclpy'}
    for executor, run in result['executors'].items():
        assert 'error' not in run, run
        assert run['cycles_processed'] > 0
        assert set(run['nodes']) == set(ROLES)
        for role, node in run['nodes'].items():
            assert set(node) == columns, (executor, role, node)
            assert node['total'] > 0 and node['callback'] > 0, (executor, role, node)
        assert (run['nodes']['calibrator']['hash'] > 0
                and run['nodes']['forward_predictor']['hash'] == 0)
    assert result['executors']['events']['nodes']['calibrator']['rclpy'] == 0
    assert result['executors']['single_threaded']['nodes']['calibrator']['rclpy'] > 0
    assert any(line.lstrip().startswith('node ') and 'deserialise' in line for line in table)
    for role in ROLES:
        assert (tmp_path / 'logs' / 'hops_events-100hz' / f'{role}.hops.json').is_file()
