"""verify_all re-derives px4_bridge's conversion from the recorded fmu/out messages.

The bags hold what a PX4 run records: the bridge's PX4 inputs (px4_msgs, the vendored subset's
schemas), its outputs (/state/nav, /observations, /vehicle_status) made by the bridge's own
rules (ghost_px4.bridge, what the node runs) from the float32 values PX4 sends, the agent's
messages from those outputs, and manifest.json with both configurations. The real node over
DDS is ghost/test/test_px4_log_run.py.
"""

from __future__ import annotations

from collections.abc import Callable
import importlib
import math
from pathlib import Path
import struct
import sys
from types import SimpleNamespace
from typing import Any

from bags import MSG_DIR
import pytest
from run_bags import RecordedInput, run_config, run_messages, write_run_bag, Written

from ghost_bag.recorded_inputs import STATUS_TYPE
from ghost_bag.write import ghost_typestore, register_msg_package
from ghost_core.cli import ExitCode
from ghost_core.graph import PX4_OPTIONAL_OUT_TOPICS, PX4_OUT_TOPICS
from ghost_core.pipeline import PipelineConfig
from ghost_verify import cli
from ghost_verify.run_parameters import BRIDGE_CONFIG_KEY
from ghost_verify.verify import verify_all

bridge = pytest.importorskip('ghost_px4.bridge')

pytestmark = pytest.mark.bag

PX4_MSGS = Path(__file__).resolve().parents[3] / 'shared' / 'vendor' / 'px4_msgs' / 'msg'
TYPES = {'odometry': 'px4_msgs/msg/VehicleOdometry',
         'local_position': 'px4_msgs/msg/VehicleLocalPosition',
         'gps': 'px4_msgs/msg/SensorGps', 'status': 'px4_msgs/msg/VehicleStatus'}
OUT_TYPES = {'state/nav': 'nav_msgs/msg/Odometry',
             'observations': 'geometry_msgs/msg/PoseWithCovarianceStamped',
             'vehicle_status': STATUS_TYPE}
CONFIG = bridge.BridgeConfig('vehicle_odometry', 110_000_000, -1, 100_000_000)
CYCLES = 40


def _f32(value: float) -> float:
    return float(struct.unpack('<f', struct.pack('<f', value))[0])


def _typestore() -> Any:
    if not PX4_MSGS.is_dir():
        pytest.skip(f'no vendored px4_msgs at {PX4_MSGS}')
    store = ghost_typestore(MSG_DIR)
    register_msg_package(store, PX4_MSGS, 'px4_msgs')
    return store


def _message(store: Any, type_name: str, **values: Any) -> dict[str, Any]:
    """A px4_msgs message dict: every field zero (as PX4 sends unset ones), then `values`."""
    def zero(kind: str) -> object:
        return False if kind == 'bool' else 0.0 if kind.startswith('float') else 0

    msg: dict[str, Any] = {}
    for name, (_, detail) in store.fielddefs[type_name][1]:
        if isinstance(detail[0], tuple):  # an array: ((BASE, (type, 0)), length)
            msg[name] = [zero(detail[0][1][0])] * detail[1]
        else:
            msg[name] = zero(detail[0])
    msg.update(values)
    return msg


def _px4_inputs(store: Any) -> list[tuple[int, str, str, dict[str, Any]]]:
    """A 10 Hz EKF2 stream: local position + odometry each cycle, GNSS every other, a status.

    The position drifts east while its variance grows; the EKF flags its position invalid on
    cycles 20-24; the vehicle arms at cycle 10. Values are float32, as PX4 sends them.
    """
    out = []
    for i in range(CYCLES):
        t_us = 1_000_000 + 100_000 * i
        log = t_us * 1000 + 5_000_000
        x, y = _f32(0.1 * i), _f32(0.5 * i)
        valid = not 20 <= i < 25
        if i in (0, 10):
            out.append((log - 3000, 'status', TYPES['status'], _message(
                store, TYPES['status'], timestamp=t_us, arming_state=2 if i else 1,
                nav_state=3 if i else 2)))
        out.append((log - 2000, 'local_position', TYPES['local_position'], _message(
            store, TYPES['local_position'], timestamp=t_us, timestamp_sample=t_us - 2000,
            xy_valid=valid, z_valid=True, v_xy_valid=True, v_z_valid=True, x=x, y=y,
            z=_f32(-10.0), xy_global=True, z_global=True, ref_lat=47.397742,
            ref_lon=8.545594, ref_alt=_f32(488.0), eph=_f32(0.5), epv=_f32(0.8))))
        variance = _f32(0.01 * (1 + i))
        out.append((log - 1000, 'odometry', TYPES['odometry'], _message(
            store, TYPES['odometry'], timestamp=t_us, timestamp_sample=t_us - 2000,
            pose_frame=1, position=[x, y, _f32(-10.0)], q=[_f32(math.cos(0.1)), 0.0, 0.0,
                                                           _f32(math.sin(0.1))],
            velocity_frame=1, velocity=[_f32(1.0), _f32(5.0), 0.0],
            angular_velocity=[0.0, 0.0, _f32(0.01)],
            position_variance=[variance, variance, _f32(0.04)],
            orientation_variance=[_f32(1e-4), _f32(1e-4), _f32(4e-4)],
            velocity_variance=[_f32(0.02)] * 3)))
        if i % 2 == 0:
            sample_us = t_us + 110_000
            out.append((log + 110_000_000, 'gps', TYPES['gps'], _message(
                store, TYPES['gps'], timestamp=sample_us + 500, timestamp_sample=sample_us,
                latitude_deg=47.397742 + 4.5e-6 * i * 0.1,
                longitude_deg=8.545594 + 6.6e-6 * i * 0.5, altitude_msl_m=498.0,
                fix_type=3, eph=_f32(0.9), epv=_f32(1.5))))
    return sorted(out, key=lambda item: item[0])


def _attributes(value: Any) -> Any:
    if isinstance(value, dict):
        return SimpleNamespace(**{key: _attributes(item) for key, item in value.items()})
    return value


def _run(tmp_path: Path, alter: Callable[[str, dict[str, Any]], None] | None = None,
         drop: Callable[[str, int], bool] | None = None,
         bridge_config: object = None,
         relog: Callable[[str, int, int], int] | None = None) -> tuple[Path, list[Written]]:
    """The bridge over the PX4 stream, the agent over its outputs, all recorded in a bag.

    `alter(topic, message)` changes a bridge output after the bridge (before the agent saw
    it); `drop(method, index)` leaves a PX4 input out of the bag (the bridge still got it);
    `relog(method, index, log)` is when the recorder received a PX4 input (default `log`, when
    the bridge did).
    """
    store = _typestore()
    px4 = bridge.Px4Bridge(CONFIG)
    px4_written: list[Written] = []
    outputs: list[RecordedInput] = []
    seen: dict[str, int] = {}
    for log, method, type_name, msg in _px4_inputs(store):
        index = seen[method] = seen.get(method, -1) + 1
        if drop is None or not drop(method, index):
            px4_written.append(Written(f'/{bridge.IN_TOPICS[method]}', type_name, msg,
                                       log if relog is None else relog(method, index, log)))
        for k, item in enumerate(getattr(px4, method)(_attributes(msg)), start=1):
            if isinstance(item, bridge.Output):
                message = dict(item.message)
                if alter is not None:
                    alter(item.topic, message)
                outputs.append(RecordedInput(log + 1000 * k, f'/{item.topic}',
                                             OUT_TYPES[item.topic], message))
    config = PipelineConfig()
    written, _ = run_messages(outputs, config)
    written = sorted([*px4_written, *written], key=lambda item: item.log_time_ns)
    document = run_config(config)
    document[BRIDGE_CONFIG_KEY] = bridge_config if bridge_config is not None else {
        'parameters': CONFIG.to_dict(),
        'topics': {topic: topic for topic in (*PX4_OUT_TOPICS, *PX4_OPTIONAL_OUT_TOPICS,
                                              '/state/nav', '/observations',
                                              '/vehicle_status')}}
    return write_run_bag(tmp_path / 'bag', written, document, typestore=store), written


def _reordered_run(tmp_path: Path, relog: Callable[[str, int, int], int],
                   stream: str) -> tuple[Path, Any, Any]:
    """A run the recorder received in another order: it verifies; the bridge's `stream`."""
    bag, _ = _run(tmp_path, relog=relog)
    result = verify_all(bag)
    assert result.holds, result.summary_lines()
    report = result.replay.bridge if result.replay is not None else None
    assert report is not None and not report.violated
    return bag, result, next(item for item in report.streams if item.stream == stream)


def _count(written: list[Written], topic: str) -> int:
    return sum(item.topic == topic for item in written)


def test_an_honest_bridge_run_is_re_derived_exactly(tmp_path: Path) -> None:
    """Every recorded /state/nav, /observations and /vehicle_status equals the re-derived one."""
    bag, written = _run(tmp_path)
    result = verify_all(bag)
    assert result.holds, result.summary_lines()
    replay = result.replay
    assert replay is not None and replay.holds and replay.bridge is not None
    report = replay.bridge
    assert report.holds and report.unmatched == 0, report.summary()
    counts = {stream.stream: stream.compared for stream in report.streams}
    assert counts == {'state/nav': _count(written, '/state/nav'),
                      'observations': _count(written, '/observations'),
                      'vehicle_status': _count(written, '/vehicle_status')}
    assert counts['state/nav'] == CYCLES and counts['vehicle_status'] >= 2
    total = sum(counts.values())
    assert report.summary() == (
        f'px4_bridge: {total}/{total} messages re-derived exactly (/state/nav '
        f'{CYCLES}, /observations {counts["observations"]}, /vehicle_status '
        f'{counts["vehicle_status"]}; from {sum(n for _, n in report.inputs)} fmu/out '
        'messages)')
    assert report.summary() in result.summary_lines()
    assert cli.verify_all_main([str(bag)]) == ExitCode.OK


def test_a_belief_altered_after_the_bridge_fails_with_its_first_difference(
        tmp_path: Path) -> None:
    """A shrunk covariance on /state/nav: the agent re-derives it, the bridge does not."""
    cycle = 7

    def shrink(topic: str, message: dict[str, Any]) -> None:
        stamp = message['header']['stamp']
        if topic == 'state/nav' and stamp['sec'] * 10**9 + stamp['nanosec'] == stamps[cycle]:
            message['pose']['covariance'][0] /= 4.0

    stamps = [(1_000_000 + 100_000 * i - 2000) * 1000 for i in range(CYCLES)]
    bag, _ = _run(tmp_path, alter=shrink)
    result = verify_all(bag)
    assert not result.holds
    replay = result.replay
    assert replay is not None and replay.messages_differing == 0  # the agent: consistent
    report = replay.bridge
    assert report is not None and report.violated and not report.holds
    found = report.first_difference()
    assert found is not None
    stream, difference = found
    assert (stream.topic, difference.stamp_ns, difference.field) == (
        '/state/nav', stamps[cycle], 'pose.covariance[0]')
    assert difference.recorded == difference.recomputed / 4.0
    assert report.summary().startswith('px4_bridge: DIFFERS (')
    assert any(line.startswith('note: px4_bridge: /state/nav: 1 of ')
               for line in result.summary_lines())
    assert cli.verify_all_main([str(bag)]) == ExitCode.VIOLATED
    assert cli.verify_all_main([str(bag), '--no-replay']) == ExitCode.OK


def test_an_input_the_recorder_missed_is_counted_not_failed(tmp_path: Path) -> None:
    """One vehicle_odometry the bridge got but the bag lacks: its belief is not compared."""
    bag, _ = _run(tmp_path, drop=lambda method, index: method == 'odometry' and index == 12)
    result = verify_all(bag)
    assert result.holds, result.summary_lines()
    report = result.replay.bridge if result.replay is not None else None
    assert report is not None and not report.violated
    nav = next(stream for stream in report.streams if stream.stream == 'state/nav')
    assert (nav.compared, nav.input_not_recorded) == (CYCLES - 1, 1)
    assert not verify_all(bag, strict=True).holds


def test_a_status_received_in_another_order_is_a_reorder_not_a_difference(
        tmp_path: Path) -> None:
    """The recorder got the arming status after the belief the bridge attached it to.

    The re-derived status moves by one belief: the recorded one equals its neighbour's, so it
    is counted as reordered (a failure only with --strict). A recorded status no neighbouring
    belief has is a difference.
    """
    def late(method: str, index: int, log: int) -> int:
        return log + 2500 if method == 'status' and index == 1 else log  # after the odometry

    bag, result, status = _reordered_run(tmp_path, late, 'vehicle_status')
    # The change and the heartbeats after it move by one belief.
    assert status.reordered >= 1 and status.differing == status.recorded_only == 0
    assert any('statuses equal the re-derived status of a belief received within 1 s' in line
               for line in result.summary_lines())
    assert not verify_all(bag, strict=True).holds

    def forged(topic: str, message: dict[str, Any]) -> None:
        if topic == 'vehicle_status':
            message['mission_status'] = 7  # LANDING: never the vehicle's here

    forged_bag, _ = _run(tmp_path / 'forged', alter=forged)
    report = verify_all(forged_bag).replay.bridge  # type: ignore[union-attr]
    assert report is not None and report.violated


def test_without_the_bridge_configuration_or_ghost_px4_it_is_not_possible(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not possible, with the reason; a failure only with --strict."""
    bag, _ = _run(tmp_path, bridge_config='not an object')
    result = verify_all(bag)
    report = result.replay.bridge if result.replay is not None else None
    assert report is not None and not report.possible and not report.violated
    assert 'does not record px4_bridge' in (report.not_possible_reason or '')
    assert report.summary() == f'px4_bridge: not possible ({report.not_possible_reason})'
    assert result.holds, result.summary_lines()
    assert cli.verify_all_main([str(bag), '--strict']) == ExitCode.VIOLATED
    honest, _ = _run(tmp_path / 'honest')
    monkeypatch.setitem(sys.modules, 'ghost_px4.bridge', None)
    importlib.invalidate_caches()
    missing = verify_all(honest)
    report = missing.replay.bridge if missing.replay is not None else None
    assert report is not None and not report.possible
    assert "ghost_px4 (the PX4 bridge's rules) is not installed here" in (
        report.not_possible_reason or '')
    assert missing.holds


def test_a_fix_the_bridge_stated_before_the_recorder_had_the_origin_is_a_reorder(
        tmp_path: Path) -> None:
    """The recorder got the first two local positions (the EKF origin) after the first fix.

    The bridge had the origin and stated that fix; the recorder's order drops it (no origin
    yet). The origin is in force within the race window of the fix: a reorder, noted, a
    failure only with --strict. A fix no frame of the window gives is still a difference.
    """
    def origin_late(method: str, index: int, log: int) -> int:
        return log + 130_000_000 if method == 'local_position' and index < 2 else log

    bag, result, fixes = _reordered_run(tmp_path, origin_late, 'observations')
    assert fixes.reordered == 1 and fixes.differing == fixes.recorded_only == 0
    assert any('fixes are stated in an EKF frame (local position origin) in force within 1 s'
               in line for line in result.summary_lines())
    assert not verify_all(bag, strict=True).holds

    def moved(topic: str, message: dict[str, Any]) -> None:
        if topic == 'observations' and message['header']['stamp']['sec'] == 1:
            message['pose']['pose']['position']['x'] += 5.0  # no frame puts it there

    forged, _ = _run(tmp_path / 'forged', alter=moved, relog=origin_late)
    report = verify_all(forged).replay
    assert report is not None and report.bridge is not None and report.bridge.violated


def test_a_belief_with_flags_the_recorder_got_later_is_a_reorder(tmp_path: Path) -> None:
    """The recorder got the local position that flags cycle 20 invalid after its odometry.

    The bridge had the flags and stated the belief invalid; the recorder's order gives it the
    previous cycle's (valid) flags. Flags in force within the window: a reorder, noted.
    """
    def flags_late(method: str, index: int, log: int) -> int:
        return log + 1500 if method == 'local_position' and index == 20 else log

    bag, result, beliefs = _reordered_run(tmp_path, flags_late, 'state/nav')
    assert beliefs.reordered >= 1 and beliefs.differing == beliefs.recorded_only == 0
    assert any('beliefs carry the validity flags of a local position received within 1 s'
               in line for line in result.summary_lines())
    assert not verify_all(bag, strict=True).holds
