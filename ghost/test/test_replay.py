"""ghost_replay (pure, offline) and ghost_run --input (the real graph over DDS): same payloads."""

import dataclasses
import os
from pathlib import Path
import subprocess
import sys

from graph_runs import payloads_by_topic
from input_bags import write_input_bag
import pytest

from ghost.replay import main as replay_main
from ghost.replay import replay_bag
from ghost_core.graph import GHOST_TOPICS
from ghost_core.scenarios import generate_scenario
from ghost_nodes.agent_config import pipeline_config_from_files
from ghost_verify import verify_all

CONFIG = Path(__file__).resolve().parents[2] / 'config'
GHOST_YAML = CONFIG / 'ghost.yaml'


def _by_stamp(messages: list[dict]) -> dict[tuple, dict]:
    return {(m['header']['stamp']['sec'], m['header']['stamp']['nanosec']): m
            for m in messages}


def test_replay_writes_a_bag_that_verifies_and_matches_the_pipeline(tmp_path, capsys) -> None:
    """Inputs + six Ghost topics; verify_all holds; the summary says what Ghost did."""
    scenario = generate_scenario('drift_then_recovery')
    source = write_input_bag(tmp_path / 'in', scenario, state_topic='/ekf/odom',
                             observations_topic='/rtk/pose')
    code = replay_main([str(source), '--output', str(tmp_path / 'out'),
                        '--state-topic', '/ekf/odom', '--observations-topic', '/rtk/pose',
                        '--params-file', str(GHOST_YAML), '--params-file',
                        str(CONFIG / 'scenarios' / 'drift_then_recovery.yaml')])
    out = capsys.readouterr().out
    assert code == 0, out
    assert 'BAUD-v1: HOLDS (13 cycles evaluated)' in out
    assert 'ERUR-v1: HOLDS (17 cycles evaluated)' in out
    assert 'judgement: 30 cycles over 2.9 s: PROCEED 56.7 %, HOLD 43.3 %' in out
    assert 'first non-PROCEED at stamp 1.400 s' in out
    payloads = payloads_by_topic(tmp_path / 'out')
    assert set(payloads) == {'/state/nav', '/observations', *GHOST_TOPICS}
    assert all(len(payloads[topic]) == 30 for topic in GHOST_TOPICS)
    assert verify_all(tmp_path / 'out').holds


#: Makes ``import rclpy`` (and anything under it) fail, as on a machine without ROS 2.
_WITHOUT_RCLPY = """
import importlib.abc, sys
class NoRclpy(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == 'rclpy' or name.startswith('rclpy.'):
            raise ModuleNotFoundError(f'No module named {name!r} (blocked by the test)', name=name)
        return None
sys.meta_path.insert(0, NoRclpy())
from ghost.replay import main
code = main(sys.argv[1:])
assert not any(m == 'rclpy' or m.startswith('rclpy.') for m in sys.modules), 'rclpy was loaded'
sys.exit(code)
"""


def test_ghost_replay_runs_without_rclpy(tmp_path) -> None:
    """An auditor's or analyst's machine without ROS 2: ghost_replay still judges a bag."""
    source = write_input_bag(tmp_path / 'in', generate_scenario('smoke'))
    result = subprocess.run(
        [sys.executable, '-c', _WITHOUT_RCLPY, str(source), '--output', str(tmp_path / 'out'),
         '--params-file', str(GHOST_YAML)], capture_output=True, text=True, timeout=120,
        check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert 'BAUD-v1: HOLDS' in result.stdout
    blocked = subprocess.run([sys.executable, '-c', _WITHOUT_RCLPY.replace(
        'from ghost.replay import main', 'import ghost_nodes.node_base')],
        capture_output=True, text=True, timeout=60, check=False)
    assert 'blocked by the test' in blocked.stderr  # the blocker does block


def test_replay_refuses_bad_input_with_one_line(tmp_path, capsys) -> None:
    """Not a bag, a missing belief topic, an existing output: one line, documented codes."""
    junk = tmp_path / 'junk.mcap'
    junk.write_bytes(b'not an mcap file at all')
    assert replay_main([str(junk), '--output', str(tmp_path / 'o1')]) == 3
    err = capsys.readouterr().err
    assert err.startswith('ghost_replay: error: ') and err.count('\n') == 1
    source = write_input_bag(tmp_path / 'in', generate_scenario('smoke'))
    assert replay_main([str(source), '--output', str(tmp_path / 'o2'),
                        '--state-topic', '/nope']) == 3
    assert 'no nav_msgs/msg/Odometry messages on /nope' in capsys.readouterr().err
    (tmp_path / 'exists').mkdir()
    assert replay_main([str(source), '--output', str(tmp_path / 'exists')]) == 2
    assert 'exists' in capsys.readouterr().err
    assert replay_main([str(tmp_path / 'missing'), '--output', str(tmp_path / 'o3')]) == 3


def test_late_fixes_within_the_lag_are_used_and_later_ones_are_not(tmp_path) -> None:
    """A GNSS-like delay (fix logged 110 ms after its stamp) changes nothing; 400 ms does."""
    scenario = generate_scenario('nominal', cycles=40)
    config = pipeline_config_from_files([GHOST_YAML])
    on_time = replay_bag(write_input_bag(tmp_path / 'a', scenario), config=config)
    late = replay_bag(write_input_bag(tmp_path / 'b', scenario, fix_delay_ns=110_000_000),
                      config=config)
    too_late = replay_bag(write_input_bag(tmp_path / 'c', scenario, fix_delay_ns=400_000_000),
                          config=config)
    assert [t.outcome for t in late.traces] == [t.outcome for t in on_time.traces]
    assert late.late_observations == 0
    assert too_late.late_observations > 30
    assert sum(t.outcome.observed for t in too_late.traces) < 5


def _live_and_offline(source: Path, tmp_path: Path, ros_env: dict[str, str], speed: int,
                      ) -> tuple[dict, dict]:
    """Replay `source` offline and play it through ghost_run --input; both bags' payloads.

    Asserts the run exits 0 with every cycle of the replay actuated.
    """
    replayed = replay_bag(source, tmp_path / 'replayed', pipeline_config_from_files([GHOST_YAML]))
    result = subprocess.run(
        [sys.executable, '-c', 'import sys; from ghost.run import main; sys.exit(main())',
         '--input', str(source), '--speed', str(speed), '--run-dir', str(tmp_path / 'run'),
         '--config-dir', str(CONFIG), '--timeout', '120'],
        env=ros_env, text=True, capture_output=True, timeout=240, check=False)
    assert result.returncode == 0, f'{result.stdout}\n{result.stderr}'
    cycles = len(replayed.traces)
    assert f'ghost: {cycles}/{cycles} cycles actuated' in result.stdout
    live = payloads_by_topic(tmp_path / 'run' / 'bag')
    offline = payloads_by_topic(tmp_path / 'replayed')
    for topic in GHOST_TOPICS:
        assert _by_stamp(live[topic]) == _by_stamp(offline[topic]), topic
    return live, offline


def test_ghost_run_input_gives_the_payloads_of_ghost_replay(tmp_path, ros_env) -> None:
    """The same input bag through the real graph over DDS, at 2x: identical Ghost payloads.

    The first cycles have no fix (their outcomes have no prediction and no observation, and
    must still be in the belief's frame, as in the pipeline), the others come 50 ms late.
    """
    base = generate_scenario('drift_then_recovery')
    scenario = dataclasses.replace(base, cycles=tuple(
        dataclasses.replace(cycle, observation=None) if cycle.index <= 2 else cycle
        for cycle in base.cycles))
    source = write_input_bag(tmp_path / 'in', scenario, fix_delay_ns=50_000_000)
    live, _ = _live_and_offline(source, tmp_path, ros_env, speed=2)
    assert len(live['/actuations']) == 30
    first = live['/prediction_outcomes'][0]
    assert (first['status'], first['header']['frame_id']) == ('no_prediction', 'map')
    assert os.path.isdir(tmp_path / 'run' / 'logs')


REALDATA = Path(__file__).resolve().parents[3] / 'shared' / 'realdata'
DOC = Path(__file__).resolve().parents[2] / 'docs' / 'real-data.md'
needs_realdata = pytest.mark.skipif(not REALDATA.is_dir(),
                                    reason='../shared/realdata is not beside this clone')


def _installed(package: str, name: str) -> str:
    from ament_index_python.packages import get_package_prefix

    return str(Path(get_package_prefix(package)) / 'lib' / package / name)


@needs_realdata
@pytest.mark.parametrize('log', ['esc_status_log.ulg', '14_19_29.ulg',
                                 'log_123_2024-3-1-14-47-02.ulg', 'quadrotor_local.ulg'])
def test_real_flights_import_and_replay_with_every_verdict_holding(tmp_path, log) -> None:
    """docs/real-data.md's commands on every real log: exit 0, the summary the page shows.

    The healthy flights proceed throughout once PX4's own position is valid (the SITL log
    starts with 16 s before it is); the flight without a GNSS fix never proceeds.
    """
    bag_in, bag_out = tmp_path / 'runs' / 'in', tmp_path / 'runs' / 'ghost'
    imported = subprocess.run([_installed('ghost_px4', 'ghost_import'), str(REALDATA / log),
                               '--output', str(bag_in)], capture_output=True, text=True,
                              timeout=120, check=False)
    assert imported.returncode == 0, imported.stderr
    replayed = subprocess.run([_installed('ghost', 'ghost_replay'), str(bag_in), '--output',
                               str(bag_out)], capture_output=True, text=True, timeout=120,
                              check=False)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    lines = replayed.stdout.splitlines()
    assert any(line.startswith('BAUD-v1: HOLDS') for line in lines)
    assert 'history: ' in replayed.stdout and 'consistent' in replayed.stdout
    if log == 'esc_status_log.ulg':
        documented = DOC.read_text(encoding='utf-8')
        for line in lines:
            # The review folder repeats the bag's name (ghost_review's folder per flight).
            assert line.replace(f'{bag_out}_review/{bag_out.name}/',
                                'runs/esc_ghost_review/esc_ghost/').replace(
                str(bag_in), 'runs/esc_in').replace(
                str(bag_out), 'runs/esc_ghost') in documented, line
    elif log == 'quadrotor_local.ulg':
        assert 'ABSTAIN_UNCERTAIN 100.0 %' in replayed.stdout
    elif log == 'log_123_2024-3-1-14-47-02.ulg':
        assert 'PROCEED 100.0 %' in replayed.stdout
    else:  # SITL: ABSTAIN while PX4 has no position (16 s of 56), then PROCEED
        judgement = next(line for line in lines if line.startswith('judgement: 555 cycles'))
        assert 'PROCEED 67.6 %' in judgement and 'ABSTAIN_UNCERTAIN 32.4 %' in judgement


@needs_realdata
def test_a_real_flight_through_the_graph_gives_the_replay_payloads(tmp_path, ros_env) -> None:
    """The FMUv3 flight (5 Hz GNSS, 110 ms late, logger gaps) over DDS at 4x = ghost_replay."""
    source = tmp_path / 'in'
    subprocess.run([_installed('ghost_px4', 'ghost_import'),
                    str(REALDATA / 'esc_status_log.ulg'), '--output', str(source)],
                   capture_output=True, check=True, timeout=120)
    _live_and_offline(source, tmp_path, ros_env, speed=4)
