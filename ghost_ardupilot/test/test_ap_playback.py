"""A DataFlash log as AP_DDS would publish it (ap_playback), on the real logs: what and when."""

import importlib.util
from pathlib import Path
import subprocess

import pytest

from ghost_ardupilot import ap_playback
from ghost_ardupilot.dataflash_read import load_dataflash
from ghost_ardupilot.dataflash_streams import EkfLayout, import_beliefs

REALDATA = Path(__file__).resolve().parents[2].parent / 'shared' / 'realdata' / 'ardupilot'
LOGS = sorted(REALDATA.glob('*.bin'))

pytestmark = pytest.mark.skipif(not LOGS, reason=f'no logs in {REALDATA} (../shared beside '
                                                 'the clone)')


def _stamp(message: dict) -> int:
    stamp = message['header']['stamp']
    return int(stamp['sec']) * 1_000_000_000 + int(stamp['nanosec'])


@pytest.mark.parametrize('path', LOGS, ids=[log.name for log in LOGS])
def test_the_odometry_is_the_imported_belief_and_the_pose_is_about_home(path: Path) -> None:
    """The odometry is ghost_import's belief; the pose is about HOME.

    Each EKF state gives odometry, pose and twist stamped alike; the odometry is the belief
    ghost_import writes for the same sample (the XKF4 bits aside), the pose that belief moved
    from the EKF origin to HOME.
    """
    log = load_dataflash(path, ap_playback.LOADED_TYPES)
    played = ap_playback.playback(log)
    by_topic: dict[str, list[dict]] = {}
    for time_ns, topic, message in played.order:
        assert _stamp(message) == time_ns
        by_topic.setdefault(topic, []).append(message)
    odometry, poses = by_topic['/ap/odometry/filtered'], by_topic['/ap/pose/filtered']
    assert len(odometry) == len(poses) == len(by_topic['/ap/twist/filtered']) > 0
    layout = EkfLayout.of(log)
    assert layout is not None
    imported = {stamp: message for stamp, _, message in
                import_beliefs(log, layout, None).messages}
    same = [m for m in odometry if _stamp(m) in imported and not imported[_stamp(m)]['pose'][
        'covariance'][0] == float('inf')]
    assert len(same) > 0.9 * len(odometry)
    for message in same:
        assert message['pose'] == imported[_stamp(message)]['pose']
    offsets = {tuple(round(o['pose']['pose']['position'][axis] - p['pose']['position'][axis], 6)
                     for axis in 'xyz') for o, p in zip(odometry, poses, strict=True)}
    assert len(offsets) == 1  # one HOME for the whole flight
    assert all(m['frame_id'] == 'base_link' for m in (p['header'] for p in poses))


@pytest.mark.parametrize('path', LOGS, ids=[log.name for log in LOGS])
def test_the_origin_and_the_status_repeat_and_the_fixes_state_their_accuracy(path: Path) -> None:
    """The origin once a second, the status twice, the fixes with their accuracy.

    /ap/gps_global_origin/filtered once a second, /ap/status at least twice a second, the
    fixes with diag(HAcc², HAcc², VAcc²) DIAGONAL_KNOWN.
    """
    played = ap_playback.playback(load_dataflash(path, ap_playback.LOADED_TYPES))
    times: dict[str, list[int]] = {}
    fixes = []
    for time_ns, topic, message in played.order:
        times.setdefault(topic, []).append(time_ns)
        if topic == '/ap/navsat':
            fixes.append(message)
    for topic, period in (('/ap/gps_global_origin/filtered', 1_000_000_000),
                          ('/ap/status', 500_000_000)):
        gaps = [b - a for a, b in zip(times[topic][:-1], times[topic][1:], strict=True)]
        assert gaps and max(gaps) <= period, topic
    known = [f for f in fixes if f['position_covariance_type'] == 2]
    assert len(known) > 0.9 * len(fixes)
    for fix in known:
        cov = fix['position_covariance']
        assert cov[0] == cov[4] > 0 and cov[8] > 0 and cov[1] == cov[2] == 0.0


def _ghost_run_bad_log(tmp_path: Path, env: dict[str, str] | None
                      ) -> subprocess.CompletedProcess[str]:
    bad = tmp_path / 'flight.bin'
    bad.write_bytes(b'ULog\x01\x12\x35')
    return subprocess.run(['ghost_run', '--ardupilot-log', str(bad), '--run-dir',
                           str(tmp_path / 'run')], capture_output=True, text=True,
                          timeout=120, check=False, env=env)


def test_ghost_run_without_ardupilot_msgs_says_how_to_get_them(tmp_path: Path) -> None:
    """Without ardupilot_msgs: one usage line pointing at make demo-ardupilot, exit 2."""
    if importlib.util.find_spec('ardupilot_msgs') is not None:
        pytest.skip('ardupilot_msgs is importable here (a sourced ArduPilot workspace)')
    result = _ghost_run_bad_log(tmp_path, None)
    assert result.returncode == 2 and result.stderr.count('\n') == 1, result.stderr
    assert '`make demo-ardupilot`' in result.stderr
    assert not (tmp_path / 'run').exists()


def test_ghost_run_refuses_a_log_that_is_not_dataflash_in_one_line(
        tmp_path: Path, ardupilot_msgs_env: dict[str, str]) -> None:
    """--ardupilot-log of a file that is not DataFlash: one line naming it, exit 3."""
    result = _ghost_run_bad_log(tmp_path, ardupilot_msgs_env)
    assert result.returncode == 3, result.stderr
    assert result.stderr.count('\n') == 1 and 'not a DataFlash log' in result.stderr, \
        result.stderr
