"""Test driver: publishes a JSON list of cycles on /state/nav and /observations, then exits.

Each cycle: {"stamp_ns", "frame_id", "position", "velocity", "orientation" (x,y,z,w),
"pose_covariance" (36), "twist_covariance" (36), "observation": null or {"stamp_ns",
"frame_id", "position", "covariance" (36)}}. Numbers may be "nan", "inf", "-inf".
It waits until the graph has the given readers on each topic, matched at both ends (the
nodes' reports on /ghost/graph_status, as the scenario node waits), then plays the cycles at
--rate-hz, and prints 'done' when the last one is out.
"""

import argparse
import json
import sys
import time

from geometry_msgs.msg import PoseWithCovarianceStamped
from nav_msgs.msg import Odometry
import rclpy
from rclpy.duration import Duration
from rclpy.qos import qos_profile_sensor_data

from ghost_nodes.qos import GHOST_QOS
from ghost_nodes.readiness import GraphReadiness, GraphStatusReporter


def _f(value: object) -> float:
    return float(value)  # float('nan') / float('inf') parse the strings too


def _stamp(header, ns: int) -> None:
    header.stamp.sec, header.stamp.nanosec = divmod(int(ns), 1_000_000_000)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument('cycles')
    parser.add_argument('--rate-hz', type=float, default=20.0)
    parser.add_argument('--expect', nargs='*', default=[], help='topic=count')
    parser.add_argument('--pause-after', type=int, default=0,
                        help='after this many cycles, wait for a line on stdin')
    parser.add_argument('--state-topic', default='/state/nav')
    parser.add_argument('--observations-topic', default='/observations')
    parser.add_argument('--best-effort', action='store_true',
                        help="publish as MAVROS and PX4's bridge do: best-effort, keep last 5 "
                             '(rclpy qos_profile_sensor_data)')
    args = parser.parse_args()
    cycles = json.loads(open(args.cycles).read())
    rclpy.init()
    node = rclpy.create_node('ghost_test_feed')
    qos = qos_profile_sensor_data if args.best_effort else GHOST_QOS
    odom_pub = node.create_publisher(Odometry, args.state_topic, qos)
    obs_pub = node.create_publisher(PoseWithCovarianceStamped, args.observations_topic, qos)
    expect = {t: int(n) for t, _, n in (e.rpartition('=') for e in args.expect)}
    readiness = GraphReadiness(node, expect, GraphStatusReporter(node))
    deadline = time.monotonic() + 60
    while missing := readiness.missing():
        if time.monotonic() > deadline:
            print(f'graph incomplete: {missing}', file=sys.stderr)
            sys.exit(1)
        rclpy.spin_once(node, timeout_sec=0.05)
    readiness.close()
    print('ready', flush=True)
    for index, cycle in enumerate(cycles):
        if args.pause_after and index == args.pause_after:
            print('paused', flush=True)
            sys.stdin.readline()
        obs = cycle.get('observation')
        if obs is not None:
            msg = PoseWithCovarianceStamped()
            _stamp(msg.header, obs['stamp_ns'])
            msg.header.frame_id = obs['frame_id']
            p = msg.pose.pose.position
            p.x, p.y, p.z = (_f(v) for v in obs['position'])
            msg.pose.pose.orientation.w = 1.0
            msg.pose.covariance = [_f(v) for v in obs['covariance']]
            obs_pub.publish(msg)
        odom = Odometry()
        _stamp(odom.header, cycle['stamp_ns'])
        odom.header.frame_id = cycle['frame_id']
        odom.child_frame_id = 'base_link'
        p = odom.pose.pose.position
        p.x, p.y, p.z = (_f(v) for v in cycle['position'])
        q = odom.pose.pose.orientation
        q.x, q.y, q.z, q.w = (_f(v) for v in cycle['orientation'])
        odom.pose.covariance = [_f(v) for v in cycle['pose_covariance']]
        v = odom.twist.twist.linear
        v.x, v.y, v.z = (_f(x) for x in cycle['velocity'])
        odom.twist.covariance = [_f(x) for x in cycle['twist_covariance']]
        odom_pub.publish(odom)
        time.sleep(1.0 / args.rate_hz)  # pacing: the cycles' rate, not a wait for delivery
    print('done', flush=True)
    # Keep the writers until every reader has acknowledged the last samples (reliable: a lost
    # one is resent only by a living writer; best-effort returns at once).
    for pub in (odom_pub, obs_pub):
        if not pub.wait_for_all_acked(Duration(seconds=10)):
            print(f'{pub.topic_name}: not every sample acknowledged within 10 s',
                  file=sys.stderr)
    node.destroy_node()
    rclpy.try_shutdown()


if __name__ == '__main__':
    main()
