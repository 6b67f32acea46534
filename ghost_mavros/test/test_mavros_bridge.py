"""mavros_bridge over real DDS, fed by a publisher with MAVROS's topics, types and QoS.

mavros_feed.py publishes what a MAVROS stack publishes (mavros_msgs from the vendored subset,
built by scripts/vendored.sh); the bridge alone against hand-computed cases, then the whole
graph (``ghost_run --mavros``) recorded and verified, every output re-derived from exactly the
MAVROS samples its source_samples names.
"""

import json
from pathlib import Path
import signal
import sys

import pytest

from ghost.bringup import closed_loop_graph, expected_subscribers, GraphOptions, Source
from ghost_px4 import convert as px4

pytestmark = pytest.mark.dds

HERE = Path(__file__).resolve().parent
CONFIG = HERE.parents[1] / 'config'
BRIDGE = HERE.parents[1] / 'install' / 'ghost_mavros' / 'lib' / 'ghost_mavros' / 'mavros_bridge'
GHOST_RUN = [sys.executable, '-c', 'import sys; from ghost.run import main; sys.exit(main())']
FEED = HERE / 'mavros_feed.py'
ORIGIN = px4.GeoOrigin(47.0, 8.0, 400.0)
S = 1_000_000_000


def _odom(t_ns, x=1.0, cov=0.0, twist_cov=0.0):
    pose = [0.0] * 36
    twist = [0.0] * 36
    for i in range(3):
        pose[i * 7], twist[i * 7] = cov, twist_cov
    return {'topic': 'odom', 'fields': {
        'header.stamp': t_ns, 'header.frame_id': 'map', 'child_frame_id': 'base_link',
        'pose.pose.position.x': x, 'pose.pose.position.y': 2.0, 'pose.pose.position.z': 3.0,
        'pose.pose.orientation.w': 1.0, 'twist.twist.linear.x': 0.5, 'pose.covariance': pose,
        'twist.covariance': twist}}


def _navsat(t_ns, north=10.0, east=20.0, status=0):
    lat, lon = px4.reproject(ORIGIN, north, east)
    return {'topic': 'fix', 'fields': {
        'header.stamp': t_ns, 'status.status': status, 'latitude': lat, 'longitude': lon,
        'altitude': 405.0, 'position_covariance': [2.0, 0, 0, 0, 2.0, 0, 0, 0, 9.0],
        'position_covariance_type': 2}}


def _gpsraw(t_ns, north=10.0, fix_type=3):
    lat, lon = px4.reproject(ORIGIN, north, 20.0)
    return {'topic': 'gpsraw', 'fields': {
        'header.stamp': t_ns, 'fix_type': fix_type, 'lat': round(lat * 1e7),
        'lon': round(lon * 1e7), 'alt': 405_000, 'h_acc': 2000, 'v_acc': 3000,
        'eph': 65535, 'epv': 65535}}


def _state(t_ns, mode, armed=True):
    return {'topic': 'state', 'fields': {'header.stamp': t_ns, 'connected': True,
                                         'armed': armed, 'mode': mode}}


def _landed(t_ns, landed_state):
    return {'topic': 'extended_state', 'fields': {'header.stamp': t_ns,
                                                  'landed_state': landed_state}}


def _stop(proc):
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    return err


def test_bridge_turns_px4_mavros_topics_into_ghost_inputs(tmp_path, processes,
                                                          mavros_env) -> None:
    steps = [_state(S // 2, 'AUTO.MISSION'), _landed(S // 2, 2),
             _gpsraw(S - 100),                         # before any belief: fine with an origin
             _odom(S, cov=0.25, twist_cov=0.04),       # PX4 streams LOCAL_POSITION_NED_COV
             _gpsraw(S + S // 10, fix_type=2),         # 2-D: dropped
             _odom(S + 2 * S // 10, x=2.0, cov=0.25, twist_cov=0.04),
             _odom(S + 2 * S // 10, x=9.0),            # not after the previous: dropped
             _gpsraw(S + 3 * S // 10, north=11.0)]
    (tmp_path / 'steps.json').write_text(json.dumps(steps))
    bridge = processes.start([str(BRIDGE), '--ros-args', '-p', 'graph_status:=true',
                              '-p', 'fix_source:=gpsraw', '-p', 'gnss_height:=true',
                              '-p', 'origin:=47.0,8.0,400.0'], mavros_env)
    feed = processes.start([sys.executable, str(FEED), str(tmp_path / 'steps.json')],
                           mavros_env)
    out, err = feed.communicate(timeout=90)
    assert feed.returncode == 0, err
    seen = json.loads(out.strip().splitlines()[-1])
    log = _stop(bridge)
    nav = {m['stamp_ns']: m for m in seen['nav']}
    assert sorted(nav) == [S, S + 2 * S // 10]
    first = nav[S]
    assert (first['frame_id'], first['child_frame_id']) == ('odom', 'base_link')
    assert first['position'] == [1.0, 2.0, 3.0] and first['linear'] == [0.5, 0.0, 0.0]
    assert [first['pose_covariance'][i * 7] for i in range(6)] == [0.25] * 3 + [0.0] * 3
    assert [o['stamp_ns'] for o in seen['obs']] == [S - 100, S + 3 * S // 10]
    assert seen['obs'][0]['position'] == pytest.approx([20.0, 10.0, 5.0], abs=0.02)
    assert seen['obs'][1]['position'] == pytest.approx([20.0, 11.0, 5.0], abs=0.02)
    assert [seen['obs'][0]['covariance'][i * 7] for i in range(3)] == pytest.approx(
        [2.0, 2.0, 9.0])
    # PX4 named from its mode; the orientation block MAVROS never fills, said once.
    assert log.count('states no orientation covariance') == 1, log
    assert 'from PX4' in log and 'dropped fix #1: no 3-D fix' in log, log
    assert 'dropped belief #1: header.stamp not strictly increasing' in log, log


@pytest.mark.parametrize('mode', ['processes', 'single_process'])
def test_ghost_run_mavros_with_ardupilot_abstains_records_and_verifies(
        tmp_path, processes, mavros_env, mode) -> None:
    """ArduPilot through MAVROS: an all-zero covariance, so every cycle is UNKNOWN, never PROCEED.

    The bag verifies (BAUD, ERUR, the chain), holds MAVROS's topics and the source_samples,
    and each recorded output is re-derived from exactly the MAVROS samples it names. The
    bridge says once why Ghost abstains, naming MAVROS and ArduPilot. With --single-process
    the bridge runs in the agent's process (ghost_core.graph.IN_PROCESS_NODES).
    """
    steps = [_state(S // 2, 'LOITER', armed=False), _landed(S // 2, 1)]
    for i in range(20):
        t = S + i * S // 10
        steps.append(_odom(t, x=1.0 + 0.1 * i))
        if i % 2 == 1:
            steps.append(_navsat(t + S // 20, east=20.0 + 0.1 * i))
        if i == 5:
            steps += [_state(t + 1, 'LOITER'), _landed(t + 1, 2)]
        if i == 15:
            steps.append(_state(t + 1, 'RTL'))
    (tmp_path / 'steps.json').write_text(json.dumps(steps))
    run_dir = tmp_path / 'run'
    single = ['--single-process'] if mode == 'single_process' else []
    run = processes.start([*GHOST_RUN, '--mavros', '--timeout', '25', '--run-dir',
                           str(run_dir), *single], mavros_env)
    counts = expected_subscribers(closed_loop_graph(CONFIG, GraphOptions(
        record=True, source=Source.MAVROS)))
    counts['/actuations'] += 1
    feed = processes.start([sys.executable, str(FEED), str(tmp_path / 'steps.json'), '--expect',
                            *[f'{topic.lstrip("/")}={n}' for topic, n in sorted(counts.items())]],
                           mavros_env)
    feed_out, feed_err = feed.communicate(timeout=90)
    assert feed.returncode == 0, feed_err
    out, err = run.communicate(timeout=150)
    assert run.returncode == 0, f'{out}\n{err}'
    assert 'ghost: 20/20 cycles actuated' in out, out
    from ghost_core.levels import DecisionKind, SelfAssessmentLevel
    from ghost_verify.bag import GhostBag
    from ghost_verify.verify import verify_all

    result = verify_all(run_dir / 'bag')
    assert result.baud.holds and result.erur.holds, result
    # The agent re-run from the recorded inputs; no px4_bridge to re-derive.
    assert result.replay is not None and result.replay.holds, result.replay
    assert result.replay.bridge is None
    cycles = list(GhostBag(run_dir / 'bag').cycles())
    assert len(cycles) == 20
    for cycle in cycles:
        assert cycle.raw_assessments[0].overall_level == SelfAssessmentLevel.UNKNOWN
        assert [a.decision_kind for a in cycle.actuations] != [DecisionKind.PROCEED]
    log_name = 'ghost_agent' if single else 'mavros_bridge'
    logs = '\n'.join(path.read_text() for path in (run_dir / 'logs').glob(f'{log_name}*'))
    assert logs.count('MAVROS /mavros/local_position/odom from ArduPilot has an all-zero '
                      'covariance') == 1, logs
    _assert_rederived(run_dir / 'bag')


def _assert_rederived(bag: Path) -> None:
    """Every recorded output equals what its named MAVROS samples give (bridge.rederive)."""
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory

    from ghost_core.hashing import hash_form
    from ghost_mavros import bridge

    config_doc = json.loads((bag / 'manifest.json').read_text())['config']['mavros_bridge']
    assert config_doc['parameters']['origin'] is None  # anchored
    config = bridge.MavrosConfig.from_parameters({
        'fix_source': config_doc['parameters']['fix_source'],
        'autopilot': config_doc['parameters']['autopilot'], 'origin': '',
        'gnss_height': config_doc['parameters']['gnss_height'],
        'gps_uere_m': config_doc['parameters']['gps_uere_m'],
        'gps_delay_ms': config_doc['parameters']['gps_delay_ns'] / 1e6})
    method_of = {f'/{topic}': method for method, topic in bridge.IN_TOPICS.items()}
    samples, outputs, sources = {}, [], {}
    for path in sorted(bag.glob('*.mcap')):
        with path.open('rb') as stream:
            reader = make_reader(stream, decoder_factories=[DecoderFactory()])
            for _, channel, _, msg in reader.iter_decoded_messages():
                topic = channel.topic
                if topic in method_of:
                    samples[(topic, msg.header.stamp.sec * S + msg.header.stamp.nanosec)] = msg
                elif topic == '/source_samples':
                    sources[(msg.output_topic, msg.header.stamp.sec * S
                             + msg.header.stamp.nanosec)] = msg
                elif topic in ('/state/nav', '/observations', '/vehicle_status'):
                    outputs.append((topic, msg))
    assert {topic for topic, _ in samples} == set(config_doc['topics']) - {
        '/state/nav', '/observations', '/vehicle_status', '/source_samples'}
    assert len(outputs) > 30
    for topic, msg in outputs:
        named = sources[(topic, msg.header.stamp.sec * S + msg.header.stamp.nanosec)]
        assert set(named.stamp_fields) == {'header.stamp'}
        given = [(method_of[t], samples[(t, stamp)])
                 for t, stamp in zip(named.source_topics, named.stamps, strict=True)]
        expected = bridge.rederive(config, topic.lstrip('/'), given)
        assert hash_form(msg) == hash_form(expected), (topic, expected)


def test_ghost_run_mavros_without_mavros_msgs_is_a_usage_error(tmp_path, ros_env) -> None:
    """One line naming what is missing and where to get it; nothing started, nothing written."""
    import subprocess

    # ros_env: the workspace without the vendored mavros_msgs.
    result = subprocess.run([*GHOST_RUN, '--mavros', '--run-dir', str(tmp_path / 'r')],
                            env=ros_env, text=True, capture_output=True, timeout=60, check=False)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == (
        'ghost_run: error: --mavros needs mavros_msgs, which this workspace lacks: source your '
        'MAVROS workspace (docs/integration.md, MAVROS)')
    assert not (tmp_path / 'r').exists()
