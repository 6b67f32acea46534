"""Test driver: a stand-in estimator and position fix for a launch with use_scenario:=false.

Publishes ``--cycles`` nav_msgs/Odometry beliefs on ``--state-topic`` and as many
geometry_msgs/PoseWithCovarianceStamped fixes on ``--fix-topic`` at ``--rate-hz``: a level
flight at 1 m/s along x, with a consistent covariance (position std 0.1 m, velocity std
0.1 m/s, orientation std ~0.03 rad) and fixes on the true position (std 0.2 m), each fix
stamped like its belief and published just before it. ``--qos`` picks the writers'
reliability: ``reliable`` (a reliable EKF) or ``best_effort`` (MAVROS, PX4's bridge:
rclpy's qos_profile_sensor_data).

Before the first cycle it waits until the graph has the ``--expect`` readers on each topic,
matched at both ends (the nodes' reports on ghost/graph_status, as the scenario node waits),
and until ``--also-discovered`` readers that do not report (``ros2 topic echo``) are at least
discovered; it prints 'graph ready' after the first wait, 'ready' after the second. It
subscribes to ``actuations`` itself (count it in ``--expect``), plays the cycles, then waits
until each cycle has been actuated and prints 'actuated N'. Exit 0 when all were, 1 when
the graph or the loop did not complete in time.
"""

import argparse
import sys
import time

from geometry_msgs.msg import PoseWithCovarianceStamped
from nav_msgs.msg import Odometry
import rclpy
from rclpy.qos import qos_profile_sensor_data

from ghost_interfaces.msg import ActionEmission
from ghost_nodes.qos import GHOST_QOS
from ghost_nodes.readiness import GraphReadiness, GraphStatusReporter

#: The first belief's stamp (a fixed time: payloads do not depend on the wall clock).
START_NS = 1_700_000_000_000_000_000


def _counts(pairs: list[str]) -> dict[str, int]:
    return {topic: int(n) for topic, _, n in (pair.rpartition('=') for pair in pairs)}


def _diagonal(*variances: float) -> list[float]:
    matrix = [0.0] * 36
    for i, variance in enumerate(variances):
        matrix[i * 7] = variance
    return matrix


def _stamp(header: object, ns: int) -> None:
    header.stamp.sec, header.stamp.nanosec = divmod(ns, 1_000_000_000)  # type: ignore[attr-defined]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument('--state-topic', default='state/nav')
    parser.add_argument('--fix-topic', default='observations')
    parser.add_argument('--cycles', type=int, default=30)
    parser.add_argument('--rate-hz', type=float, default=10.0)
    parser.add_argument('--qos', choices=('reliable', 'best_effort'), default='reliable')
    parser.add_argument('--expect', nargs='*', default=[], help='topic=matched readers')
    parser.add_argument('--also-discovered', nargs='*', default=[],
                        help='topic=readers that must at least be discovered')
    parser.add_argument('--timeout', type=float, default=60.0)
    args = parser.parse_args()

    rclpy.init()
    node = rclpy.create_node('ghost_test_integration_feed')
    qos = GHOST_QOS if args.qos == 'reliable' else qos_profile_sensor_data
    odom_pub = node.create_publisher(Odometry, args.state_topic, qos)
    fix_pub = node.create_publisher(PoseWithCovarianceStamped, args.fix_topic, qos)
    actuated: set[int] = set()
    node.create_subscription(
        ActionEmission, 'actuations',
        lambda m: actuated.add(m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec),
        GHOST_QOS)
    readiness = GraphReadiness(node, _counts(args.expect), GraphStatusReporter(node))
    discovered = _counts(args.also_discovered)
    deadline = time.monotonic() + args.timeout
    try:
        while missing := readiness.missing():
            if time.monotonic() > deadline:
                print(f'graph incomplete after {args.timeout} s: {missing}', file=sys.stderr)
                return 1
            rclpy.spin_once(node, timeout_sec=0.05)
        readiness.close()
        print('graph ready', flush=True)
        while missing := {topic: f'{found}/{wanted} readers discovered'
                          for topic, wanted in discovered.items()
                          if (found := node.count_subscribers(topic)) < wanted}:
            if time.monotonic() > deadline:
                print(f'readers missing after {args.timeout} s: {missing}', file=sys.stderr)
                return 1
            rclpy.spin_once(node, timeout_sec=0.05)
        print('ready', flush=True)
        period_ns = int(1e9 / args.rate_hz)
        for index in range(args.cycles):
            stamp_ns = START_NS + index * period_ns
            x = index * period_ns / 1e9  # 1 m/s along x
            fix = PoseWithCovarianceStamped()
            _stamp(fix.header, stamp_ns)
            fix.header.frame_id = 'map'
            fix.pose.pose.position.x, fix.pose.pose.position.z = x, 10.0
            fix.pose.pose.orientation.w = 1.0
            fix.pose.covariance = _diagonal(0.04, 0.04, 0.04)
            fix_pub.publish(fix)
            odom = Odometry()
            _stamp(odom.header, stamp_ns)
            odom.header.frame_id = 'map'
            odom.child_frame_id = 'base_link'
            odom.pose.pose.position.x, odom.pose.pose.position.z = x, 10.0
            odom.pose.pose.orientation.w = 1.0
            odom.pose.covariance = _diagonal(0.01, 0.01, 0.01, 0.001, 0.001, 0.001)
            odom.twist.twist.linear.x = 1.0
            odom.twist.covariance = _diagonal(0.01, 0.01, 0.01, 0.001, 0.001, 0.001)
            odom_pub.publish(odom)
            # Spin between cycles: the actuations of the earlier cycles come in meanwhile.
            next_at = time.monotonic() + 1.0 / args.rate_hz
            while (left := next_at - time.monotonic()) > 0:
                rclpy.spin_once(node, timeout_sec=left)
        print('played', flush=True)
        deadline = time.monotonic() + 30.0
        while len(actuated) < args.cycles and time.monotonic() < deadline:
            rclpy.spin_once(node, timeout_sec=0.1)
        print(f'actuated {len(actuated)}', flush=True)
        return 0 if len(actuated) >= args.cycles else 1
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == '__main__':
    sys.exit(main())
