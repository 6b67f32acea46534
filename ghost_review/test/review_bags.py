"""Bags for the review tests: a scenario's inputs, and its decisions read back independently."""

from pathlib import Path

from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory

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


def write_scenario_inputs(path: Path, name: str = 'drift_then_recovery') -> Path:
    """The scenario's /state/nav and /observations as an input bag (log time = stamp)."""
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
                                'pose': {'pose': {'position': dict(zip('xyz', fix.position,
                                                                       strict=True)),
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
