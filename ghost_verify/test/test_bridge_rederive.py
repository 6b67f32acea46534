"""verify_all re-derives each px4_bridge output from exactly the PX4 samples it names.

The bags hold what a PX4 run records: the bridge's PX4 inputs (px4_msgs, the vendored subset's
schemas), its outputs (/state/nav, /observations, /vehicle_status) and their /source_samples
made by the bridge's own rules (ghost_px4.bridge, what the node runs) from the float32 values
PX4 sends, the agent's messages from those outputs, and manifest.json with both
configurations, written as the recorder writes them. An attack changes only what the bridge
published. The real node over DDS is ghost/test/test_px4_log_run.py.
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
from ghost_core.evidence import TRANSPORT_BOUND_NS
from ghost_core.graph import PX4_OUT_TOPICS, SOURCE_SAMPLES_TOPIC, SOURCE_SAMPLES_TYPE
from ghost_core.pipeline import PipelineConfig
from ghost_verify import cli
from ghost_verify.bridge_rederive import BridgeReport, rederive_bridge
from ghost_verify.run_parameters import BRIDGE_CONFIG_KEY
from ghost_verify.verify import verify_all

bridge = pytest.importorskip('ghost_px4.bridge')

pytestmark = pytest.mark.bag

PX4_MSGS = Path(__file__).resolve().parents[3] / 'shared' / 'vendor' / 'px4_msgs' / 'msg'
TYPES = {'odometry': 'px4_msgs/msg/VehicleOdometry',
         'local_position': 'px4_msgs/msg/VehicleLocalPosition',
         'gps': 'px4_msgs/msg/SensorGps', 'status': 'px4_msgs/msg/VehicleStatus',
         'land_detected': 'px4_msgs/msg/VehicleLandDetected',
         'mission_result': 'px4_msgs/msg/MissionResult'}
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
    cycles 20-24; the vehicle arms at cycle 10 and takes off (land detector) at cycle 12, on a
    mission that finishes at cycle 30. Values are float32, as PX4 sends them.
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
        if i in (0, 12):
            out.append((log - 2800, 'land_detected', TYPES['land_detected'], _message(
                store, TYPES['land_detected'], timestamp=t_us - 100, landed=i == 0)))
        if i in (1, 30):
            out.append((log - 2600, 'mission_result', TYPES['mission_result'], _message(
                store, TYPES['mission_result'], timestamp=t_us - 200, valid=True,
                finished=i == 30, seq_total=4, seq_current=3 if i else 0)))
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


#: The bridge's inputs and outputs, fully qualified (a graph in the root namespace).
IN = {method: f'/{topic}' for method, topic in bridge.IN_TOPICS.items()}
#: (method, index of that method's sample) -> a log time; the sample then is not in the bag
#: (None) or the recorder logged it then.
Relog = Callable[[str, int, int], int | None]
#: Changes the bridge's output (topic, message dict) and its source_samples (a dict) in place:
#: an attack on what the bridge published, or a loss.
Alter = Callable[[str, int, dict[str, Any], dict[str, Any]], bool]


def _run(tmp_path: Path, alter: Alter | None = None, relog: Relog | None = None,
         bridge_config: object = None, agent: bool = True,
         sources_late_ns: int = 0) -> tuple[Path, list[Written]]:
    """The bridge over the PX4 stream, the agent over its outputs, recorded as the recorder does.

    `relog(method, index, log)` is when the recorder received a PX4 input (None: never; default
    `log`, when the bridge did). `alter(topic, index, message, sources)` changes the index-th
    output of `topic` and its source_samples before the agent saw them; False leaves its
    source_samples out of the bag. `agent`: also the agent's messages (verify_all's bag).
    `sources_late_ns`: the recorder logs each source_samples that much after its output.
    """
    store = _typestore()
    px4 = bridge.Px4Bridge(CONFIG)
    px4_written: list[Written] = []
    outputs: list[RecordedInput] = []
    provenance: list[Written] = []
    seen: dict[str, int] = {}
    for log, method, type_name, msg in _px4_inputs(store):
        index = seen[method] = seen.get(method, -1) + 1
        when = log if relog is None else relog(method, index, log)
        if when is not None:
            px4_written.append(Written(IN[method], type_name, msg, when))
        for k, item in enumerate(getattr(px4, method)(_attributes(msg)), start=1):
            if isinstance(item, bridge.Output):
                message = dict(item.message)
                sources = bridge.source_samples_message(item, f'/{item.topic}', IN)
                n = seen[item.topic] = seen.get(item.topic, -1) + 1
                keep = True if alter is None else alter(item.topic, n, message, sources)
                out_log = log + 1000 * k
                if keep:
                    provenance.append(Written(SOURCE_SAMPLES_TOPIC, SOURCE_SAMPLES_TYPE,
                                              sources, out_log - 500 + sources_late_ns))
                outputs.append(RecordedInput(out_log, f'/{item.topic}', OUT_TYPES[item.topic],
                                             message))
    config = PipelineConfig()
    if agent:
        written, _ = run_messages(outputs, config)
    else:
        written = [Written(item.topic, item.type_name, item.msg, item.log_time_ns)
                   for item in outputs]
    written = sorted([*px4_written, *provenance, *written], key=lambda item: item.log_time_ns)
    document = run_config(config)
    document[BRIDGE_CONFIG_KEY] = bridge_config if bridge_config is not None else _config()
    return write_run_bag(tmp_path / 'bag', written, document, typestore=store), written


def _config() -> dict[str, Any]:
    return {'parameters': CONFIG.to_dict(),
            'topics': {topic: topic for topic in (*PX4_OUT_TOPICS, SOURCE_SAMPLES_TOPIC,
                                                  '/state/nav', '/observations',
                                                  '/vehicle_status')}}


def _bridge(bag: Path) -> BridgeReport:
    """The bridge's re-derivation alone (as verify_all runs it)."""
    return rederive_bridge(bag, _config(), tuple(PX4_OUT_TOPICS))


def _stream(report: BridgeReport, name: str) -> Any:
    return next(item for item in report.streams if item.stream == name)


def _count(written: list[Written], topic: str) -> int:
    return sum(item.topic == topic for item in written)


def _consistent(report: BridgeReport) -> None:
    """Every recorded output has exactly one verdict, and the line says the same numbers."""
    for stream in report.streams:
        assert stream.recorded == (stream.exact + stream.differences + stream.unverified), stream
    exact = sum(stream.exact for stream in report.streams)
    total = report.messages_compared
    line = report.summary()
    if report.violated:
        assert f'({exact} of {total} outputs re-derived exactly' in line, line
        assert exact < total
    elif report.unmatched:
        assert f'{exact} of {total} outputs ({report.unmatched} unverifiable)' in line, line
    else:
        assert f'{total}/{total} outputs re-derived exactly' in line, line


STAMPS = [(1_000_000 + 100_000 * i - 2000) * 1000 for i in range(CYCLES)]


def _stamp(message: dict[str, Any]) -> int:
    stamp = message['header']['stamp']
    return int(stamp['sec']) * 10**9 + int(stamp['nanosec'])


def test_an_honest_bridge_run_is_re_derived_exactly(tmp_path: Path) -> None:
    """Every recorded /state/nav, /observations and /vehicle_status equals the re-derived one."""
    bag, written = _run(tmp_path)
    result = verify_all(bag)
    assert result.holds, result.summary_lines()
    replay = result.replay
    assert replay is not None and replay.holds and replay.bridge is not None
    report = replay.bridge
    assert report.holds and report.unmatched == 0, report.summary()
    counts = {stream.stream: stream.exact for stream in report.streams}
    assert counts == {'state/nav': _count(written, '/state/nav'),
                      'observations': _count(written, '/observations'),
                      'vehicle_status': _count(written, '/vehicle_status')}
    # arming, take-off and the mission's end each change the status (and heartbeats between)
    assert counts['state/nav'] == CYCLES and counts['vehicle_status'] >= 4
    total = sum(counts.values())
    assert report.summary() == (
        f'px4_bridge: {total}/{total} outputs re-derived exactly from the PX4 samples they '
        f'name (/state/nav {CYCLES}, /observations {counts["observations"]}, /vehicle_status '
        f'{counts["vehicle_status"]}; from {sum(n for _, n in report.inputs)} fmu/out '
        'messages)')
    assert report.summary() in result.summary_lines()
    _consistent(report)
    assert cli.verify_all_main([str(bag)]) == ExitCode.OK


def test_the_decision_context_tells_the_ground_the_air_and_the_mission(tmp_path: Path) -> None:
    """The statuses say on the ground, in the air, on the mission, then holding at its end."""
    from ghost_core.levels import FlightStatus, MissionStatus

    _, written = _run(tmp_path, agent=False)
    seen = [(FlightStatus(item.msg['flight_status']), MissionStatus(item.msg['mission_status']))
            for item in written if item.topic == '/vehicle_status']
    changes = [status for k, status in enumerate(seen) if k == 0 or seen[k - 1] != status]
    assert changes == [
        (FlightStatus.DISARMED, MissionStatus.NO_MISSION),
        (FlightStatus.ARMED_ON_GROUND, MissionStatus.ON_MISSION),
        (FlightStatus.IN_AIR, MissionStatus.ON_MISSION),
        (FlightStatus.IN_AIR, MissionStatus.HOLDING)]


def test_a_belief_altered_after_the_bridge_fails_when_re_signed(tmp_path: Path) -> None:
    """The attack: a shrunk covariance on one /state/nav, re-signed as the recorder would.

    The agent's messages re-derive from it; the bridge's re-derivation does not.
    """
    cycle = 7

    def shrink(topic: str, _: int, message: dict[str, Any], __: dict[str, Any]) -> bool:
        if topic == 'state/nav' and _stamp(message) == STAMPS[cycle]:
            message['pose']['covariance'][0] /= 4.0
        return True

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
        '/state/nav', STAMPS[cycle], 'pose.covariance[0]')
    assert difference.recorded == difference.recomputed / 4.0
    assert report.summary().startswith('px4_bridge: DIFFERS (')
    assert '1 differ;' in report.summary()
    _consistent(report)
    assert any(line.startswith('note: px4_bridge: /state/nav: 1 of ')
               for line in result.summary_lines())
    assert cli.verify_all_main([str(bag)]) == ExitCode.VIOLATED
    assert cli.verify_all_main([str(bag), '--no-replay']) == ExitCode.OK


def test_a_status_naming_an_old_vehicle_status_is_claimed_late(tmp_path: Path) -> None:
    """The attack: the statuses after cycle 12 say DISARMED, naming cycle 0's vehicle_status.

    Their own named samples re-derive them; but the recorder logged the arming (cycle 10)
    more than the bound before their beliefs' samples, and it gives another status. Naming
    no vehicle_status at all (UNKNOWN) is claimed late too.
    """
    def forge(keep: bool) -> Alter:
        def alter(topic: str, _: int, message: dict[str, Any], sources: dict[str, Any]) -> bool:
            if topic == 'vehicle_status' and _stamp(message) > STAMPS[12]:
                message['flight_status'] = 1 if keep else 0  # DISARMED / UNKNOWN
                message['mission_status'] = 1 if keep else 0  # NO_MISSION (POSCTL) / UNKNOWN
                at = sources['source_topics'].index('/fmu/out/vehicle_status')
                if keep:
                    sources['stamps'][at] = 1_000_000
                else:
                    for key in ('source_topics', 'stamp_fields', 'stamps'):
                        del sources[key][at]
            return True
        return alter

    for keep in (True, False):
        report = _bridge(_run(tmp_path / str(keep), alter=forge(keep), agent=False)[0])
        status = _stream(report, 'vehicle_status')
        assert status.violations.get('input_claimed_late', 0) >= 1, report.summary()
        # the statuses up to cycle 12 are honest, every later one is claimed late
        assert status.differing == 0 and status.exact + status.violations[
            'input_claimed_late'] == status.recorded
        assert status.first is not None and 'though the recorder logged timestamp 2000000' \
            in status.first.describe()
        _consistent(report)


def _odometry(cycle: int) -> dict[str, Any]:
    return next(msg for _, method, _, msg in _px4_inputs(_typestore())
                if method == 'odometry' and msg['timestamp'] == 1_000_000 + 100_000 * cycle)


def _local_position(cycle: int) -> dict[str, Any]:
    return next(msg for _, method, _, msg in _px4_inputs(_typestore())
                if method == 'local_position'
                and msg['timestamp'] == 1_000_000 + 100_000 * cycle)


def test_a_named_sample_logged_after_the_bound_is_from_the_future(tmp_path: Path) -> None:
    """Odometry 15 logged more than TRANSPORT_BOUND_NS after the belief naming it: a violation.

    Within the bound (DDS orders two topics in either order) it is exact.
    """
    def late(by: int) -> Relog:
        return lambda method, index, log: log + by if (method, index) == ('odometry', 15) \
            else log

    report = _bridge(_run(tmp_path, relog=late(TRANSPORT_BOUND_NS + 50_000_000),
                          agent=False)[0])
    nav = _stream(report, 'state/nav')
    assert nav.violations == {'named_input_from_the_future': 1}, report.summary()
    assert 'named_input_from_the_future' in report.summary()
    # the status published with that belief names it too (the heartbeat at cycle 15 or not)
    _consistent(report)
    near = _bridge(_run(tmp_path / 'near', relog=late(TRANSPORT_BOUND_NS - 50_000_000),
                        agent=False)[0])
    assert near.holds and near.unmatched == 0, near.summary()


def test_a_named_sample_the_bag_lacks_mid_run_is_missing(tmp_path: Path) -> None:
    """A vehicle_odometry the recorder lacks while it heard the topic: named_input_missing.

    Lost before the recorder heard the topic (its first samples) or after it last did:
    unverifiable, counted, --strict fails.
    """
    def lost(which: set[int]) -> Relog:
        return lambda method, index, log: None if method == 'odometry' and index in which \
            else log

    bag, _ = _run(tmp_path, relog=lost({12}))
    report = _bridge(bag)
    assert _stream(report, 'state/nav').violations == {'named_input_missing': 1}
    assert not verify_all(bag).holds
    _consistent(report)
    edges, _ = _run(tmp_path / 'edges', relog=lost({0, 1, CYCLES - 1}))
    result = verify_all(edges)
    assert result.holds, result.summary_lines()
    report = result.replay.bridge  # type: ignore[union-attr]
    assert report is not None and not report.violated
    nav = _stream(report, 'state/nav')
    assert nav.unverifiable == {
        'names a sample of /fmu/out/vehicle_odometry from before the recorder heard the '
        'topic': 2,
        'names a sample of /fmu/out/vehicle_odometry from after the recorder last heard the '
        'topic': 1}, nav
    _consistent(report)
    assert '(4 unverifiable)' in report.summary() or '(3 unverifiable)' in report.summary()
    assert any('unverifiable: names a sample' in line for line in result.summary_lines())
    assert not verify_all(edges, strict=True).holds


def test_an_output_without_its_sources_fails_unless_at_the_edges(tmp_path: Path) -> None:
    """No source_samples for a belief mid-run: provenance_missing.

    None at all (a bridge that switches the check off): every output fails. The last
    output's lost at shutdown: unverifiable.
    """
    def drop(which: Callable[[str, int], bool]) -> Alter:
        return lambda topic, index, message, sources: not which(topic, index)

    report = _bridge(_run(tmp_path, alter=drop(lambda t, i: (t, i) == ('state/nav', 9)),
                          agent=False)[0])
    assert _stream(report, 'state/nav').violations == {'provenance_missing': 1}
    _consistent(report)
    report = _bridge(_run(tmp_path / 'none', alter=drop(lambda t, i: True), agent=False)[0])
    assert report.violated and report.possible
    assert all(stream.violations == {'provenance_missing': stream.recorded}
               for stream in report.streams), report.summary()
    report = _bridge(_run(tmp_path / 'end', alter=drop(
        lambda t, i: (t, i) == ('state/nav', CYCLES - 1)), agent=False)[0])
    assert report.holds and report.unmatched == 1, report.summary()


def test_sources_the_recorder_logged_late_still_name_the_inputs(tmp_path: Path) -> None:
    """Source_samples the recorder logged 2 s after their outputs still name their inputs.

    The recorder drains /source_samples (the busiest topic) behind the outputs; the samples
    are judged by the output's own log time.
    """
    report = _bridge(_run(tmp_path, sources_late_ns=2_000_000_000, agent=False)[0])
    assert report.holds and report.unmatched == 0, report.summary()

    def late(method: str, index: int, log: int) -> int:
        return log + TRANSPORT_BOUND_NS + 50_000_000 if (method, index) == ('odometry', 15) \
            else log

    report = _bridge(_run(tmp_path / 'future', relog=late, sources_late_ns=2_000_000_000,
                          agent=False)[0])
    assert _stream(report, 'state/nav').violations == {'named_input_from_the_future': 1}


def test_a_forged_status_or_a_replayed_belief_differs(tmp_path: Path) -> None:
    """A forged status, a replayed belief, sources naming a topic not read: differences.

    The status is not what its named samples give; the copy of an earlier belief is stamped
    not after the previous one.
    """
    def forged(topic: str, _: int, message: dict[str, Any], __: dict[str, Any]) -> bool:
        if topic == 'vehicle_status':
            message['mission_status'] = 7  # LANDING: never the vehicle's here
        return True

    report = _bridge(_run(tmp_path, alter=forged, agent=False)[0])
    status = _stream(report, 'vehicle_status')
    assert status.differing == status.recorded and status.first is not None
    assert status.first.field == 'mission_status'
    _consistent(report)

    copies: list[dict[str, Any]] = []

    def replayed(topic: str, index: int, message: dict[str, Any],
                 sources: dict[str, Any]) -> bool:
        if topic == 'state/nav' and index == 3:
            copies.extend((dict(message), dict(sources)))
        if topic == 'state/nav' and index == 5:
            message.clear()
            message.update(copies[0])
            sources.clear()
            sources.update(copies[1])
        if topic == 'observations' and index == 2:
            sources['source_topics'][1] = '/fmu/out/vehicle_status'
        return True

    report = _bridge(_run(tmp_path / 'replayed', alter=replayed, agent=False)[0])
    nav = _stream(report, 'state/nav')
    assert nav.differing == 1 and nav.first is not None and nav.first.kind == 'order'
    fixes = _stream(report, 'observations')
    assert fixes.differing == 1 and fixes.first is not None
    assert fixes.first.kind == 'provenance' and 'does not read' in fixes.first.describe()


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
