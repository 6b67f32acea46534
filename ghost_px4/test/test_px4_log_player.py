"""px4_log_player and mission_setpoints: a real PX4 flight log played as PX4 would.

The playback (ghost_px4.ulog_topics) is checked against the logs as pyulog reads them; the
player over real DDS into a subscriber with PX4's QoS (px4_listen.py), and into the real
px4_bridge, whose beliefs must be the ones ghost_import makes of the same log. The stand-in
mission is driven by a test vehicle (mission_probe.py).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
from pathlib import Path
import signal
import subprocess
import sys
from typing import Any

import numpy
import pytest
from test_ulog_import import (
    ATTITUDE_FIELDS,
    local_position,
    LOCAL_POSITION_FIELDS,
    ulog_bytes,
)

from ghost_bag.recorded_inputs import read_inputs
from ghost_core import geometry
from ghost_px4 import ulog_read, ulog_topics
from ghost_px4.nodes.mission_setpoints import mission_setpoint
from ghost_px4.ulog_import import main as import_ulog

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
REALDATA = REPO.parent / 'shared' / 'realdata'
ESC_LOG = REALDATA / 'esc_status_log.ulg'
SITL_LOG = REALDATA / '14_19_29.ulg'
NO_GNSS_LOG = REALDATA / 'quadrotor_local.ulg'
needs_realdata = pytest.mark.skipif(not REALDATA.is_dir(),
                                    reason=f'{REALDATA} (the shared real logs) is missing')
BIN = REPO / 'install' / 'ghost_px4' / 'lib' / 'ghost_px4'
PLAYER, BRIDGE, MISSION = BIN / 'px4_log_player', BIN / 'px4_bridge', BIN / 'mission_setpoints'
LISTEN, PROBE = HERE / 'px4_listen.py', HERE / 'mission_probe.py'
PLAYED = ulog_topics.PLAYED_TOPICS
NAN = float('nan')


# --- helpers ---

@pytest.fixture(scope='module')
def message_fields(px4_msgs_env: dict[str, str]) -> dict[str, dict[str, str]]:
    """The px4_msgs types' fields and rosidl types, as the node passes them to playback."""
    script = ('import json; import px4_msgs.msg as m; print(json.dumps({'
              "'vehicle_odometry': m.VehicleOdometry, "
              "'vehicle_local_position': m.VehicleLocalPosition, "
              "'vehicle_gps_position': m.SensorGps, 'vehicle_status': m.VehicleStatus, "
              "'vehicle_land_detected': m.VehicleLandDetected, "
              "'mission_result': m.MissionResult}, "
              'default=lambda kind: kind.get_fields_and_field_types()))')
    out = subprocess.run([sys.executable, '-c', script], env=px4_msgs_env, check=True,
                         capture_output=True, text=True, timeout=60)
    fields: dict[str, dict[str, str]] = json.loads(out.stdout)
    return fields


def _pyulog(path: Path, topic: str) -> dict[str, numpy.ndarray]:
    """A topic's columns as pyulog reads them (first instance), independently of the player."""
    from pyulog import ULog

    ulog = ULog(str(path), [topic])
    return next(dict(d.data) for d in ulog.data_list if d.name == topic and d.multi_id == 0)


def _log_start_us(path: Path) -> int:
    from pyulog import ULog

    return int(ULog(str(path), []).start_timestamp)


def _playback(path: Path, fields: dict[str, dict[str, str]], **kwargs: Any) -> Any:
    ulog, _ = ulog_read.load_ulog(path, ulog_topics.PLAYER_LOADED_TOPICS)
    return ulog_topics.playback(ulog, fields, **kwargs)


def _in_window(times: numpy.ndarray, start_us: int, end_us: int | None) -> list[int]:
    return [int(t) for t in times if t >= start_us and (end_us is None or t < end_us)]


def _expected(*extra: str, readers: int = 1) -> str:
    topics = [f'fmu/out/{topic}={readers}' for topic in PLAYED] + list(extra)
    return 'expected_subscribers:=[' + ','.join(f"'{t}'" for t in topics) + ']'


def _run_player(processes: Any, env: dict[str, str], log: Path, params: list[str],
                listen: list[str], expected: str) -> tuple[dict[str, Any], str]:
    """Start the listener and the player; return what the listener got and the player's log."""
    listener = processes.start([sys.executable, str(LISTEN), *listen], env)
    argv = [str(PLAYER), '--ros-args', '-p', f'log:={log}', '-p', expected]
    for param in params:
        argv += ['-p', param]
    player = processes.start(argv, env)
    out, err = listener.communicate(timeout=90)
    assert listener.returncode == 0, err
    assert player.poll() is None, player.communicate()[1]  # a source waits to be stopped
    player.send_signal(signal.SIGINT)
    _, player_log = player.communicate(timeout=20)
    seen = json.loads(out.strip().splitlines()[-1])
    assert not seen['timed_out'], player_log
    return seen, player_log


# --- the px4_bridge parameters of a log ---

def test_bridge_parameters_from_vehicle_parameters() -> None:
    assert ulog_topics.bridge_parameters_of({'EKF2_HGT_MODE': 1, 'EKF2_GPS_DELAY': 95.0}) == {
        'ekf2_hgt_ref': 1, 'gps_delay_ms': 95.0}
    # PX4 1.14+'s name wins; the bridge cannot take what it does not know.
    assert ulog_topics.bridge_parameters_of({'EKF2_HGT_REF': 2, 'EKF2_HGT_MODE': 1}) == {
        'ekf2_hgt_ref': 2}
    assert ulog_topics.bridge_parameters_of({'EKF2_HGT_REF': 7, 'EKF2_GPS_DELAY': NAN}) == {}
    assert ulog_topics.bridge_parameters_of({'EKF2_GPS_DELAY': -5.0}) == {}


@needs_realdata
@pytest.mark.parametrize('log', [ESC_LOG, SITL_LOG], ids=['fmuv3', 'sitl'])
def test_bridge_parameters_of_the_real_logs(log: Path) -> None:
    # Both vehicles: barometric height (EKF2_HGT_MODE 0), GNSS delay 110 ms.
    assert ulog_topics.bridge_parameters(log) == {'ekf2_hgt_ref': 0, 'gps_delay_ms': 110.0}


@needs_realdata
def test_duration_of_the_real_logs(message_fields) -> None:
    for log in (ESC_LOG, SITL_LOG):
        span = _playback(log, message_fields).span_s
        assert ulog_topics.ulog_duration_s(log) == pytest.approx(span, abs=1e-6)
    # its land detector runs 0.4 s past its other played topics
    assert ulog_topics.ulog_duration_s(ESC_LOG) == pytest.approx(39.95, abs=0.01)
    assert ulog_topics.ulog_duration_s(SITL_LOG) == pytest.approx(57.56, abs=0.01)


# --- the playback, against the logs as pyulog reads them ---

@needs_realdata
@pytest.mark.parametrize('log', [ESC_LOG, SITL_LOG], ids=['fmuv3', 'sitl'])
def test_playback_is_every_sample_in_log_order(log: Path, message_fields) -> None:
    playback = _playback(log, message_fields, name=log.name)
    local = _pyulog(log, 'vehicle_local_position')['timestamp']
    gps = _pyulog(log, 'vehicle_gps_position')['timestamp']
    status = _pyulog(log, 'vehicle_status')['timestamp']
    land = _pyulog(log, 'vehicle_land_detected')['timestamp']
    assert playback.counts() == {'vehicle_odometry': len(local),  # derived, one per sample
                                 'vehicle_local_position': len(local),
                                 'vehicle_gps_position': len(gps),
                                 'vehicle_status': len(status),
                                 'vehicle_land_detected': len(land)}
    assert playback.absent == ('mission_result',)  # neither log has one
    assert playback.topics['vehicle_odometry'].source == ulog_topics.DERIVED_ODOMETRY
    times = [t for t, _, _ in playback.order]
    assert times == sorted(times)
    for topic, logged in (('vehicle_local_position', local), ('vehicle_gps_position', gps),
                          ('vehicle_status', status), ('vehicle_land_detected', land)):
        rows = [row for _, name, row in playback.order if name == topic]
        assert rows == list(range(len(logged)))
    # A derived odometry goes just before the local position it comes from.
    first = playback.order.index((int(local[0]), 'vehicle_local_position', 0))
    assert playback.order[first - 1] == (int(local[0]), 'vehicle_odometry', 0)


@needs_realdata
def test_playback_window(message_fields) -> None:
    start_us = _log_start_us(SITL_LOG)
    playback = _playback(SITL_LOG, message_fields, start_s=20.0, duration_s=10.0)
    window = (start_us + 20_000_000, start_us + 30_000_000)
    for topic in ('vehicle_local_position', 'vehicle_gps_position', 'vehicle_status'):
        expected = _in_window(_pyulog(SITL_LOG, topic)['timestamp'], *window)
        assert [t for t, name, _ in playback.order if name == topic] == expected, topic
        assert expected, topic
    assert (playback.start_us, playback.end_us) == window


@needs_realdata
def test_played_fields_are_the_logs_own(message_fields) -> None:
    """Same name: copied; older names and units (PX4 v1.9): converted; the rest: listed."""
    playback = _playback(ESC_LOG, message_fields)
    gps, local = _pyulog(ESC_LOG, 'vehicle_gps_position'), _pyulog(ESC_LOG,
                                                                   'vehicle_local_position')
    status = _pyulog(ESC_LOG, 'vehicle_status')
    fix = playback.topics['vehicle_gps_position'].fields(17)
    assert fix['timestamp'] == int(gps['timestamp'][17])
    assert fix['latitude_deg'] == pytest.approx(int(gps['lat'][17]) * 1e-7, abs=1e-12)
    assert fix['longitude_deg'] == pytest.approx(int(gps['lon'][17]) * 1e-7, abs=1e-12)
    assert fix['altitude_msl_m'] == pytest.approx(int(gps['alt'][17]) * 1e-3, abs=1e-9)
    assert (fix['eph'], fix['fix_type']) == (float(gps['eph'][17]), int(gps['fix_type'][17]))
    assert 'device_id' in playback.topics['vehicle_gps_position'].missing
    assert 'device_id' not in fix and 'timestamp_sample' not in fix
    sample = playback.topics['vehicle_local_position'].fields(40)
    assert (sample['x'], sample['heading']) == (float(local['x'][40]), float(local['yaw'][40]))
    assert sample['delta_xy'] == [float(local['delta_xy[0]'][40]),
                                  float(local['delta_xy[1]'][40])]
    assert sample['xy_valid'] is bool(local['xy_valid'][40])
    assert sample['ref_lat'] == float(local['ref_lat'][40])
    state = playback.topics['vehicle_status'].fields(5)
    assert state['nav_state'] == int(status['nav_state'][5])
    assert state['gcs_connection_lost'] is bool(status['data_link_lost'][5])


@needs_realdata
def test_derived_odometry_is_the_local_position_with_the_attitude(message_fields) -> None:
    playback = _playback(ESC_LOG, message_fields)
    local = _pyulog(ESC_LOG, 'vehicle_local_position')
    attitude = _pyulog(ESC_LOG, 'vehicle_attitude')
    row = 100
    odom = playback.topics['vehicle_odometry'].fields(row)
    t = int(local['timestamp'][row])
    assert odom['timestamp'] == t and (odom['pose_frame'], odom['velocity_frame']) == (1, 1)
    assert odom['position'] == [float(local[k][row]) for k in 'xyz']
    eph, epv = float(local['eph'][row]), float(local['epv'][row])
    assert odom['position_variance'] == pytest.approx([eph**2 / 2, eph**2 / 2, epv**2])
    latest = int(numpy.searchsorted(attitude['timestamp'], t, side='right')) - 1
    assert t - int(attitude['timestamp'][latest]) <= 100_000
    assert odom['q'] == [float(attitude[f'q[{i}]'][latest]) for i in range(4)]
    assert odom['angular_velocity'] == [float(attitude[k][latest])
                                        for k in ('rollspeed', 'pitchspeed', 'yawspeed')]
    assert all(v > 0 for v in odom['orientation_variance'])


def _blocks(cov36: Any) -> tuple[numpy.ndarray, ...]:
    """The 3x3 blocks (0,0), (0,3), (3,0), (3,3) of a row-major 6x6."""
    full = numpy.array(cov36, dtype=numpy.float64).reshape(6, 6)
    return full[:3, :3], full[:3, 3:], full[3:, :3], full[3:, 3:]


def _write(tmp_path: Path, data: bytes, name: str = 'log.ulg') -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_derived_odometry_marks_what_is_not_valid_or_not_known(tmp_path, message_fields) -> None:
    """No attitude within 100 ms: NaN attitude; invalid position: kept, NaN variances.

    A position PX4 flags invalid is still PX4's belief (SPEC §5: judged, never dropped): the
    player keeps it and writes PX4's NaN ("unknown") variances, which px4_bridge marks invalid.
    """
    data = ulog_bytes({
        'vehicle_local_position': (LOCAL_POSITION_FIELDS, [
            local_position(1_000_000), local_position(1_100_000),
            local_position(1_200_000, xy_valid=False)]),
        'vehicle_attitude': (ATTITUDE_FIELDS, [
            dict(timestamp=1_050_000 + k * 20_000, q=(1.0, 0.0, 0.0, 0.0), rollspeed=0.1)
            for k in range(10)])}, {})
    playback = _playback(_write(tmp_path, data), message_fields)
    odom = playback.topics['vehicle_odometry']
    first, second, third = (odom.fields(k) for k in range(3))
    assert all(math.isnan(v) for v in first['q'])
    assert first['position'] == [1.0, 2.0, -3.0]
    assert second['q'] == [1.0, 0.0, 0.0, 0.0]
    assert second['angular_velocity'] == pytest.approx([0.1, 0.0, 0.0])
    assert second['velocity_variance'] == pytest.approx([0.02, 0.02, 0.01])
    assert all(math.isnan(v) for v in second['orientation_variance'])  # no estimator_status
    assert third['position'] == [1.0, 2.0, -3.0]
    assert all(math.isnan(v) for v in third['position_variance'])
    assert third['velocity'] == [0.0, 5.0, 0.0]
    assert third['velocity_variance'] == pytest.approx([0.02, 0.02, 0.01])
    assert 'vehicle_gps_position' in playback.absent and 'vehicle_status' in playback.absent


def test_old_vehicle_odometry_layout_is_converted(tmp_path, message_fields) -> None:
    """PX4 1.10-1.13: x, y, z, local_frame and 21-value covariances -> the 1.17 layout."""
    diagonal = [0.1, 0.2, 0.3, 0.01, 0.02, 0.03]
    urt = [0.0] * 21
    for value, index in zip(diagonal, (0, 6, 11, 15, 18, 20), strict=True):
        urt[index] = value
    fields = [('uint64_t', 'timestamp'), ('uint64_t', 'timestamp_sample'), ('float', 'x'),
              ('float', 'y'), ('float', 'z'), ('float[4]', 'q'), ('float', 'vx'),
              ('float', 'vy'), ('float', 'vz'), ('float', 'rollspeed'), ('float', 'pitchspeed'),
              ('float', 'yawspeed'), ('float[21]', 'pose_covariance'),
              ('float[21]', 'velocity_covariance'), ('uint8_t', 'local_frame'),
              ('uint8_t', 'velocity_frame')]
    sample = dict(timestamp=2_000_000, timestamp_sample=1_990_000, x=1.0, y=2.0, z=-3.0,
                  q=(1.0, 0.0, 0.0, 0.0), vx=0.5, vy=0.25, vz=0.0, rollspeed=0.0,
                  pitchspeed=0.0, yawspeed=0.125, pose_covariance=urt,
                  velocity_covariance=urt, local_frame=0, velocity_frame=3)
    data = ulog_bytes({'vehicle_odometry': (fields, [sample])}, {})
    odom = _playback(_write(tmp_path, data), message_fields).topics['vehicle_odometry']
    got = odom.fields(0)
    assert odom.source == 'vehicle_odometry'
    assert (got['timestamp'], got['timestamp_sample']) == (2_000_000, 1_990_000)
    assert (got['pose_frame'], got['velocity_frame']) == (1, 3)  # NED; body FRD
    assert got['position'] == [1.0, 2.0, -3.0] and got['velocity'] == [0.5, 0.25, 0.0]
    assert got['angular_velocity'] == [0.0, 0.0, 0.125]
    assert got['position_variance'] == pytest.approx(diagonal[:3])
    assert got['orientation_variance'] == pytest.approx(diagonal[3:])
    assert got['velocity_variance'] == pytest.approx(diagonal[:3])


def test_a_log_without_position_or_an_empty_window_is_refused(tmp_path, message_fields) -> None:
    only_attitude = ulog_bytes({'vehicle_attitude': (ATTITUDE_FIELDS, [
        dict(timestamp=1_000_000, q=(1.0, 0.0, 0.0, 0.0))])}, {})
    with pytest.raises(ulog_read.UlogReadError, match='neither vehicle_odometry nor '
                       'vehicle_local_position is logged'):
        _playback(_write(tmp_path, only_attitude), message_fields, name='x.ulg')
    positions = ulog_bytes({'vehicle_local_position': (LOCAL_POSITION_FIELDS, [
        local_position(1_000_000 + k * 100_000) for k in range(10)])}, {})
    with pytest.raises(ulog_read.UlogReadError,
                       match=r'no message .* in the window 5 \.\. end s'):
        _playback(_write(tmp_path, positions, 'p.ulg'), message_fields, start_s=5.0)


# --- the node over real DDS ---

@needs_realdata
def test_player_publishes_the_whole_log_as_px4_would(processes, px4_env) -> None:
    """Every sample of every topic, in order, with the log's timestamps and values, paced."""
    seen, log = _run_player(processes, px4_env, SITL_LOG, ['speed:=20.0'], [], _expected())
    local = _pyulog(SITL_LOG, 'vehicle_local_position')
    gps = _pyulog(SITL_LOG, 'vehicle_gps_position')
    status = _pyulog(SITL_LOG, 'vehicle_status')
    stamps = {topic: [m['timestamp'] for m in seen[topic]] for topic in PLAYED}
    assert stamps['vehicle_local_position'] == local['timestamp'].tolist()
    assert stamps['vehicle_odometry'] == local['timestamp'].tolist()
    assert stamps['vehicle_gps_position'] == gps['timestamp'].tolist()
    assert stamps['vehicle_status'] == status['timestamp'].tolist()
    land = _pyulog(SITL_LOG, 'vehicle_land_detected')
    assert stamps['vehicle_land_detected'] == land['timestamp'].tolist()
    assert [m['landed'] for m in seen['vehicle_land_detected']] == [
        bool(v) for v in land['landed']]
    assert stamps['mission_result'] == []  # not in the log: the topic stays silent
    for k in (0, len(local['x']) // 2, len(local['x']) - 1):
        got = seen['vehicle_local_position'][k]
        for name in ('x', 'y', 'z', 'vx', 'eph', 'epv', 'ref_lat', 'ref_lon', 'ref_alt'):
            assert got[name] == float(local[name][k]), (k, name)
        assert got['xy_valid'] is bool(local['xy_valid'][k])
        assert got['heading'] == float(local['yaw'][k])
        assert got['timestamp_sample'] == 0  # not in a PX4 v1.x log: the message's default
    for k in (0, 300, len(gps['lat']) - 1):
        got = seen['vehicle_gps_position'][k]
        assert got['latitude_deg'] == pytest.approx(int(gps['lat'][k]) * 1e-7, abs=1e-12)
        assert got['altitude_msl_m'] == pytest.approx(int(gps['alt'][k]) * 1e-3, abs=1e-9)
        assert (got['fix_type'], got['eph']) == (int(gps['fix_type'][k]), float(gps['eph'][k]))
    for k in (0, len(status['nav_state']) - 1):
        got = seen['vehicle_status'][k]
        assert (got['nav_state'], got['arming_state']) == (int(status['nav_state'][k]),
                                                           int(status['arming_state'][k]))
    # At 20x, 57.6 s of log take ~2.9 s: far less than the log, and not all at once.
    span_s = (int(local['timestamp'][-1]) - int(gps['timestamp'][0])) / 1e6
    received = [m['_received_s'] for topic in PLAYED for m in seen[topic]]
    assert span_s / 20 * 0.5 < max(received) - min(received) < span_s / 2
    # every sample: odometry (derived) and local position, GNSS, status, land detector
    total = 2 * len(local['x']) + len(gps['lat']) + len(status['nav_state']) + len(land['landed'])
    assert total == 1813 and f'px4 log complete: {total} messages published' in log
    assert 'not in the log (left at defaults): timestamp_sample, device_id' in log
    assert 'px4_bridge parameters of this vehicle: ekf2_hgt_ref=0, gps_delay_ms=110.0' in log


@needs_realdata
@pytest.mark.parametrize('log, least_fixes', [(ESC_LOG, 80), (NO_GNSS_LOG, 0)],
                         ids=['fmuv3', 'no-gnss'])
def test_player_into_px4_bridge_makes_the_importers_beliefs(tmp_path, processes, px4_env,
                                                             log: Path,
                                                             least_fixes: int) -> None:
    """A 20 s window of a flight through px4_bridge: state/nav and observations out.

    The beliefs are the ones ghost_import makes of the same log (same stamps and
    positions, the same position and velocity covariance blocks, the same velocities where
    they are valid), the fixes too; PX4's topics are best-effort, so the bridge may miss a few
    samples, never alter one. On the flight without a GNSS fix (quadrotor_local) PX4 flags
    the position and velocity invalid throughout: every belief is still published, with both
    blocks marked invalid (+inf), as the importer writes them; there is no fix.

    The orientation block is compared by its trace only. The importer writes the NED rotation
    covariance it derives (estimator_status, or tilt_var/heading_var); the player, as EKF2
    does (getRotVarBody), publishes only its diagonal about the body axes, and the bridge
    rotates that diagonal back into the world. The cross terms about the body axes are lost
    on the way, so the blocks differ, but a rotation keeps the trace (the total rotation
    variance); rel 1e-5 allows for the float32 message fields.
    """
    overrides = ulog_topics.bridge_parameters(log)
    bridge = processes.start([str(BRIDGE), '--ros-args', *(
        a for name, value in overrides.items() for a in ('-p', f'{name}:={value}')),
        '-p', 'graph_status:=true'], px4_env)
    seen, _ = _run_player(processes, px4_env, log,
                          ['speed:=10.0', 'start_s:=10.0', 'duration_s:=20.0'], ['--ghost'],
                          _expected('state/nav=1', 'observations=1', readers=2))
    assert bridge.poll() is None
    start_us = _log_start_us(log)
    window = (start_us + 10_000_000, start_us + 30_000_000)
    for topic in ('vehicle_local_position', 'vehicle_gps_position', 'vehicle_status'):
        expected = _in_window(_pyulog(log, topic)['timestamp'], *window)
        assert [m['timestamp'] for m in seen[topic]] == expected, topic

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert import_ulog([str(log), '--output', str(tmp_path / 'bag')]) == 0
    imported = list(read_inputs(tmp_path / 'bag', '/state/nav', '/observations'))
    delay_ns = int(overrides.get('gps_delay_ms', 110.0) * 1e6)
    beliefs = {m.sample.stamp_ns: m.sample for m in imported if m.topic == '/state/nav'
               and window[0] * 1000 <= m.sample.stamp_ns < window[1] * 1000}
    fixes = {m.sample.stamp_ns: m.sample for m in imported if m.topic == '/observations'
             and window[0] * 1000 <= m.sample.stamp_ns + delay_ns < window[1] * 1000}
    assert len(beliefs) > 150 and len(fixes) >= least_fixes
    assert len(seen['nav']) >= 0.95 * len(beliefs), (len(seen['nav']), len(beliefs))
    assert len(seen['obs']) >= 0.95 * len(fixes) - 1, (len(seen['obs']), len(fixes))
    for nav in seen['nav']:
        want = beliefs[nav['stamp_ns']]
        assert nav['position'] == list(want.position)
        got_pose, want_pose = _blocks(nav['pose_covariance']), _blocks(want.pose_covariance)
        assert list(got_pose[0].flat) == pytest.approx(list(want_pose[0].flat), rel=1e-6)
        assert not got_pose[1].any() and not want_pose[1].any() and not got_pose[2].any()
        assert numpy.trace(got_pose[3]) == pytest.approx(numpy.trace(want_pose[3]), rel=1e-5)
        assert numpy.trace(want_pose[3]) > 0.0
        body_velocity = _blocks(nav['twist_covariance'])[0]
        want_velocity = _blocks(want.twist_covariance)[0]
        if not numpy.isfinite(want_velocity).all():
            # Marked invalid (+inf): the bridge's body-frame block is the same +inf diagonal
            # the importer wrote (its reader rotates it into the world).
            assert list(body_velocity.flat) == [math.inf, 0, 0, 0, math.inf, 0, 0, 0, math.inf]
            continue
        # The bridge's twist is in the body (REP 105); the importer's sample is in the world.
        rotation = numpy.array(geometry.rotation_matrix(nav['orientation'])).reshape(3, 3)
        velocity = rotation @ numpy.array(nav['linear'])
        assert velocity.tolist() == pytest.approx(list(want.velocity), rel=1e-5, abs=1e-6)
        world = rotation @ body_velocity @ rotation.T
        assert list(world.flat) == pytest.approx(list(want_velocity.flat), rel=1e-5, abs=1e-9)
    if log == NO_GNSS_LOG:
        assert all(_blocks(nav['pose_covariance'])[0].diagonal().tolist() == [math.inf] * 3
                   for nav in seen['nav'])
    for obs in seen['obs']:
        want = fixes[obs['stamp_ns']]
        assert obs['position'] == list(want.position)
        position_block = [obs['covariance'][6 * r + c] for r in range(3) for c in range(3)]
        assert position_block == pytest.approx(list(want.covariance), rel=1e-6)


def test_bad_log_values_are_refused_at_start_up(tmp_path, processes, px4_env) -> None:
    (tmp_path / 'notes.ulg').write_text('not a flight log\n')
    only_attitude = ulog_bytes({'vehicle_attitude': (ATTITUDE_FIELDS, [
        dict(timestamp=1_000_000, q=(1.0, 0.0, 0.0, 0.0))])}, {})
    cases = {
        'missing': (f'log:={tmp_path / "nope.ulg"}', 'no such file'),
        'not a ULog': (f'log:={tmp_path / "notes.ulg"}', 'not a ULog file'),
        'no position': (f'log:={_write(tmp_path, only_attitude)}',
                        'neither vehicle_odometry nor vehicle_local_position'),
        'unset': ("log:=''", "parameter 'log' must name the PX4 flight log"),
    }
    started = {name: processes.start([str(PLAYER), '--ros-args', '-p', param], px4_env)
               for name, (param, _) in cases.items()}
    for name, proc in started.items():
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 2, (name, err)
        errors = [line for line in err.splitlines() if line.startswith('error: ')]
        assert len(errors) == 1 and cases[name][1] in errors[0], (name, err)
        assert 'Traceback' not in err, name


# --- the stand-in mission ---

def test_mission_path_hover_then_square() -> None:
    start = (1.0, 2.0, -3.0)

    def at(t_s):
        return mission_setpoint(t_s, start, hover_s=2.0, side_m=4.0, speed_m_s=1.0)

    assert at(-1.0) == (start, (0.0, 0.0, 0.0)) and at(1.9) == (start, (0.0, 0.0, 0.0))
    assert at(4.5) == ((3.5, 2.0, -3.0), (1.0, 0.0, 0.0))      # north leg
    assert at(7.0) == ((5.0, 3.0, -3.0), (0.0, 1.0, 0.0))      # east
    assert at(11.0) == ((4.0, 6.0, -3.0), (-1.0, 0.0, 0.0))    # south
    assert at(15.0) == ((1.0, 5.0, -3.0), (0.0, -1.0, 0.0))    # west
    assert at(18.5) == ((1.5, 2.0, -3.0), (1.0, 0.0, 0.0))     # around again


def test_mission_node_starts_at_the_first_valid_position_on_px4_time(tmp_path, processes,
                                                                     px4_env) -> None:
    mission = processes.start([str(MISSION), '--ros-args', '-p', 'hover_s:=2.0', '-p',
                               'side_m:=4.0', '-p', 'speed_m_s:=1.0', '-p', 'rate_hz:=20.0',
                               '-p', 'graph_status:=true'],
                              px4_env)

    def local(t_us, **changes):
        fields = {'timestamp': t_us, 'xy_valid': True, 'z_valid': True, 'x': 1.0, 'y': 2.0,
                  'z': -3.0}
        fields.update(changes)
        return {'fields': fields, 'hold_s': 0.8}

    phases = [local(1_000_000, xy_valid=False),     # not valid: no mission yet
              local(2_000_000),                      # the start: hover there
              local(6_500_000, x=50.0),              # 4.5 s later: 2.5 m up the north leg
              local(9_000_000, x=-7.0),              # 7 s: 1 m along the east leg
              local(20_500_000)]                     # 18.5 s: around the square again
    (tmp_path / 'phases.json').write_text(json.dumps(phases))
    probe = processes.start([sys.executable, str(PROBE), str(tmp_path / 'phases.json')],
                            px4_env)
    out, err = probe.communicate(timeout=60)
    assert probe.returncode == 0, err
    assert mission.poll() is None
    seen = json.loads(out.strip().splitlines()[-1])
    assert seen[0] == []
    expected = [((1.0, 2.0, -3.0), (0.0, 0.0, 0.0), 2_000_000),
                ((3.5, 2.0, -3.0), (1.0, 0.0, 0.0), 6_500_000),
                ((5.0, 3.0, -3.0), (0.0, 1.0, 0.0), 9_000_000),
                ((1.5, 2.0, -3.0), (1.0, 0.0, 0.0), 20_500_000)]
    for setpoints, (position, velocity, stamp) in zip(seen[1:], expected, strict=True):
        assert len(setpoints) >= 5, setpoints  # 20 Hz for 0.5 s
        for sp in setpoints:
            assert sp['position'] == pytest.approx(list(position), abs=1e-6)
            assert sp['velocity'] == pytest.approx(list(velocity), abs=1e-6)
            assert sp['timestamp'] == stamp
            assert sp['acceleration'] == [None] * 3 and sp['jerk'] == [None] * 3
            assert sp['yaw'] is None and sp['yawspeed'] is None

