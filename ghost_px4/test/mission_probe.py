"""Test vehicle for mission_setpoints: publishes local positions, prints the setpoints it gets.

    python mission_probe.py PHASES.json

PHASES.json is a list of ``{"fields": {...VehicleLocalPosition fields...}, "hold_s": S}``. Once
the mission node's subscription and publisher have matched at both ends (its reports on
ghost/graph_status: it runs with ``graph_status:=true``), each phase publishes its local
position on fmu/out/vehicle_local_position (PX4's QoS) every 50 ms for ``hold_s`` seconds and
keeps the TrajectorySetpoints received on ghost/mission/trajectory_setpoint from 0.3 s into the
phase (earlier ones may answer the previous phase). Prints one JSON line: per phase, the list
of setpoints (``timestamp``, ``position``, ``velocity``, ``acceleration``, ``jerk``, ``yaw``,
``yawspeed``; NaN as null). Needs px4_msgs (the ``px4_env`` fixture).
"""

import json
import math
from pathlib import Path
import sys
import time

from px4_msgs.msg import TrajectorySetpoint, VehicleLocalPosition
import rclpy
from rclpy.qos import QoSDurabilityPolicy, QoSHistoryPolicy, QoSProfile, QoSReliabilityPolicy

PX4_QOS = QoSProfile(reliability=QoSReliabilityPolicy.BEST_EFFORT,
                     durability=QoSDurabilityPolicy.TRANSIENT_LOCAL,
                     history=QoSHistoryPolicy.KEEP_LAST, depth=5)
READER_QOS = QoSProfile(reliability=QoSReliabilityPolicy.RELIABLE,
                        durability=QoSDurabilityPolicy.VOLATILE,
                        history=QoSHistoryPolicy.KEEP_LAST, depth=100)


def _null(value):
    return None if isinstance(value, float) and math.isnan(value) else value


def _setpoint(msg):
    return {'timestamp': msg.timestamp, 'yaw': _null(float(msg.yaw)),
            'yawspeed': _null(float(msg.yawspeed)),
            **{name: [_null(float(v)) for v in getattr(msg, name)]
               for name in ('position', 'velocity', 'acceleration', 'jerk')}}


def main() -> int:
    phases = json.loads(Path(sys.argv[1]).read_text())
    rclpy.init()
    node = rclpy.create_node('mission_probe')
    pub = node.create_publisher(VehicleLocalPosition, 'fmu/out/vehicle_local_position', PX4_QOS)
    inbox = []
    node.create_subscription(TrajectorySetpoint, 'ghost/mission/trajectory_setpoint',
                             lambda msg: inbox.append((time.monotonic(), _setpoint(msg))),
                             READER_QOS)
    deadline = time.monotonic() + 20.0
    while not (pub.get_subscription_count() >= 1
               and node.count_publishers('ghost/mission/trajectory_setpoint') >= 1):
        if time.monotonic() > deadline:
            print('mission_setpoints never matched', file=sys.stderr)
            return 1
        rclpy.spin_once(node, timeout_sec=0.05)
    # Matched at both ends (the mission's reader has matched our writer too): the nodes'
    # reports on ghost/graph_status (the mission runs with graph_status:=true).
    from ghost_nodes.readiness import GraphReadiness, GraphStatusReporter

    readiness = GraphReadiness(node, {'/fmu/out/vehicle_local_position': 1,
                                      '/ghost/mission/trajectory_setpoint': 1},
                               GraphStatusReporter(node))
    while readiness.missing():
        if time.monotonic() > deadline:
            print(f'mission_setpoints never ready: {readiness.missing()}', file=sys.stderr)
            return 1
        rclpy.spin_once(node, timeout_sec=0.05)
    readiness.close()
    seen = []
    for phase in phases:
        msg = VehicleLocalPosition()
        for name, value in phase['fields'].items():
            setattr(msg, name, value)
        start = time.monotonic()
        next_publish = start
        while time.monotonic() - start < phase['hold_s']:
            if time.monotonic() >= next_publish:
                pub.publish(msg)
                next_publish += 0.05
            rclpy.spin_once(node, timeout_sec=0.01)
        end = time.monotonic()
        seen.append([sp for at, sp in inbox if start + 0.3 <= at <= end])
    print(json.dumps(seen), flush=True)
    node.destroy_node()
    rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    sys.exit(main())
