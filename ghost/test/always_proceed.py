"""Test policy: answers every calibrated assessment with PROCEED, whatever it says.

A stand-in for a broken decision policy (policy_id ``always_proceed_test``), run in place of
the ``decision_policy`` node: its rationales are well-formed and hash-linked, so the real
action emitter executes them (CONTINUE_MISSION), and only the properties can tell.
"""

import signal

import rclpy

from ghost_core.contracts import Decision, DecisionContext
from ghost_core.decisions import decide_with_rationale
from ghost_core.graph import VEHICLE_STATUS_TOPIC
from ghost_core.hashing import hash_form
from ghost_core.levels import DecisionKind
from ghost_core.wire import parse_calibrated, to_msg_dict
from ghost_interfaces.msg import CalibratedSelfAssessment, DecisionRationale, VehicleStatus
from ghost_nodes.convert import from_msg_dict
from ghost_nodes.qos import GHOST_QOS, topic_qos
from ghost_nodes.readiness import GraphStatusReporter


class AlwaysProceed:
    """A policy that proceeds on every assessment."""

    policy_id = 'always_proceed_test'

    def decide(self, context: DecisionContext) -> Decision:
        return Decision(DecisionKind.PROCEED, context.stamp_ns, 'always_proceed')


def main() -> None:
    rclpy.init()
    node = rclpy.create_node('always_proceed_policy')
    policy = AlwaysProceed()
    pub = node.create_publisher(DecisionRationale, 'decisions', GHOST_QOS)

    def on_calibrated(msg: CalibratedSelfAssessment) -> None:
        # No vehicle status kept: UNKNOWN (a broken policy has no business with it either).
        context = DecisionContext.from_calibrated(parse_calibrated(hash_form(msg)), None)
        rationale = decide_with_rationale(policy, context)
        pub.publish(from_msg_dict(DecisionRationale, to_msg_dict(rationale)))

    node.create_subscription(CalibratedSelfAssessment, 'self_assessment/calibrated',
                             on_calibrated, GHOST_QOS)
    # The graph's edges are the real policy's: it reads the vehicle status too (and ignores it).
    node.create_subscription(VehicleStatus, 'vehicle_status', lambda _msg: None,
                             topic_qos(VEHICLE_STATUS_TOPIC))
    GraphStatusReporter(node)
    stop = []
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    while not stop:
        rclpy.spin_once(node, timeout_sec=0.05)
    node.destroy_node()
    rclpy.try_shutdown()


if __name__ == '__main__':
    main()
