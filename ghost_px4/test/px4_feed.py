"""Test publisher standing in for PX4's uXRCE-DDS bridge; prints what px4_bridge publishes.

    python px4_feed.py STEPS.json [--namespace NS]

STEPS.json is a list of ``{"topic": "vehicle_odometry" | "vehicle_local_position" |
"vehicle_gps_position" | "vehicle_status" | "vehicle_land_detected" | "mission_result",
"fields": {...}}``, published in order, 0.1 s apart,
on ``fmu/out/<topic>`` with px4_msgs types and PX4's QoS (best-effort, transient-local,
keep-last), once the bridge's subscriptions and publishers have matched at both ends (its
reports on ghost/graph_status: it runs with ``graph_status:=true``). Then it listens 1 s more
and prints one JSON line: ``{"nav": [...], "obs": [...]}`` (each message as a dict).
Needs px4_msgs importable (the ``px4_env`` fixture).
"""

import argparse
import json
from pathlib import Path
import sys
import time

from geometry_msgs.msg import PoseWithCovarianceStamped
from nav_msgs.msg import Odometry
from px4_msgs.msg import (
    MissionResult,
    SensorGps,
    VehicleLandDetected,
    VehicleLocalPosition,
    VehicleOdometry,
    VehicleStatus,
)
import rclpy
from rclpy.qos import QoSDurabilityPolicy, QoSHistoryPolicy, QoSProfile, QoSReliabilityPolicy

TYPES = {'vehicle_odometry': VehicleOdometry, 'vehicle_local_position': VehicleLocalPosition,
         'vehicle_gps_position': SensorGps, 'vehicle_status': VehicleStatus,
         'vehicle_land_detected': VehicleLandDetected, 'mission_result': MissionResult}
PX4_QOS = QoSProfile(reliability=QoSReliabilityPolicy.BEST_EFFORT,
                     durability=QoSDurabilityPolicy.TRANSIENT_LOCAL,
                     history=QoSHistoryPolicy.KEEP_LAST, depth=5)


def _stamp(header):
    return header.stamp.sec * 1_000_000_000 + header.stamp.nanosec


def _nav(msg):
    p, o = msg.pose.pose.position, msg.pose.pose.orientation
    lin, ang = msg.twist.twist.linear, msg.twist.twist.angular
    return {'stamp_ns': _stamp(msg.header), 'frame_id': msg.header.frame_id,
            'child_frame_id': msg.child_frame_id, 'position': [p.x, p.y, p.z],
            'orientation': [o.x, o.y, o.z, o.w], 'linear': [lin.x, lin.y, lin.z],
            'angular': [ang.x, ang.y, ang.z], 'pose_covariance': list(msg.pose.covariance),
            'twist_covariance': list(msg.twist.covariance)}


def _obs(msg):
    p = msg.pose.pose.position
    return {'stamp_ns': _stamp(msg.header), 'frame_id': msg.header.frame_id,
            'position': [p.x, p.y, p.z], 'covariance': list(msg.pose.covariance)}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument('steps')
    parser.add_argument('--namespace', default='')
    parser.add_argument('--expect', nargs='*', default=[],
                        help='topic=readers of the whole graph to wait for first (its nodes '
                             'report on ghost/graph_status), as a source does')
    args = parser.parse_args()
    steps = json.loads(Path(args.steps).read_text())
    rclpy.init()
    node = rclpy.create_node('px4_feed', namespace=args.namespace or '/')
    pubs = {name: node.create_publisher(kind, f'fmu/out/{name}', PX4_QOS)
            for name, kind in TYPES.items()}
    seen = {'nav': [], 'obs': []}
    node.create_subscription(Odometry, 'state/nav', lambda m: seen['nav'].append(_nav(m)), 10)
    node.create_subscription(PoseWithCovarianceStamped, 'observations',
                             lambda m: seen['obs'].append(_obs(m)), 10)
    deadline = time.monotonic() + 20.0
    while not (all(pub.get_subscription_count() >= 1 for pub in pubs.values())
               and node.count_publishers('state/nav') >= 1
               and node.count_publishers('observations') >= 1):
        if time.monotonic() > deadline:
            print('bridge never matched', file=sys.stderr)
            return 1
        rclpy.spin_once(node, timeout_sec=0.05)
    # Matched at both ends (the bridge's readers have matched our writers too): the nodes'
    # reports (the bridge runs with graph_status:=true), by default on the feed's own edges.
    from ghost_nodes.readiness import GraphReadiness, GraphStatusReporter

    wanted = args.expect or [*(f'fmu/out/{name}=1' for name in TYPES), 'state/nav=1',
                             'observations=1']
    expected = {node.resolve_topic_name(item.rpartition('=')[0]): int(item.rpartition('=')[2])
                for item in wanted}
    readiness = GraphReadiness(node, expected, GraphStatusReporter(node))
    deadline = time.monotonic() + 60.0
    while readiness.missing():
        if time.monotonic() > deadline:
            print(f'graph never ready: {readiness.missing()}', file=sys.stderr)
            return 1
        rclpy.spin_once(node, timeout_sec=0.05)
    readiness.close()
    for step in steps:
        msg = TYPES[step['topic']]()
        for name, value in step['fields'].items():
            setattr(msg, name, value)
        pubs[step['topic']].publish(msg)
        until = time.monotonic() + 0.1
        while time.monotonic() < until:
            rclpy.spin_once(node, timeout_sec=0.02)
    until = time.monotonic() + 1.0
    while time.monotonic() < until:
        rclpy.spin_once(node, timeout_sec=0.02)
    print(json.dumps(seen), flush=True)
    node.destroy_node()
    rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    sys.exit(main())
