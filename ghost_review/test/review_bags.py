"""Bags for the review tests: a scenario's inputs, and its decisions read back independently."""

from collections.abc import Callable
from pathlib import Path
import shutil
from typing import Any

from mcap.reader import make_reader
from mcap.writer import Writer
from mcap_ros2._dynamic import serialize_dynamic
from mcap_ros2.decoder import DecoderFactory

from ghost_bag.cdr import compile_decoder
from ghost_bag.write import GhostBagWriter
from ghost_core.levels import DecisionKind
from ghost_core.scenarios import generate_scenario

ROOT = Path(__file__).resolve().parents[2]
MSG_DIR = ROOT / 'ghost_interfaces' / 'msg'
CONFIG = ROOT / 'config'
REALDATA = ROOT.parent / 'shared' / 'realdata'
#: The parameter files the drift_then_recovery scenario runs with.
SCENARIO_PARAMS = (CONFIG / 'ghost.yaml', CONFIG / 'scenarios' / 'drift_then_recovery.yaml')


def _stamp(ns: int) -> dict[str, int]:
    return {'sec': ns // 1_000_000_000, 'nanosec': ns % 1_000_000_000}


def write_scenario_inputs(path: Path, name: str = 'drift_then_recovery',
                          fix_offset_m: float = 0.0) -> Path:
    """The scenario's /state/nav and /observations as an input bag (log time = stamp).

    `fix_offset_m`: every fix moved this far east (a biased fix source, e.g. a wrong antenna
    offset), so the outcomes' normalised distances grow by about that over their σ.
    """
    scenario = generate_scenario(name)
    entries = []
    for cycle in scenario.cycles:
        belief = cycle.belief
        entries.append((belief.stamp_ns, 1, '/state/nav', 'nav_msgs/msg/Odometry', {
            'header': {'stamp': _stamp(belief.stamp_ns), 'frame_id': scenario.frame_id},
            'child_frame_id': 'base_link',
            'pose': {'pose': {'position': dict(zip('xyz', belief.position, strict=True)),
                              'orientation': dict(zip('xyzw', belief.orientation_xyzw,
                                                      strict=True))},
                     'covariance': [float(v) for v in belief.pose_covariance]},
            'twist': {'twist': {'linear': dict(zip('xyz', belief.velocity, strict=True)),
                                'angular': {'x': 0.0, 'y': 0.0, 'z': 0.0}},
                      'covariance': [float(v) for v in belief.twist_covariance]}}))
        fix = cycle.observation
        if fix is not None:
            covariance = [0.0] * 36
            for i in range(3):
                for j in range(3):
                    covariance[i * 6 + j] = float(fix.covariance[i * 3 + j])
            entries.append((fix.stamp_ns, 0, '/observations',
                            'geometry_msgs/msg/PoseWithCovarianceStamped', {
                                'header': {'stamp': _stamp(fix.stamp_ns),
                                           'frame_id': scenario.frame_id},
                                'pose': {'pose': {'position': {
                                    'x': fix.position[0] + fix_offset_m,
                                    'y': fix.position[1], 'z': fix.position[2]},
                                                  'orientation': {'x': 0.0, 'y': 0.0, 'z': 0.0,
                                                                  'w': 1.0}},
                                         'covariance': covariance}}))
    entries.sort(key=lambda entry: (entry[0], entry[1]))
    with GhostBagWriter(path, MSG_DIR) as writer:
        for log_time, _, topic, type_name, message in entries:
            writer.write(topic, type_name, message, log_time)
    return path


def decisions_of(bag: Path) -> list[tuple[int, str]]:
    """(cycle stamp, decision name) of every /decisions message, by stamp (mcap_ros2 only)."""
    files = sorted(bag.glob('*.mcap')) if bag.is_dir() else [bag]
    found = []
    for path in files:
        with path.open('rb') as handle:
            reader = make_reader(handle, decoder_factories=[DecoderFactory()])
            for _, _, _, msg in reader.iter_decoded_messages(topics=['/decisions']):
                stamp = msg.header.stamp
                found.append((stamp.sec * 1_000_000_000 + stamp.nanosec,
                              DecisionKind(msg.decision.kind).name))
    return sorted(found)


def histories_of(bag: Path) -> dict[int, tuple[str, int, int, int, int]]:
    """Cycle stamp -> (adjustment reason, count 3-5σ, count beyond 5σ, K, W), mcap_ros2 only."""
    files = sorted(bag.glob('*.mcap')) if bag.is_dir() else [bag]
    found = {}
    for path in files:
        with path.open('rb') as handle:
            reader = make_reader(handle, decoder_factories=[DecoderFactory()])
            for _, _, _, msg in reader.iter_decoded_messages(
                    topics=['/self_assessment/calibrated']):
                stamp = msg.header.stamp
                history = msg.calibration_history
                found[stamp.sec * 1_000_000_000 + stamp.nanosec] = (
                    msg.adjustment_reason, history.count_beyond_3_std,
                    history.count_beyond_5_std, msg.downgrade_threshold, history.window_size)
    return found


def expected_episodes(bag: Path) -> list[tuple[str, int, int]]:
    """(decision, start ns, end ns) of each maximal run of one non-PROCEED decision.

    The end is the stamp of the next decision, or the run's last stamp at the end of the bag.
    """
    decisions = decisions_of(bag)
    runs = []
    start = 0
    for index in range(1, len(decisions) + 1):
        if index == len(decisions) or decisions[index][1] != decisions[start][1]:
            kind = decisions[start][1]
            if kind != 'PROCEED':
                end = decisions[index][0] if index < len(decisions) else decisions[-1][0]
                runs.append((kind, decisions[start][0], end))
            start = index
    return runs


def tampered_copy(bag: Path, output: Path, topic: str, stamp_ns: int,
                  change: Callable[[dict[str, Any]], None]) -> Path:
    """A copy of a Ghost bag with `change` applied to the `topic` message of cycle `stamp_ns`.

    Every other message is copied byte for byte; the changed one is re-encoded from its dict
    with mcap_ros2's encoder (no hash is recomputed: what a careless editor of a bag does).
    """
    (source,) = sorted(bag.glob('*.mcap'))
    output.mkdir(parents=True)
    changed = 0
    with source.open('rb') as handle, (output / source.name).open('wb') as sink:
        writer = Writer(sink)
        writer.start(profile='ros2', library='ghost_review test')
        schemas: dict[int, int] = {}
        channels: dict[int, int] = {}
        for schema, channel, message in make_reader(handle).iter_messages(log_time_order=False):
            if schema is not None and schema.id not in schemas:
                schemas[schema.id] = writer.register_schema(schema.name, schema.encoding,
                                                            schema.data)
            if channel.id not in channels:
                channels[channel.id] = writer.register_channel(
                    channel.topic, channel.message_encoding,
                    schemas[schema.id] if schema is not None else 0, channel.metadata)
            data = message.data
            if channel.topic == topic and schema is not None:
                fields = compile_decoder(schema.name, schema.data.decode())(data)
                header = _mapping_of(fields.get('header'))
                stamp = _mapping_of(header.get('stamp'))
                if stamp.get('sec', -1) * 1_000_000_000 + stamp.get('nanosec', 0) == stamp_ns:
                    change(fields)
                    encode = serialize_dynamic(schema.name, schema.data.decode())[schema.name]
                    data = encode(fields)
                    changed += 1
            writer.add_message(channels[channel.id], message.log_time, data,
                               message.publish_time, message.sequence)
        writer.finish()
    assert changed == 1, f'{topic} at {stamp_ns}: {changed} messages changed'
    for name in ('metadata.yaml', 'manifest.json'):
        if (bag / name).is_file():
            shutil.copy(bag / name, output / name)
    return output


def _mapping_of(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
