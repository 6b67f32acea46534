"""verify_all re-derives each mavros_bridge output from exactly the MAVROS samples it names.

The bags hold what a MAVROS run records: the bridge's inputs (/mavros/..., the vendored
mavros_msgs schemas), its outputs and their /source_samples made by the bridge's own rules
(ghost_mavros.bridge, what the node runs), the agent's messages from those outputs, and
manifest.json with both configurations. The fixes are anchored (no origin given): each names
the first usable fix and the belief held then, for good, so the run outlasts the judge's
HELD_NS window. An attack changes only what the bridge published (Ghost's topics).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from bags import MSG_DIR
import pytest
from run_bags import RecordedInput, run_config, run_messages, write_run_bag, Written

from ghost_bag.recorded_inputs import STATUS_TYPE
from ghost_bag.write import ghost_typestore, register_msg_package
from ghost_core.cli import ExitCode
from ghost_core.graph import MAVROS_TOPICS, SOURCE_SAMPLES_TOPIC, SOURCE_SAMPLES_TYPE
from ghost_core.pipeline import PipelineConfig
from ghost_verify import cli
from ghost_verify.bridge_rederive import BridgeReport, HELD_NS
from ghost_verify.verify import verify_all

bridge = pytest.importorskip('ghost_mavros.bridge')

pytestmark = pytest.mark.bag

MAVROS_MSGS = Path(__file__).resolve().parents[3] / 'shared' / 'vendor' / 'mavros_msgs' / 'msg'
IN = {method: f'/{topic}' for method, topic in bridge.IN_TOPICS.items()}
OUT_TYPES = {'state/nav': 'nav_msgs/msg/Odometry',
             'observations': 'geometry_msgs/msg/PoseWithCovarianceStamped',
             'vehicle_status': STATUS_TYPE}
PARAMETERS = {'fix_source': 'navsat', 'autopilot': 'auto', 'origin': '', 'gnss_height': False,
              'gps_uere_m': 1.0, 'gps_delay_ms': 100.0}
CONFIG = bridge.MavrosConfig.from_parameters(PARAMETERS)
CYCLES = 150  # 15 s: the anchor is named long after HELD_NS
assert CYCLES * 100_000_000 > HELD_NS
LAT, LON, ALT = 47.397742, 8.545594, 488.0


def _typestore() -> Any:
    if not MAVROS_MSGS.is_dir():
        pytest.skip(f'no vendored mavros_msgs at {MAVROS_MSGS}')
    store = ghost_typestore(MSG_DIR)
    register_msg_package(store, MAVROS_MSGS, 'mavros_msgs')
    return store


def _header(ns: int, frame: str = 'map') -> dict[str, Any]:
    return {'stamp': {'sec': ns // 1_000_000_000, 'nanosec': ns % 1_000_000_000},
            'frame_id': frame}


def _xyz(x: float, y: float, z: float) -> dict[str, float]:
    return {'x': x, 'y': y, 'z': z}


def _mavros_inputs() -> list[tuple[int, str, dict[str, Any]]]:
    """10 Hz odometry, a fix every other cycle from cycle 1, state and extended state."""
    out: list[tuple[int, str, dict[str, Any]]] = []
    for i in range(CYCLES):
        stamp = 1_000_000_000 + 100_000_000 * i
        log = stamp + 5_000_000
        if i in (0, 10, 30):
            out.append((log - 3000, 'state', {
                'header': _header(stamp), 'connected': True, 'armed': i >= 10, 'guided': True,
                'manual_input': False, 'mode': 'AUTO.MISSION' if i >= 30 else 'AUTO.LOITER',
                'system_status': 4}))
            out.append((log - 2500, 'extended_state', {
                'header': _header(stamp), 'vtol_state': 0, 'landed_state': 1 if i < 30 else 2}))
        cov = [0.0] * 36
        for k, value in enumerate((0.01 * (1 + i), 0.01 * (1 + i), 0.04, 1e-4, 1e-4, 4e-4)):
            cov[7 * k] = value
        out.append((log - 1000, 'odometry', {
            'header': _header(stamp, 'odom'), 'child_frame_id': 'base_link',
            'pose': {'pose': {'position': _xyz(3.0 + 0.5 * i, 2.0 + 0.1 * i, 10.0),
                              'orientation': {'x': 0.0, 'y': 0.0, 'z': 0.6, 'w': 0.8}},
                     'covariance': cov},
            'twist': {'twist': {'linear': _xyz(5.0, 1.0, 0.0), 'angular': _xyz(0.0, 0.0, 0.01)},
                      'covariance': [0.0] * 36}}))
        if i % 2 == 1:
            out.append((log + 100_000_000, 'navsat', {
                'header': _header(stamp + 100_000_000),
                'status': {'status': 0, 'service': 1},
                'latitude': LAT + 4.5e-7 * i, 'longitude': LON + 6.6e-6 * i, 'altitude': ALT,
                'position_covariance': [0.81, 0.0, 0.0, 0.0, 0.81, 0.0, 0.0, 0.0, 2.25],
                'position_covariance_type': 2}))
    return sorted(out, key=lambda item: item[0])


def _attributes(value: Any) -> Any:
    if isinstance(value, dict):
        return SimpleNamespace(**{key: _attributes(item) for key, item in value.items()})
    return value


Alter = Callable[[str, int, dict[str, Any], dict[str, Any]], None]


def _run(tmp_path: Path, alter: Alter | None = None) -> tuple[Path, list[Written]]:
    """The bridge over the MAVROS stream, the agent over its outputs, recorded."""
    store = _typestore()
    mavros = bridge.MavrosBridge(CONFIG)
    written: list[Written] = []
    outputs: list[RecordedInput] = []
    seen: dict[str, int] = {}
    for log, method, msg in _mavros_inputs():
        written.append(Written(IN[method], MAVROS_TOPICS[IN[method]], msg, log))
        result = (mavros.fix(method, _attributes(msg)) if method == 'navsat'
                  else getattr(mavros, method)(_attributes(msg)))
        for k, item in enumerate(result, start=1):
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
        'topics': {topic: topic for topic in (
            '/mavros/local_position/odom', '/mavros/global_position/raw/fix', '/mavros/state',
            '/mavros/extended_state', SOURCE_SAMPLES_TOPIC, '/state/nav', '/observations',
            '/vehicle_status')}}
    return write_run_bag(tmp_path / 'bag', written, document, typestore=store), written


def _report(bag: Path) -> tuple[Any, BridgeReport]:
    result = verify_all(bag)
    assert result.replay is not None
    report = result.replay.bridge_report('mavros_bridge')
    assert report is not None
    return result, report


def _count(written: list[Written], topic: str) -> int:
    return sum(item.topic == topic for item in written)


def test_an_honest_mavros_bridge_run_is_re_derived_exactly(tmp_path: Path) -> None:
    """Every output equals the re-derived one, the anchored fixes long after their anchor."""
    bag, written = _run(tmp_path)
    anchored = [item for item in written if item.topic == SOURCE_SAMPLES_TOPIC
                and item.msg['output_topic'] == '/observations']
    assert anchored and all(len(item.msg['stamps']) == 3 for item in anchored)
    assert len({tuple(item.msg['stamps'][1:]) for item in anchored}) == 1
    result, report = _report(bag)
    assert result.holds, result.summary_lines()
    assert report.holds and report.unmatched == 0, report.summary()
    counts = {stream.stream: stream.exact for stream in report.streams}
    assert counts == {'state/nav': _count(written, '/state/nav'),
                      'observations': _count(written, '/observations'),
                      'vehicle_status': _count(written, '/vehicle_status')}
    assert counts['state/nav'] == CYCLES and counts['observations'] == CYCLES // 2
    total = sum(counts.values())
    read = sum(n for _, n in report.inputs)
    assert report.summary() == (
        f'mavros_bridge: {total}/{total} outputs re-derived exactly from the MAVROS samples '
        f'they name (/state/nav {CYCLES}, /observations {counts["observations"]}, '
        f'/vehicle_status {counts["vehicle_status"]}; from {read} /mavros messages)')
    assert not result.limits(), result.limits()
    assert cli.verify_all_main([str(bag), '--strict']) == ExitCode.OK


def test_a_fix_altered_after_the_bridge_fails(tmp_path: Path) -> None:
    """The attack: one /observations moved 2 m north; the agent re-derives, the bridge not."""
    def move(topic: str, index: int, message: dict[str, Any], _: dict[str, Any]) -> None:
        if topic == 'observations' and index == 60:
            message['pose']['pose']['position']['y'] += 2.0

    bag, _ = _run(tmp_path, alter=move)
    result, report = _report(bag)
    assert result.replay is not None and result.replay.messages_differing == 0
    fixes = next(stream for stream in report.streams if stream.stream == 'observations')
    assert fixes.differing == 1 and fixes.first is not None
    assert fixes.first.field == 'pose.pose.position.y'
    assert result.verdict_line().startswith('NOT VERIFIED: mavros_bridge: DIFFERS')
    assert cli.verify_all_main([str(bag)]) == ExitCode.VIOLATED


def test_a_fix_naming_another_anchor_fails(tmp_path: Path) -> None:
    """The attack: a later fix re-anchored at the fix before it (its message made so)."""
    inputs = {(method, bridge.rules.stamp_ns(_attributes(msg).header)): _attributes(msg)
              for _, method, msg in _mavros_inputs()}
    frame = CONFIG.frame

    def reanchor(topic: str, index: int, message: dict[str, Any],
                 sources: dict[str, Any]) -> None:
        if topic == 'observations' and index == 40:
            fix = odometry = sources['stamps'][0] - 200_000_000  # the fix before, and its belief
            anchor = bridge.rules.anchor_of(bridge.rules.navsat_fix(frame, inputs[
                ('navsat', fix)]), inputs[('odometry', odometry)])
            message.clear()
            message.update(bridge.rules.fix_message(frame, bridge.rules.navsat_fix(
                frame, inputs[('navsat', sources['stamps'][0])]), anchor))
            sources['stamps'][1:] = [fix, odometry]

    bag, _ = _run(tmp_path, alter=reanchor)
    _, report = _report(bag)
    fixes = next(stream for stream in report.streams if stream.stream == 'observations')
    assert fixes.differing == 1 and fixes.first is not None, report.summary()
    assert fixes.first.kind == 'provenance' and 'not the first it named' in fixes.first.field
    assert cli.verify_all_main([str(bag)]) == ExitCode.VIOLATED
