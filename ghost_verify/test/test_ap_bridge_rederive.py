"""verify_all re-derives each ap_bridge output from exactly the AP_DDS samples it names.

The bags hold what an ArduPilot run records: the bridge's AP_DDS inputs (/ap/..., the vendored
ardupilot_msgs and geographic_msgs schemas), its outputs (/state/nav, /observations,
/vehicle_status) and their /source_samples made by the bridge's own rules
(ghost_ardupilot.bridge, what the node runs), the agent's messages from those outputs, and
manifest.json with both configurations, as the recorder writes them. An attack changes only
what the bridge published (Ghost's topics). The real node over DDS is
ghost_ardupilot/test/test_ap_log_run.py.
"""

from __future__ import annotations

from collections.abc import Callable
import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from bags import MSG_DIR
import pytest
from run_bags import RecordedInput, run_config, run_messages, write_run_bag, Written

from ghost_bag.recorded_inputs import STATUS_TYPE
from ghost_bag.write import ghost_typestore, register_msg_package
from ghost_core.cli import ExitCode
from ghost_core.graph import AP_OUT_TOPICS, SOURCE_SAMPLES_TOPIC, SOURCE_SAMPLES_TYPE
from ghost_core.pipeline import PipelineConfig
from ghost_verify import cli
from ghost_verify.bridge_rederive import BridgeReport
from ghost_verify.verify import verify_all

bridge = pytest.importorskip('ghost_ardupilot.bridge')

pytestmark = pytest.mark.bag

ROOT = Path(__file__).resolve().parents[2]
ARDUPILOT_MSGS = ROOT.parent / 'shared' / 'vendor' / 'ardupilot_msgs' / 'msg'
GEOGRAPHIC_MSGS = ROOT / 'ghost_ardupilot' / 'test' / 'interfaces' / 'geographic_msgs' / 'msg'
IN = {method: f'/{topic}' for method, topic in bridge.IN_TOPICS.items()}
TYPES = {method: AP_OUT_TOPICS[topic] for method, topic in IN.items()}
OUT_TYPES = {'state/nav': 'nav_msgs/msg/Odometry',
             'observations': 'geometry_msgs/msg/PoseWithCovarianceStamped',
             'vehicle_status': STATUS_TYPE}
CONFIG = bridge.BridgeConfig('auto', 200_000_000, False, 100_000_000)
CYCLES = 40
#: Beliefs come from pose and twist until the first odometry, at this cycle.
ODOMETRY_FROM = 5
ORIGIN = (-35.363262, 149.165237, 584.0)


def _typestore() -> Any:
    if not ARDUPILOT_MSGS.is_dir():
        pytest.skip(f'no vendored ardupilot_msgs at {ARDUPILOT_MSGS}')
    store = ghost_typestore(MSG_DIR)
    register_msg_package(store, GEOGRAPHIC_MSGS, 'geographic_msgs')
    register_msg_package(store, ARDUPILOT_MSGS, 'ardupilot_msgs')
    return store


def _header(ns: int) -> dict[str, Any]:
    return {'stamp': {'sec': ns // 1_000_000_000, 'nanosec': ns % 1_000_000_000},
            'frame_id': 'base_link'}


def _xyz(x: float, y: float, z: float) -> dict[str, float]:
    return {'x': x, 'y': y, 'z': z}


def _ap_inputs() -> list[tuple[int, str, dict[str, Any]]]:
    """A 10 Hz AP_DDS stream: pose and twist each cycle, odometry from ODOMETRY_FROM on.

    A GNSS fix every other cycle, the EKF origin once a second, the status on arming (cycle
    10) and take-off (cycle 12) and twice a second. The position drifts east while its
    variance grows.
    """
    out: list[tuple[int, str, dict[str, Any]]] = []
    yaw = 0.1
    q = {'x': 0.0, 'y': 0.0, 'z': math.sin(yaw / 2), 'w': math.cos(yaw / 2)}
    for i in range(CYCLES):
        stamp = 1_000_000_000 + 100_000_000 * i
        log = stamp + 5_000_000
        position = _xyz(0.5 * i, 0.1 * i, 10.0)
        if i % 10 == 0:
            out.append((log - 4000, 'origin', {
                'header': _header(stamp), 'position': {
                    'latitude': ORIGIN[0], 'longitude': ORIGIN[1], 'altitude': ORIGIN[2]}}))
        if i % 5 == 0 or i in (10, 12):
            armed = i >= 10
            out.append((log - 3000, 'status', {
                'header': _header(stamp), 'vehicle_type': 2, 'armed': armed, 'mode': 3,
                'flying': i >= 12, 'external_control': False, 'failsafe': []}))
        out.append((log - 2000, 'twist', {
            'header': _header(stamp), 'twist': {'linear': _xyz(5.0, 1.0, 0.0),
                                                'angular': _xyz(0.0, 0.0, 0.01)}}))
        out.append((log - 1500, 'pose', {
            'header': _header(stamp), 'pose': {'position': position, 'orientation': q}}))
        if i >= ODOMETRY_FROM:
            variance = 0.01 * (1 + i)
            pose_cov = [0.0] * 36
            twist_cov = [0.0] * 36
            for k, value in enumerate((variance, variance, 0.04, 1e-4, 1e-4, 4e-4)):
                pose_cov[7 * k] = value
                twist_cov[7 * k] = 0.02
            out.append((log - 1000, 'odometry', {
                'header': {**_header(stamp), 'frame_id': 'odom'}, 'child_frame_id': 'base_link',
                'pose': {'pose': {'position': position, 'orientation': q},
                         'covariance': pose_cov},
                'twist': {'twist': {'linear': _xyz(5.0, 1.0, 0.0),
                                    'angular': _xyz(0.0, 0.0, 0.01)},
                          'covariance': twist_cov}}))
        if i % 2 == 0:
            fix_stamp = stamp + 200_000_000
            out.append((log + 200_000_000, 'navsat', {
                'header': _header(fix_stamp),
                'status': {'status': 0, 'service': 1},
                'latitude': ORIGIN[0] + 9e-7 * i, 'longitude': ORIGIN[1] + 5.5e-6 * i,
                'altitude': ORIGIN[2] + 10.0,
                'position_covariance': [0.81, 0.0, 0.0, 0.0, 0.81, 0.0, 0.0, 0.0, 2.25],
                'position_covariance_type': 2}))
    return sorted(out, key=lambda item: item[0])


def _attributes(value: Any) -> Any:
    if isinstance(value, dict):
        return SimpleNamespace(**{key: _attributes(item) for key, item in value.items()})
    return value


#: Changes the bridge's output (topic, index, message dict, its source_samples) in place.
Alter = Callable[[str, int, dict[str, Any], dict[str, Any]], None]


def _run(tmp_path: Path, alter: Alter | None = None) -> tuple[Path, list[Written]]:
    """The bridge over the AP_DDS stream, the agent over its outputs, recorded."""
    store = _typestore()
    ap = bridge.ApBridge(CONFIG)
    written: list[Written] = []
    outputs: list[RecordedInput] = []
    seen: dict[str, int] = {}
    for log, method, msg in _ap_inputs():
        written.append(Written(IN[method], TYPES[method], msg, log))
        for k, item in enumerate(getattr(ap, method)(_attributes(msg)), start=1):
            if isinstance(item, bridge.Dropped):
                continue
            message = dict(item.message)
            sources = bridge.source_samples_message(item, f'/{item.topic}', IN)
            n = seen[item.topic] = seen.get(item.topic, -1) + 1
            if alter is not None:
                alter(item.topic, n, message, sources)
            out_log = log + 1000 * k
            written.append(Written(SOURCE_SAMPLES_TOPIC, SOURCE_SAMPLES_TYPE, sources,
                                   out_log - 500))
            outputs.append(RecordedInput(out_log, f'/{item.topic}', OUT_TYPES[item.topic],
                                         message))
    config = PipelineConfig()
    agent, _ = run_messages(outputs, config)
    written = sorted([*written, *agent], key=lambda item: item.log_time_ns)
    document = run_config(config)
    document[bridge.BRIDGE_CONFIG_KEY] = {
        'parameters': CONFIG.to_dict(),
        'topics': {topic: topic for topic in (*AP_OUT_TOPICS, SOURCE_SAMPLES_TOPIC,
                                              '/state/nav', '/observations',
                                              '/vehicle_status')}}
    return write_run_bag(tmp_path / 'bag', written, document, typestore=store), written


def _report(bag: Path) -> tuple[Any, BridgeReport]:
    result = verify_all(bag)
    assert result.replay is not None
    report = result.replay.bridge_report('ap_bridge')
    assert report is not None and result.replay.bridge is None
    return result, report


def _count(written: list[Written], topic: str) -> int:
    return sum(item.topic == topic for item in written)


def _stamp(message: dict[str, Any]) -> int:
    stamp = message['header']['stamp']
    return int(stamp['sec']) * 10**9 + int(stamp['nanosec'])


def test_an_honest_ap_bridge_run_is_re_derived_exactly(tmp_path: Path) -> None:
    """Every recorded output equals the re-derived one; ap_bridge is no longer a limit."""
    bag, written = _run(tmp_path)
    result, report = _report(bag)
    assert result.holds, result.summary_lines()
    assert report.holds and report.unmatched == 0, report.summary()
    counts = {stream.stream: stream.exact for stream in report.streams}
    assert counts == {'state/nav': _count(written, '/state/nav'),
                      'observations': _count(written, '/observations'),
                      'vehicle_status': _count(written, '/vehicle_status')}
    assert counts['state/nav'] == CYCLES and counts['vehicle_status'] >= 3
    total = sum(counts.values())
    read = sum(n for _, n in report.inputs)
    assert read == sum(_count(written, topic) for topic in AP_OUT_TOPICS)
    assert report.summary() == (
        f'ap_bridge: {total}/{total} outputs re-derived exactly from the AP_DDS samples they '
        f'name (/state/nav {CYCLES}, /observations {counts["observations"]}, /vehicle_status '
        f'{counts["vehicle_status"]}; from {read} /ap messages)')
    assert report.summary() in result.summary_lines()
    assert not any('ap_bridge' in limit for limit in result.limits()), result.limits()
    assert cli.verify_all_main([str(bag), '--strict']) == ExitCode.OK


def test_a_belief_altered_after_the_bridge_fails(tmp_path: Path) -> None:
    """The attack: a shrunk covariance on one /state/nav; the agent re-derives, the bridge not."""
    cycle = 20
    target = 1_000_000_000 + 100_000_000 * cycle

    def shrink(topic: str, _: int, message: dict[str, Any], __: dict[str, Any]) -> None:
        if topic == 'state/nav' and _stamp(message) == target:
            message['pose']['covariance'][0] /= 4.0

    bag, _ = _run(tmp_path, alter=shrink)
    result, report = _report(bag)
    assert not result.holds
    assert result.replay is not None and result.replay.messages_differing == 0
    assert report.violated and not report.holds
    found = report.first_difference()
    assert found is not None
    stream, difference = found
    assert (stream.topic, difference.stamp_ns, difference.kind, difference.field) == (
        '/state/nav', target, 'field', 'pose.covariance[0]')
    assert report.summary().startswith('ap_bridge: DIFFERS (')
    assert result.verdict_line().startswith('NOT VERIFIED: ap_bridge: DIFFERS')
    assert cli.verify_all_main([str(bag)]) == ExitCode.VIOLATED


def test_a_belief_naming_a_sample_the_bag_lacks_fails(tmp_path: Path) -> None:
    """The attack: a /state/nav's source_samples names an odometry stamp never published."""
    def forge(topic: str, index: int, message: dict[str, Any], sources: dict[str, Any]) -> None:
        if topic == 'state/nav' and index == 15:
            stamp = _stamp(message) + 1
            message['header']['stamp'] = {'sec': stamp // 10**9, 'nanosec': stamp % 10**9}
            sources['header']['stamp'] = dict(message['header']['stamp'])
            sources['stamps'][0] = stamp

    bag, _ = _run(tmp_path, alter=forge)
    _, report = _report(bag)
    nav = next(stream for stream in report.streams if stream.stream == 'state/nav')
    assert nav.violations == {'named_input_missing': 1}, report.summary()
    assert cli.verify_all_main([str(bag)]) == ExitCode.VIOLATED


def test_a_pose_belief_after_the_odometry_is_claimed_late(tmp_path: Path) -> None:
    """The attack: a belief made of the pose (no covariance: Ghost abstains) after odometry.

    The pose and twist it names re-derive it, but with source auto the bridge takes no belief
    from a pose once it had an odometry: one the recorder logged well before.
    """
    cycle = 30
    target = 1_000_000_000 + 100_000_000 * cycle
    store = SimpleNamespace(pose=None, twist=None)
    for _, method, msg in _ap_inputs():
        if method in ('pose', 'twist') and _stamp(msg) == target:
            setattr(store, method, _attributes(msg))
    belief = bridge.belief_of_pose(store.pose, store.twist, CONFIG.max_twist_age_ns)
    replaced = bridge.odometry_message(target, belief)

    def forge(topic: str, _: int, message: dict[str, Any], sources: dict[str, Any]) -> None:
        if topic == 'state/nav' and _stamp(message) == target:
            message.clear()
            message.update(replaced)
            sources['source_topics'] = [IN['pose'], IN['twist']]
            sources['stamp_fields'] = [bridge.SOURCE_STAMP_FIELD] * 2
            sources['stamps'] = [target, target]

    bag, _ = _run(tmp_path, alter=forge)
    _, report = _report(bag)
    nav = next(stream for stream in report.streams if stream.stream == 'state/nav')
    assert nav.violations == {'input_claimed_late': 1}, report.summary()
    assert nav.first is not None and nav.first.field == IN['odometry']
    assert cli.verify_all_main([str(bag)]) == ExitCode.VIOLATED


def test_a_status_naming_an_old_ap_status_is_claimed_late(tmp_path: Path) -> None:
    """The attack: the statuses after take-off say DISARMED, naming cycle 0's /ap/status.

    Their named samples re-derive them; but the recorder logged the arming more than the bound
    before their beliefs' samples, and it gives another status.
    """
    first = next(_attributes(msg) for _, method, msg in _ap_inputs() if method == 'status')
    after = 1_000_000_000 + 100_000_000 * 12

    def forge(topic: str, _: int, message: dict[str, Any], sources: dict[str, Any]) -> None:
        if topic == 'vehicle_status' and _stamp(message) > after:
            message.clear()
            message.update(bridge.to_msg_dict(bridge.status_of(sources['stamps'][0], first)))
            sources['stamps'][1] = bridge.stamp_ns(first)

    bag, _ = _run(tmp_path, alter=forge)
    _, report = _report(bag)
    status = next(stream for stream in report.streams if stream.stream == 'vehicle_status')
    assert status.violations.get('input_claimed_late', 0) >= 1, report.summary()
    assert status.differing == 0 and status.first is not None
    assert status.first.field == IN['status']
    assert cli.verify_all_main([str(bag)]) == ExitCode.VIOLATED
