"""Input bags (/state/nav + /observations only) written from scenarios, for replay tests."""

from pathlib import Path

from ghost_bag.write import GhostBagWriter
from ghost_core.scenarios import Scenario

MSG_DIR = Path(__file__).resolve().parents[2] / 'ghost_interfaces' / 'msg'
STATE_TYPE = 'nav_msgs/msg/Odometry'
OBSERVATION_TYPE = 'geometry_msgs/msg/PoseWithCovarianceStamped'


def _stamp(ns: int) -> dict[str, int]:
    return {'sec': ns // 1_000_000_000, 'nanosec': ns % 1_000_000_000}


def odometry_dict(belief, frame_id: str = 'map') -> dict:
    """The nav_msgs/Odometry of a scenario belief (twist in the body frame = map here)."""
    x, y, z = belief.position
    qx, qy, qz, qw = belief.orientation_xyzw
    vx, vy, vz = belief.velocity
    return {
        'header': {'stamp': _stamp(belief.stamp_ns), 'frame_id': frame_id},
        'child_frame_id': 'base_link',
        'pose': {'pose': {'position': {'x': x, 'y': y, 'z': z},
                          'orientation': {'x': qx, 'y': qy, 'z': qz, 'w': qw}},
                 'covariance': [float(v) for v in belief.pose_covariance]},
        'twist': {'twist': {'linear': {'x': vx, 'y': vy, 'z': vz},
                            'angular': {'x': 0.0, 'y': 0.0, 'z': 0.0}},
                  'covariance': [float(v) for v in belief.twist_covariance]},
    }


def pose_dict(observation, frame_id: str = 'map') -> dict:
    """The geometry_msgs/PoseWithCovarianceStamped of a scenario observation."""
    x, y, z = observation.position
    cov = [0.0] * 36
    for i in range(3):
        for j in range(3):
            cov[i * 6 + j] = float(observation.covariance[i * 3 + j])
    return {
        'header': {'stamp': _stamp(observation.stamp_ns), 'frame_id': frame_id},
        'pose': {'pose': {'position': {'x': x, 'y': y, 'z': z},
                          'orientation': {'x': 0.0, 'y': 0.0, 'z': 0.0, 'w': 1.0}},
                 'covariance': cov},
    }


def write_input_bag(path: Path, scenario: Scenario, state_topic: str = '/state/nav',
                    observations_topic: str = '/observations',
                    fix_delay_ns: int = 0) -> Path:
    """Write the scenario's inputs as a live graph would receive them.

    Log time = stamp (beliefs) and stamp + fix_delay_ns (fixes: a late GNSS); at equal log
    times the fix comes first, as the scenario node publishes it.
    """
    entries = []
    for cycle in scenario.cycles:
        if cycle.observation is not None:
            entries.append((cycle.observation.stamp_ns + fix_delay_ns, 0, observations_topic,
                            OBSERVATION_TYPE, pose_dict(cycle.observation, scenario.frame_id)))
        entries.append((cycle.belief.stamp_ns, 1, state_topic, STATE_TYPE,
                        odometry_dict(cycle.belief, scenario.frame_id)))
    entries.sort(key=lambda e: (e[0], e[1]))
    with GhostBagWriter(path, MSG_DIR) as writer:
        for log_time, _, topic, type_name, message in entries:
            writer.write(topic, type_name, message, log_time)
    return path
