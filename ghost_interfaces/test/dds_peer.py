"""A peer process for the cross-process DDS test: sends or receives a CalibratedSelfAssessment."""

import json
import sys

import rclpy
from rclpy.qos import QoSDurabilityPolicy, QoSHistoryPolicy, QoSProfile, QoSReliabilityPolicy

from ghost_interfaces.msg import BeliefSelfAssessment, CalibratedSelfAssessment

QOS = QoSProfile(reliability=QoSReliabilityPolicy.RELIABLE,
                 durability=QoSDurabilityPolicy.VOLATILE,
                 history=QoSHistoryPolicy.KEEP_LAST, depth=100)
TOPIC = '/self_assessment/calibrated'


def send() -> None:
    rclpy.init()
    node = rclpy.create_node('dds_peer_sender')
    pub = node.create_publisher(CalibratedSelfAssessment, TOPIC, QOS)
    msg = CalibratedSelfAssessment()
    msg.header.stamp.sec = 42
    msg.header.stamp.nanosec = 7
    msg.header.frame_id = 'map'
    msg.raw_assessment.overall_level = BeliefSelfAssessment.KNOWN
    msg.raw_assessment.thresholds_sha256 = 'ab' * 32
    msg.raw_assessment_sha256 = 'cd' * 32
    msg.calibration_history.outcomes_considered = 5
    msg.calibration_history.count_beyond_5_std = 5
    msg.calibration_history.worst_position_mahalanobis = float('inf')
    msg.adjusted_overall_level = BeliefSelfAssessment.UNCERTAIN
    msg.adjustment_policy_id = 'mahalanobis_downgrade_v1'
    msg.adjustment_reason = 'downgrade_from_calibration'
    msg.min_outcomes = 4
    msg.downgrade_threshold = 2
    msg.schema_version = 1
    # Publish until the receiver (which exits once it has the message) is gone: discovery
    # takes an unknown time, and a volatile topic only reaches readers already matched.
    try:
        while rclpy.ok():
            pub.publish(msg)
            rclpy.spin_once(node, timeout_sec=0.05)
    except KeyboardInterrupt:
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


def receive() -> None:
    rclpy.init()
    node = rclpy.create_node('dds_peer_receiver')
    got: list[CalibratedSelfAssessment] = []
    node.create_subscription(CalibratedSelfAssessment, TOPIC, got.append, QOS)
    try:
        while not got:
            rclpy.spin_once(node, timeout_sec=0.1)
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    msg = got[0]
    print(json.dumps({
        'stamp': [msg.header.stamp.sec, msg.header.stamp.nanosec],
        'frame_id': msg.header.frame_id,
        'raw_level': msg.raw_assessment.overall_level,
        'raw_sha': msg.raw_assessment_sha256,
        'outcomes': msg.calibration_history.outcomes_considered,
        'beyond_5': msg.calibration_history.count_beyond_5_std,
        'worst': str(msg.calibration_history.worst_position_mahalanobis),
        'adjusted': msg.adjusted_overall_level,
        'reason': msg.adjustment_reason,
        'm_k': [msg.min_outcomes, msg.downgrade_threshold],
    }), flush=True)


if __name__ == '__main__':
    {'send': send, 'receive': receive}[sys.argv[1]]()
