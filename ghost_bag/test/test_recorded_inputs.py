"""The recorded inputs, decoded by ghost_bag.cdr, are what mcap-ros2-support's objects give.

``read_inputs`` decodes each belief, fix and status into its dict with the decoder generated
from the bag's schema and converts it with ``ghost_core.ros_inputs``. The reference is the
way they were read before: mcap-ros2-support's decoder, its objects converted by the same
functions. Compared by ``repr`` (so -0.0 and 0.0, NaN and inf are told apart), on beliefs
with rotated bodies, NaN, infinite and sentinel covariances, and on a damaged payload.
"""

from __future__ import annotations

import math
from pathlib import Path
import random

from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory
import pytest

from ghost_bag.errors import InputBagError
from ghost_bag.recorded_inputs import OBSERVATION_TYPE, read_inputs, STATE_TYPE
from ghost_bag.write import GhostBagWriter
from ghost_core.ros_inputs import belief_sample, observation_of

MSG_DIR = Path(__file__).resolve().parents[2] / 'ghost_interfaces' / 'msg'
ODD = (math.nan, math.inf, -math.inf, -0.0, 0.0, -1.0, 1e-300, 5e-324)


def _stamp(ns: int) -> dict[str, int]:
    return {'sec': ns // 1_000_000_000, 'nanosec': ns % 1_000_000_000}


def _value(rng: random.Random) -> float:
    return rng.choice(ODD) if rng.random() < 0.1 else rng.uniform(-1e3, 1e3)


def _xyz(rng: random.Random) -> dict[str, float]:
    return dict(zip('xyz', (_value(rng) for _ in range(3)), strict=True))


def _odometry(rng: random.Random, ns: int) -> dict[str, object]:
    quaternion = [rng.uniform(-1, 1) for _ in range(4)]
    return {
        'header': {'stamp': _stamp(ns), 'frame_id': rng.choice(['map', 'odom', ''])},
        'child_frame_id': 'base_link',
        'pose': {'pose': {'position': _xyz(rng),
                          'orientation': dict(zip('xyzw', quaternion, strict=True))},
                 'covariance': [_value(rng) for _ in range(36)]},
        'twist': {'twist': {'linear': _xyz(rng),
                            'angular': {'x': 0.0, 'y': 0.0, 'z': 0.0}},
                  'covariance': [_value(rng) for _ in range(36)]},
    }


def _pose(rng: random.Random, ns: int) -> dict[str, object]:
    return {'header': {'stamp': _stamp(ns), 'frame_id': 'map'},
            'pose': {'pose': {'position': _xyz(rng),
                              'orientation': {'x': 0.0, 'y': 0.0, 'z': 0.0, 'w': 1.0}},
                     'covariance': [_value(rng) for _ in range(36)]}}


def _bag(path: Path, cycles: int = 200) -> Path:
    rng = random.Random(7)
    with GhostBagWriter(path, MSG_DIR) as writer:
        for k in range(cycles):
            ns = 1_000_000_000 + k * 100_000_000
            writer.write('/observations', OBSERVATION_TYPE, _pose(rng, ns - 1), ns - 1)
            writer.write('/state/nav', STATE_TYPE, _odometry(rng, ns), ns)
    return path


def _reference(bag: Path) -> list[str]:
    """What mcap-ros2-support's objects give, converted by the same functions."""
    found = []
    for path in sorted(bag.glob('*.mcap')):
        with path.open('rb') as stream:
            reader = make_reader(stream, decoder_factories=[DecoderFactory()])
            for _, channel, message, decoded in reader.iter_decoded_messages(
                    topics=['/state/nav', '/observations']):
                sample = (belief_sample(decoded) if channel.topic == '/state/nav'
                          else observation_of(decoded))
                found.append(repr((message.log_time, channel.topic, sample)))
    return found


def test_inputs_are_those_mcap_ros2_objects_give(tmp_path: Path) -> None:
    bag = _bag(tmp_path / 'bag')
    ours = [repr((item.log_time_ns, item.topic, item.sample)) for item in read_inputs(bag)]
    assert len(ours) == 400
    assert ours == _reference(bag)


def test_a_damaged_input_is_named(tmp_path: Path) -> None:
    """A belief cut short: an InputBagError naming the topic and its log time, no traceback."""
    bag = tmp_path / 'bag'
    with GhostBagWriter(bag, MSG_DIR) as writer:
        message = _odometry(random.Random(1), 1_000_000_000)
        data = writer.serialize(STATE_TYPE, message)
        writer.write('/state/nav', STATE_TYPE, data[:40], 1_000_000_000)
    with pytest.raises(InputBagError, match=r'/state/nav message at log time 1000000000 '
                                            r'cannot be decoded'):
        list(read_inputs(bag))
