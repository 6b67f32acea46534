"""Test subscriber standing in for a PX4 ROS 2 user: prints what arrives on fmu/out/... as JSON.

    python px4_listen.py [--ghost] [--idle-s S] [--timeout S]

Subscribes to fmu/out/vehicle_odometry, vehicle_local_position, vehicle_gps_position,
vehicle_status, vehicle_land_detected and mission_result with PX4's QoS (best-effort,
transient-local, keep-last; depth 1000 rather than PX4's 5, so that a fast playback is counted,
not thinned by this reader's queue), and with
``--ghost`` to px4_bridge's state/nav and observations too. It reports its matched endpoints on
/ghost/graph_status (ghost_nodes.readiness), so a source waiting for its expected subscribers
waits for it. After the first message, once nothing has arrived for ``--idle-s`` seconds (or
at ``--timeout``), it prints one JSON line: per topic, every message as a dict of its fields
plus ``_received_s`` (monotonic), and ``timed_out``. Needs px4_msgs (the ``px4_env`` fixture).
"""

import argparse
import json
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

from ghost_nodes.readiness import GraphStatusReporter

TYPES = {'vehicle_odometry': VehicleOdometry, 'vehicle_local_position': VehicleLocalPosition,
         'vehicle_gps_position': SensorGps, 'vehicle_status': VehicleStatus,
         'vehicle_land_detected': VehicleLandDetected, 'mission_result': MissionResult}
PX4_QOS = QoSProfile(reliability=QoSReliabilityPolicy.BEST_EFFORT,
                     durability=QoSDurabilityPolicy.TRANSIENT_LOCAL,
                     history=QoSHistoryPolicy.KEEP_LAST, depth=1000)
GHOST_READER_QOS = QoSProfile(reliability=QoSReliabilityPolicy.BEST_EFFORT,
                              durability=QoSDurabilityPolicy.VOLATILE,
                              history=QoSHistoryPolicy.KEEP_LAST, depth=1000)


def _plain(value):
    if hasattr(value, 'tolist'):
        return value.tolist()
    return value


def _px4(msg):
    return {name: _plain(getattr(msg, name)) for name in msg.get_fields_and_field_types()}


def _stamp(header):
    return header.stamp.sec * 1_000_000_000 + header.stamp.nanosec


def _nav(msg):
    p, o = msg.pose.pose.position, msg.pose.pose.orientation
    v = msg.twist.twist.linear
    return {'stamp_ns': _stamp(msg.header), 'position': [p.x, p.y, p.z],
            'orientation': [o.x, o.y, o.z, o.w], 'linear': [v.x, v.y, v.z],
            'pose_covariance': list(msg.pose.covariance),
            'twist_covariance': list(msg.twist.covariance)}


def _obs(msg):
    p = msg.pose.pose.position
    return {'stamp_ns': _stamp(msg.header), 'position': [p.x, p.y, p.z],
            'covariance': list(msg.pose.covariance)}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument('--ghost', action='store_true')
    parser.add_argument('--idle-s', type=float, default=2.0)
    parser.add_argument('--timeout', type=float, default=60.0)
    args = parser.parse_args()
    rclpy.init()
    node = rclpy.create_node('px4_listen')
    seen: dict[str, list] = {name: [] for name in TYPES}
    last = [0.0]

    def keep(name, convert):
        def on_message(msg):
            now = time.monotonic()
            last[0] = now
            seen[name].append({**convert(msg), '_received_s': now})
        return on_message

    for name, kind in TYPES.items():
        node.create_subscription(kind, f'fmu/out/{name}', keep(name, _px4), PX4_QOS)
    if args.ghost:
        seen['nav'], seen['obs'] = [], []
        node.create_subscription(Odometry, 'state/nav', keep('nav', _nav), GHOST_READER_QOS)
        node.create_subscription(PoseWithCovarianceStamped, 'observations', keep('obs', _obs),
                                 GHOST_READER_QOS)
    GraphStatusReporter(node)
    deadline = time.monotonic() + args.timeout
    timed_out = False
    while not (last[0] and time.monotonic() - last[0] > args.idle_s):
        if time.monotonic() > deadline:
            timed_out = True
            break
        rclpy.spin_once(node, timeout_sec=0.05)
    print(json.dumps({'timed_out': timed_out, **seen}), flush=True)
    node.destroy_node()
    rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    sys.exit(main())
