"""Two separate processes exchange a CalibratedSelfAssessment over Fast DDS."""

import json
from pathlib import Path
import sys

PEER = str(Path(__file__).with_name('dds_peer.py'))


def test_calibrated_assessment_crosses_processes(ros_env, processes) -> None:
    """A receiver in one process gets, field for field, what a sender in another published."""
    receiver = processes.start([sys.executable, PEER, 'receive'], ros_env)
    processes.start([sys.executable, PEER, 'send'], ros_env)
    out, err = receiver.communicate(timeout=60)
    assert receiver.returncode == 0, err
    payload = json.loads(out.strip().splitlines()[-1])
    assert payload == {
        'stamp': [42, 7], 'frame_id': 'map', 'raw_level': 0, 'raw_sha': 'cd' * 32,
        'outcomes': 5, 'beyond_5': 5, 'worst': 'inf', 'adjusted': 1,
        'reason': 'downgrade_from_calibration', 'm_k': [4, 2],
    }
