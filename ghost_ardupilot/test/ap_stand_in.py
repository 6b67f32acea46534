"""Stand-in for Ghost and an ArduCopter in GUIDED around the ardupilot-mode command gate.

    python ap_stand_in.py PHASES.json [--refuse MODE ...]

Ghost's side: actuations (every 0.1 s, a new stamp each, rationale sha256 of the phase name)
and the mission's TwistStamped on cmd_vel_in (every 0.05 s, linear.x 1.0, the phase's frame).
The vehicle's side, as AP_DDS and Copter behave: /ap/mode_switch answers status true and the
mode asked as curr_mode (false and the current mode for a mode in --refuse); /ap/cmd_vel is
read best-effort (AP_DDS's QoS); Copter obeys it only in GUIDED (4, the start mode) and stops
by itself GUID_TIMEOUT_S (3 s) after the last one, which it reports once as an event.

PHASES.json: a list of {"name", "actuation": [decision, command] or null (none published),
"frame": "map", "until": {GateEmission fields}, "count": N, "announce": "LINE"}: a phase
ends when N gate records (default 1) match ``until``, or, with "until_event", once the vehicle
reports that event; "announce" is printed on stdout when it ends. At the end one JSON line:
the gate records, the cmd_vel received (with the vehicle's mode then), the mode requests, the
vehicle's events.
"""

import argparse
import hashlib
import json
from pathlib import Path
import sys
import time

from ardupilot_msgs.srv import ModeSwitch
from geometry_msgs.msg import TwistStamped
import rclpy
from rclpy.qos import QoSDurabilityPolicy, QoSHistoryPolicy, QoSProfile, QoSReliabilityPolicy
import rclpy.utilities

from ghost_interfaces.msg import ActionEmission, GateEmission
from ghost_nodes.qos import COMMAND_QOS, GHOST_QOS

AP_QOS = QoSProfile(reliability=QoSReliabilityPolicy.BEST_EFFORT,
                    durability=QoSDurabilityPolicy.VOLATILE,
                    history=QoSHistoryPolicy.KEEP_LAST, depth=5)
GUIDED = 4
GUID_TIMEOUT_S = 3.0
PHASE_DEADLINE_S = 20.0


def _ns(stamp) -> int:
    return stamp.sec * 1_000_000_000 + stamp.nanosec


class StandIn:
    """Ghost's actuations and mission in, the vehicle's service and cmd_vel reader out."""

    def __init__(self, node, refuse: set[int]) -> None:
        self.node = node
        self.refuse = refuse
        self.mode = GUIDED
        self.records: list[dict] = []
        self.cmd_vel: list[dict] = []
        self.requests: list[dict] = []
        self.events: list[dict] = []
        self.last_cmd_vel: float | None = None
        self.moving = False
        self.actuations = node.create_publisher(ActionEmission, 'actuations', GHOST_QOS)
        self.mission = node.create_publisher(TwistStamped, 'cmd_vel_in', COMMAND_QOS)
        node.create_subscription(GateEmission, 'ghost/gate', self.on_record, GHOST_QOS)
        node.create_subscription(TwistStamped, 'ap/cmd_vel', self.on_cmd_vel, AP_QOS)
        node.create_service(ModeSwitch, 'ap/mode_switch', self.on_mode_switch)
        node.create_timer(0.05, self.guided_timeout)

    def on_record(self, m) -> None:
        self.records.append({
            'stamp_ns': _ns(m.header.stamp), 'frame_id': m.header.frame_id, 'action': m.action,
            'reason': m.reason, 'mode': m.mode, 'output_topic': m.output_topic,
            'decision_kind': m.decision_kind, 'command_kind': m.command_kind,
            'rationale_sha256': m.rationale_sha256, 'twist_x': m.twist.linear.x,
            'vehicle_command': m.vehicle_command, 'mode_asked': m.mode_asked,
            'mode_answer': m.mode_answer, 'vehicle_mode': m.vehicle_mode})

    def on_cmd_vel(self, m) -> None:
        self.cmd_vel.append({'x': m.twist.linear.x, 'frame_id': m.header.frame_id,
                             'vehicle_mode': self.mode, 'at': time.monotonic()})
        if self.mode == GUIDED:
            self.last_cmd_vel = time.monotonic()
            self.moving = m.twist.linear.x != 0.0

    def on_mode_switch(self, request, response):
        accepted = request.mode not in self.refuse
        if accepted:
            self.mode = int(request.mode)
        self.requests.append({'mode': int(request.mode), 'accepted': accepted})
        response.status = accepted
        response.curr_mode = self.mode
        return response

    def guided_timeout(self) -> None:
        """Copter in GUIDED stops by itself GUID_TIMEOUT_S after the last cmd_vel."""
        if (self.mode == GUIDED and self.moving and self.last_cmd_vel is not None
                and time.monotonic() - self.last_cmd_vel >= GUID_TIMEOUT_S):
            self.moving = False
            self.events.append({'event': 'guided_timeout_stop', 'at': time.monotonic()})

    def send(self, name: str, actuation, frame: str) -> None:
        now = int(self.node.get_clock().now().nanoseconds)
        if actuation is not None:
            msg = ActionEmission()
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(now, 1_000_000_000)
            msg.decision.kind, msg.command.kind = actuation
            msg.rationale_sha256 = hashlib.sha256(name.encode()).hexdigest()
            self.actuations.publish(msg)
        twist = TwistStamped()
        twist.header.stamp.sec, twist.header.stamp.nanosec = divmod(now, 1_000_000_000)
        twist.header.frame_id = frame
        twist.twist.linear.x = 1.0
        self.mission.publish(twist)


def _matches(record: dict, until: dict) -> bool:
    return all(record.get(key) == value for key, value in until.items())


def _phase(stand_in: StandIn, phase: dict) -> bool:
    start = len(stand_in.records)
    events = len(stand_in.events)
    deadline = time.monotonic() + PHASE_DEADLINE_S
    next_send = 0.0
    while time.monotonic() < deadline:
        now = time.monotonic()
        if now >= next_send:
            stand_in.send(phase['name'], phase.get('actuation'), phase.get('frame', 'map'))
            next_send = now + 0.05
        rclpy.spin_once(stand_in.node, timeout_sec=0.01)
        if 'until_event' in phase:
            if any(e['event'] == phase['until_event'] for e in stand_in.events[events:]):
                return True
        elif sum(_matches(r, phase['until']) for r in stand_in.records[start:]) >= phase.get(
                'count', 1):
            return True
    return False


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument('phases', type=Path)
    parser.add_argument('--refuse', type=int, nargs='*', default=[])
    argv = rclpy.utilities.remove_ros_args(sys.argv)
    args = parser.parse_args(argv[1:])
    phases = json.loads(args.phases.read_text())
    rclpy.init(args=sys.argv)
    node = rclpy.create_node('ap_stand_in')
    stand_in = StandIn(node, set(args.refuse))
    deadline = time.monotonic() + PHASE_DEADLINE_S
    while node.count_subscribers('actuations') < 1 or node.count_publishers('ap/cmd_vel') < 1:
        rclpy.spin_once(node, timeout_sec=0.05)
        if time.monotonic() > deadline:
            print('no command_gate in the graph', file=sys.stderr)
            return 3
    done = []
    for phase in phases:
        ok = _phase(stand_in, phase)
        done.append({'name': phase['name'], 'ok': ok})
        if phase.get('announce'):
            print(phase['announce'], flush=True)
        if not ok:
            break
    print(json.dumps({'phases': done, 'records': stand_in.records, 'cmd_vel': stand_in.cmd_vel,
                      'requests': stand_in.requests, 'events': stand_in.events}), flush=True)
    node.destroy_node()
    rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    sys.exit(main())
