"""The closed loop as real ROS 2 processes over real DDS, recorded and verified.

Each test runs the node graph on its own ROS domain with localhost-only discovery; every
process is stopped at the end (ghost_run stops its graph; the fixtures stop the rest).
"""

import os
from pathlib import Path
import signal
import time

from graph_runs import cycle_table, payloads_by_topic, reports, run_main_job, without_arrival
import pytest

from ghost.bringup import closed_loop_graph, GraphOptions
from ghost.launcher import GraphProcesses
from ghost_core.levels import DecisionKind
from ghost_core.scenarios import generate_scenario, run_scenario
from ghost_core.wire import to_msg_dict
from ghost_nodes.agent_config import pipeline_config_from_files
from ghost_verify import verify_all
from ghost_verify.bag import GhostBag

CONFIG = os.path.join(os.path.dirname(__file__), '..', '..', 'config')


def _ok(result) -> None:
    assert result.returncode == 0, f'stdout:\n{result.stdout}\nstderr:\n{result.stderr}'


def test_smoke_run_records_ten_verified_cycles(tmp_path, ros_env) -> None:
    """smoke: 10 cycles, one calibrated/decision/actuation each; ERUR on 1-4, BAUD on 5-10."""
    result = run_main_job('smoke', tmp_path / 'run', ros_env)
    _ok(result)
    assert 'BAUD-v1: HOLDS (6 cycles evaluated)' in result.stdout
    assert 'ERUR-v1: HOLDS (4 cycles evaluated)' in result.stdout
    assert 'chain: 10/10 verified' in result.stdout
    rows = cycle_table(tmp_path / 'run' / 'bag')
    assert len(rows) == 10
    for row in rows:
        counts = (row['raw'], row['calibrated'], row['rationales'], row['actuations'])
        assert counts == (1, 1, 1, 1)
    assert [r['erur'] for r in rows] == [True] * 4 + [False] * 6
    assert [r['baud'] for r in rows] == [False] * 4 + [True] * 6
    assert [r['decision'] for r in rows] == [DecisionKind.PROCEED] * 4 + [DecisionKind.HOLD] * 6
    full = reports(tmp_path / 'run')
    assert full['holds'] is True


def test_drift_then_recovery_resumes_proceed(tmp_path, ros_env) -> None:
    """drift_then_recovery: both hold; BAUD cycles come first, then ERUR cycles (reactivation)."""
    result = run_main_job('drift_then_recovery', tmp_path / 'run', ros_env)
    _ok(result)
    rows = cycle_table(tmp_path / 'run' / 'bag')
    assert len(rows) == len(generate_scenario('drift_then_recovery').cycles)
    baud = [i for i, r in enumerate(rows) if r['baud']]
    erur = [i for i, r in enumerate(rows) if r['erur']]
    assert baud and erur
    reactivated = [i for i in erur if i > max(baud)]
    assert reactivated, 'no ERUR cycle after the drift: PROCEED never resumed'
    assert all(rows[i]['decision'] == DecisionKind.PROCEED for i in reactivated)
    assert all(rows[i]['decision'] != DecisionKind.PROCEED for i in baud)
    full = reports(tmp_path / 'run')
    assert full['baud']['holds'] and full['erur']['holds'] and full['trace']['chain_intact']


def test_same_scenario_twice_gives_identical_payloads(tmp_path, ros_env) -> None:
    """SPEC 8: two runs of one scenario publish identical payloads on every topic."""
    for name in ('a', 'b'):
        _ok(run_main_job('dropout', tmp_path / name, ros_env))
    first = payloads_by_topic(tmp_path / 'a' / 'bag')
    second = payloads_by_topic(tmp_path / 'b' / 'bag')
    assert set(first) == set(second)
    assert len(first['/actuations']) == len(generate_scenario('dropout').cycles)
    # The nodes' start configurations and lifecycle records: one publisher each, in whatever
    # order the nodes came up.
    for payloads in (first, second):
        payloads['/ghost/configuration'].sort(key=lambda record: str(record['node']))
        payloads['/ghost/lifecycle'].sort(key=lambda record: str(record['data']))
    assert len(first['/ghost/configuration']) == 6
    for topic in first:
        assert without_arrival(first[topic]) == without_arrival(second[topic]), (
            f'{topic} differs between the two runs')


def test_nodes_publish_what_the_pure_pipeline_computes(tmp_path, ros_env) -> None:
    """Every ghost message of a run equals what ghost_core's pure pipeline computes.

    The nodes are thin adapters: field for field, the same messages for the same scenario.
    """
    _ok(run_main_job('dropout', tmp_path / 'run', ros_env))
    scenario = generate_scenario('dropout')
    config = Path(__file__).resolve().parents[2] / 'config'
    shipped = pipeline_config_from_files([config / 'ghost.yaml', config / 'scenarios' /
                                          'dropout.yaml'])
    expected = {t.stamp_ns: t for t in run_scenario(scenario, shipped.thresholds)}
    seen = 0
    for cycle in GhostBag(tmp_path / 'run' / 'bag').cycles():
        trace = expected[cycle.stamp_ns]
        assert [r.message.msg for r in cycle.raw_assessments] == [to_msg_dict(trace.raw)]
        assert [o.msg for o in cycle.outcomes] == [to_msg_dict(trace.outcome)]
        assert [c.message.msg for c in cycle.calibrated] == [to_msg_dict(trace.calibrated)]
        assert [r.message.msg for r in cycle.rationales] == [to_msg_dict(trace.rationale)]
        assert [a.message.msg for a in cycle.actuations] == [to_msg_dict(trace.emission)]
        seen += 1
    assert seen == len(scenario.cycles)


def test_sigint_mid_run_leaves_a_readable_complete_bag(tmp_path, ros_env) -> None:
    """Stopping the graph with SIGINT mid-run leaves a readable, complete bag.

    The summary and metadata.yaml are written, and every recorded decision's chain verifies.
    """
    bag = tmp_path / 'bag'
    specs = closed_loop_graph(CONFIG, GraphOptions(scenario='nominal', bag_path=str(bag)))
    graph = GraphProcesses(specs, tmp_path / 'logs', ros_env)
    graph.start()
    try:
        deadline = time.monotonic() + 60
        # Wait until cycles flow (the recorder's file grows), then interrupt mid-run.
        mcap = bag / 'bag.mcap'
        while time.monotonic() < deadline and (not mcap.exists() or mcap.stat().st_size < 20000):
            time.sleep(0.2)
            assert not graph.failed(), graph.failed()
        for proc in graph.procs.values():
            os.killpg(proc.pid, signal.SIGINT)
        codes = graph.stop()
    finally:
        graph.kill()
    assert codes['recorder'] == 0, codes
    assert (bag / 'metadata.yaml').is_file()
    result = verify_all(bag)
    total = result.trace.total_decisions
    assert 0 < total < len(generate_scenario('nominal').cycles)
    assert result.trace.broken_count == 0 and result.trace.assessment_missing_count == 0
    assert result.baud.holds and result.erur.holds


def test_invalid_parameter_is_refused_at_start_up(tmp_path, ros_env, processes) -> None:
    """M < 1 at start-up: the node exits at once with one line naming the parameter."""
    from ghost.launcher import executable_path
    spec = next(s for s in closed_loop_graph(CONFIG, GraphOptions(scenario='smoke', record=False))
                if s.name == 'calibrator')
    proc = processes.start([executable_path(spec), '--ros-args', '-p', 'min_outcomes:=0'],
                           ros_env)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode != 0
    assert 'parameter min_outcomes must be >= 1, got 0' in err
    assert 'Traceback' not in err


@pytest.mark.parametrize(('node', 'param', 'value', 'reason'), [
    ('calibrator', 'downgrade_threshold', 0, 'parameter downgrade_threshold must be >= 1'),
    ('forward_predictor', 'process_noise', -0.1, 'parameter process_noise must be >= 0'),
    ('self_assessor', 'position_known_max_std', 5.0, 'uncertain_max_std must be >= known_max_std'),
])
def test_invalid_parameter_update_is_refused_with_a_reason(ros_env, processes, node, param,
                                                          value, reason) -> None:
    """set_parameters with a bad value is refused, and the reason says why."""
    from ghost.launcher import executable_path
    spec = next(s for s in closed_loop_graph(CONFIG, GraphOptions(scenario='smoke', record=False))
                if s.name == node)
    processes.start([executable_path(spec), '--ros-args', '-r', f'__node:={node}'], ros_env)
    import subprocess
    import sys
    client = subprocess.run(
        [sys.executable, os.path.join(os.path.dirname(__file__), 'set_param.py'), node, param,
         repr(value)], env=ros_env, text=True, capture_output=True, timeout=60, check=False)
    assert client.returncode == 0, client.stderr
    assert client.stdout.startswith('refused:'), client.stdout
    assert reason in client.stdout


def test_the_vehicle_status_travels_into_every_recorded_rationale(tmp_path, ros_env) -> None:
    """ADR-0021 §2 over DDS: each decision records the vehicle status in force at its cycle.

    The scenario's /vehicle_status reaches the decision policy and is recorded, each
    rationale records the status in force at its cycle (IN_AIR, ON_MISSION for smoke), and
    the verifier's re-derivation from the recorded inputs reproduces them.
    """
    from ghost_core.levels import FlightStatus, MissionStatus

    _ok(run_main_job('smoke', tmp_path / 'run', ros_env))
    bag = tmp_path / 'run' / 'bag'
    payloads = payloads_by_topic(bag)
    cycles = len(generate_scenario('smoke').cycles)
    assert len(payloads['/vehicle_status']) == cycles
    rationales = payloads['/decisions']
    assert len(rationales) == cycles
    assert {(r['flight_status'], r['mission_status'], r['perception_mode'], r['schema_version'])
            for r in rationales} == {(FlightStatus.IN_AIR, MissionStatus.ON_MISSION, '', 3)}
    # Each names the status it came from (SPEC 5 v1.3): one recorded at or before its cycle.
    statuses = {(s['header']['stamp']['sec'], s['header']['stamp']['nanosec'])
                for s in payloads['/vehicle_status']}
    assert all(r['has_vehicle_status'] and (r['vehicle_status_stamp']['sec'],
                                            r['vehicle_status_stamp']['nanosec']) in statuses
               for r in rationales)
    replay = verify_all(bag).replay
    assert replay is not None and replay.replayed, replay
    rationale = next(topic for topic in replay.topics if topic.kind == 'rationale')
    assert (rationale.compared, rationale.differing) == (cycles, 0), rationale
