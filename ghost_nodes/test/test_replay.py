"""ghost_replay (pure, offline) and ghost_run --input (the real graph over DDS): same payloads."""

import os
from pathlib import Path
import subprocess
import sys

from graph_runs import payloads_by_topic
from input_bags import write_input_bag

from ghost_core.scenarios import generate_scenario
from ghost_nodes.agent_config import pipeline_config_from_files
from ghost_nodes.graph import GHOST_TOPICS
from ghost_nodes.replay import main as replay_main
from ghost_nodes.replay import replay_bag
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


def test_ghost_run_input_gives_the_payloads_of_ghost_replay(tmp_path, ros_env) -> None:
    """The same input bag through the real graph over DDS, at 2x: identical Ghost payloads."""
    scenario = generate_scenario('drift_then_recovery')
    source = write_input_bag(tmp_path / 'in', scenario, fix_delay_ns=50_000_000)
    replay_bag(source, tmp_path / 'replayed', pipeline_config_from_files([GHOST_YAML]))
    result = subprocess.run(
        [sys.executable, '-c', 'import sys; from ghost_nodes.run import main; sys.exit(main())',
         '--input', str(source), '--speed', '2', '--run-dir', str(tmp_path / 'run'),
         '--config-dir', str(CONFIG), '--timeout', '90'],
        env=ros_env, text=True, capture_output=True, timeout=180, check=False)
    assert result.returncode == 0, f'{result.stdout}\n{result.stderr}'
    assert 'ghost: 30/30 cycles actuated' in result.stdout
    live = payloads_by_topic(tmp_path / 'run' / 'bag')
    offline = payloads_by_topic(tmp_path / 'replayed')
    for topic in GHOST_TOPICS:
        assert _by_stamp(live[topic]) == _by_stamp(offline[topic]), topic
    assert os.path.isdir(tmp_path / 'run' / 'logs')
