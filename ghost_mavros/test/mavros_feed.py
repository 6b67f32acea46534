"""Test publisher standing in for MAVROS: its topics, types and QoS; prints what it heard back.

    python mavros_feed.py STEPS.json [--namespace NS] [--expect topic=n ...]

STEPS.json is a list of ``{"topic": "odom" | "fix" | "gpsraw" | "state" | "extended_state",
"fields": {"dotted.name": value, ...}}``, published in order, 0.1 s apart, as MAVROS publishes
them: ``mavros/local_position/odom`` (nav_msgs/Odometry), ``mavros/global_position/raw/fix``
(sensor_msgs/NavSatFix) and ``mavros/gpsstatus/gps1/raw`` (mavros_msgs/GPSRAW) with rclcpp's
SensorDataQoS (best-effort, volatile, keep-last 5); ``mavros/state`` (mavros_msgs/State) and
``mavros/extended_state`` (mavros_msgs/ExtendedState) as its sys_status plugin does:
reliable, transient-local, keep-last 10. A field
``header.stamp`` is given in ns. First it waits until the graph has matched (the nodes'
reports on ghost/graph_status: ``--expect``, by default the bridge's own edges). Then it
listens 1 s more and prints one JSON line ``{"nav": [...], "obs": [...]}``.
Needs mavros_msgs importable (the ``mavros_env`` fixture).
"""

import argparse
import json
from pathlib import Path
import sys
import time

from geometry_msgs.msg import PoseWithCovarianceStamped
from mavros_msgs.msg import ExtendedState, GPSRAW, State
from nav_msgs.msg import Odometry
import rclpy
from rclpy.qos import QoSDurabilityPolicy, QoSHistoryPolicy, QoSProfile, QoSReliabilityPolicy
from sensor_msgs.msg import NavSatFix

SENSOR = QoSProfile(reliability=QoSReliabilityPolicy.BEST_EFFORT,
                    durability=QoSDurabilityPolicy.VOLATILE,
                    history=QoSHistoryPolicy.KEEP_LAST, depth=5)
STATE = QoSProfile(reliability=QoSReliabilityPolicy.RELIABLE,
                   durability=QoSDurabilityPolicy.TRANSIENT_LOCAL,
                   history=QoSHistoryPolicy.KEEP_LAST, depth=10)
TOPICS = {
    'odom': ('mavros/local_position/odom', Odometry, SENSOR),
    'fix': ('mavros/global_position/raw/fix', NavSatFix, SENSOR),
    'gpsraw': ('mavros/gpsstatus/gps1/raw', GPSRAW, SENSOR),
    'state': ('mavros/state', State, STATE),
    'extended_state': ('mavros/extended_state', ExtendedState, STATE),
}


def _stamp(header):
    return header.stamp.sec * 1_000_000_000 + header.stamp.nanosec


def _nav(msg):
    p, o = msg.pose.pose.position, msg.pose.pose.orientation
    lin = msg.twist.twist.linear
    return {'stamp_ns': _stamp(msg.header), 'frame_id': msg.header.frame_id,
            'child_frame_id': msg.child_frame_id, 'position': [p.x, p.y, p.z],
            'orientation': [o.x, o.y, o.z, o.w], 'linear': [lin.x, lin.y, lin.z],
            'pose_covariance': list(msg.pose.covariance),
            'twist_covariance': list(msg.twist.covariance)}


def _obs(msg):
    p = msg.pose.pose.position
    return {'stamp_ns': _stamp(msg.header), 'frame_id': msg.header.frame_id,
            'position': [p.x, p.y, p.z], 'covariance': list(msg.pose.covariance)}


def _message(step):
    msg = TOPICS[step['topic']][1]()
    for name, value in step['fields'].items():
        if name == 'header.stamp':
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(int(value), 1_000_000_000)
            continue
        *path, last = name.split('.')
        target = msg
        for part in path:
            target = getattr(target, part)
        setattr(target, last, value)
    return msg


def _spin_for(node, seconds):
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        rclpy.spin_once(node, timeout_sec=0.02)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument('steps')
    parser.add_argument('--namespace', default='')
    parser.add_argument('--expect', nargs='*', default=[],
                        help='topic=readers of the whole graph to wait for first')
    args = parser.parse_args()
    steps = json.loads(Path(args.steps).read_text())
    used = {step['topic'] for step in steps}
    rclpy.init()
    node = rclpy.create_node('mavros_feed', namespace=args.namespace or '/')
    pubs = {name: node.create_publisher(kind, topic, qos)
            for name, (topic, kind, qos) in TOPICS.items() if name in used}
    seen = {'nav': [], 'obs': []}
    node.create_subscription(Odometry, 'state/nav', lambda m: seen['nav'].append(_nav(m)), 10)
    node.create_subscription(PoseWithCovarianceStamped, 'observations',
                             lambda m: seen['obs'].append(_obs(m)), 10)
    from ghost_nodes.readiness import GraphReadiness, GraphStatusReporter

    wanted = args.expect or [*(f'{TOPICS[name][0]}=1' for name in pubs), 'state/nav=1',
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
        pubs[step['topic']].publish(_message(step))
        _spin_for(node, 0.1)
    _spin_for(node, 1.0)
    print(json.dumps(seen), flush=True)
    node.destroy_node()
    rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    sys.exit(main())
