"""Test driver of the command gate: plays actuations and mission outputs, records what leaves.

    python gate_feed.py PHASES.json [--namespace NS] [--mode px4|twist] [--stamped]
    python gate_feed.py PHASES.json --no-actuations [...]
    python gate_feed.py --actuate-only DECISION COMMAND [--namespace NS]

PHASES.json is a list of phases, played in order. Each phase:

- ``name``: the phase; an actuation published in it cites ``sha256(name)`` as its rationale;
- ``actuation``: ``[decision, command]`` (Decision / ActuatorCommand constants): published at
  once and then every 0.1 s (one Ghost cycle, a new stamp each) until a later phase has its
  own or ``stop_actuations``; absent: the previous one goes on;
- ``actuation_sha``: the rationale_sha256 this phase's actuation cites instead of
  ``sha256(name)`` (e.g. not a SHA-256: a foreign publisher's);
- ``stop_actuations``: true: no more actuations from here on (the writer stays);
- ``local_position``: VehicleLocalPosition fields, published at the phase's start (PX4 QoS);
- ``until``: GateEmission fields (``action``, ``reason``, ...; ``cites``: a phase name, whose
  actuation the emission must cite) that ``count`` emissions (default 1) received in the phase
  must match;
- ``outputs``: mission outputs (trajectory setpoints or twists, each unique) to send, every
  0.05 s, once the first matching emission has arrived (they are sent from the phase's start
  until then as well; each is logged with ``after_match``);
- ``invalid_outputs``: true: this phase's outputs each have a non-finite component (below);
- ``announce``: a line printed on stdout when the phase is over.

A phase ends when both are done, then the feed listens 0.3 s more (actuations going on). After
the last phase it listens until every gate record heard has its output (up to 2 s).
The outputs: setpoint k has position (1000 + k, 0, -10), velocity NaN, yaw 0.5 and timestamp
123456 + k when k is odd, 0 when even; twist k has linear.x 1000 + k, angular.z 0.5 (and frame
'base_link', stamp k s when stamped). An invalid output k has, when k is even, position[1]
+inf (setpoint) or linear.y NaN (twist); when odd, velocity[2] +inf or angular.x +inf; it is
logged with ``invalid`` (the component). At the end one JSON line: everything sent and received,
each received message with the phase it arrived in. ``--actuate-only`` publishes one actuation
every 0.1 s until interrupted (a Ghost process to kill); ``--no-actuations`` creates no
actuation writer (another process is Ghost). Needs px4_msgs for px4 mode.
"""

import argparse
import hashlib
import json
from pathlib import Path
import sys
import time

from geometry_msgs.msg import Twist, TwistStamped
import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.qos import QoSDurabilityPolicy, QoSHistoryPolicy, QoSProfile, QoSReliabilityPolicy

from ghost_interfaces.msg import ActionEmission, GateEmission
from ghost_nodes.qos import GHOST_QOS
from ghost_nodes.readiness import GraphReadiness, GraphStatusReporter

COMMAND_QOS = QoSProfile(reliability=QoSReliabilityPolicy.RELIABLE,
                         durability=QoSDurabilityPolicy.VOLATILE,
                         history=QoSHistoryPolicy.KEEP_LAST, depth=100)
PX4_QOS = QoSProfile(reliability=QoSReliabilityPolicy.BEST_EFFORT,
                     durability=QoSDurabilityPolicy.TRANSIENT_LOCAL,
                     history=QoSHistoryPolicy.KEEP_LAST, depth=5)
CYCLE_S = 0.1
OUTPUT_PERIOD_S = 0.05
TAIL_S = 0.3
PHASE_DEADLINE_S = 20.0
#: After the last phase, how long the feed waits for the outputs of the gate records it heard.
SETTLE_S = 2.0


def sha(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()


def _ns(stamp) -> int:
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def _vec(values) -> list[float]:
    return [float(v) for v in values]


def _twist(t) -> dict:
    return {'linear': [t.linear.x, t.linear.y, t.linear.z],
            'angular': [t.angular.x, t.angular.y, t.angular.z]}


def _emission(m) -> dict:
    return {'stamp_ns': _ns(m.header.stamp), 'frame_id': m.header.frame_id, 'action': m.action,
            'reason': m.reason, 'mode': m.mode, 'output_topic': m.output_topic,
            'has_actuation': m.has_actuation, 'actuation_stamp_ns': _ns(m.actuation_stamp),
            'rationale_sha256': m.rationale_sha256, 'decision_kind': m.decision_kind,
            'command_kind': m.command_kind, 'received_ns': _ns(m.actuation_received),
            'timeout_s': m.timeout_s, 'position': _vec(m.position),
            'velocity': _vec(m.velocity), 'yaw': float(m.yaw), 'twist': _twist(m.twist),
            'vehicle_command': m.vehicle_command, 'mode_asked': m.mode_asked,
            'mode_answer': m.mode_answer, 'vehicle_mode': m.vehicle_mode,
            'schema_version': m.schema_version}


class Feed:
    def __init__(self, node, mode: str, stamped: bool, actuations: bool = True,
                 outputs: bool = True) -> None:
        self.node = node
        self.mode = mode
        self.stamped = stamped
        self.phase = ''
        self.seen = {'gate': [], 'setpoints': [], 'offboard': [], 'commands': [], 'twists': [],
                     'sent': [], 'actuations': []}
        self.actuation: tuple[int, int, str] | None = None
        self.next_actuation = 0.0
        self.cycle = 0
        self.outputs_sent = 0
        self.invalid_outputs = False
        self.readers: dict[str, int] = {}
        if actuations:
            self.actuation_pub = node.create_publisher(ActionEmission, 'actuations', GHOST_QOS)
            self.readers[self._name('actuations')] = 1
        if not outputs:
            return
        self._sub(GateEmission, 'ghost/gate', 'gate', _emission, GHOST_QOS)
        self.readers[self._name('ghost/gate')] = 1
        if mode == 'px4':
            from px4_msgs.msg import (
                OffboardControlMode,
                TrajectorySetpoint,
                VehicleCommand,
                VehicleLocalPosition,
            )
            self.setpoint_type = TrajectorySetpoint
            self.local_type = VehicleLocalPosition
            self.output_pub = node.create_publisher(
                TrajectorySetpoint, 'ghost/mission/trajectory_setpoint', COMMAND_QOS)
            self.local_pub = node.create_publisher(
                VehicleLocalPosition, 'fmu/out/vehicle_local_position', PX4_QOS)
            self._sub(TrajectorySetpoint, 'fmu/in/trajectory_setpoint', 'setpoints', lambda m: {
                'timestamp': m.timestamp, 'position': _vec(m.position),
                'velocity': _vec(m.velocity), 'yaw': float(m.yaw)})
            self._sub(OffboardControlMode, 'fmu/in/offboard_control_mode', 'offboard',
                      lambda m: {'timestamp': m.timestamp, 'position': m.position,
                                 'velocity': m.velocity})
            self._sub(VehicleCommand, 'fmu/in/vehicle_command', 'commands', lambda m: {
                'timestamp': m.timestamp, 'command': m.command,
                'target_system': m.target_system, 'target_component': m.target_component,
                'source_system': m.source_system, 'source_component': m.source_component,
                'from_external': m.from_external})
            topics = ('ghost/mission/trajectory_setpoint', 'fmu/out/vehicle_local_position',
                      'fmu/in/trajectory_setpoint', 'fmu/in/offboard_control_mode',
                      'fmu/in/vehicle_command')
        else:
            kind = TwistStamped if stamped else Twist
            self.output_pub = node.create_publisher(kind, 'cmd_vel_in', COMMAND_QOS)
            self._sub(kind, 'cmd_vel', 'twists', lambda m: {
                'frame_id': m.header.frame_id, 'stamp_ns': _ns(m.header.stamp),
                **_twist(m.twist)} if stamped else _twist(m))
            topics = ('cmd_vel_in', 'cmd_vel')
        self.readers.update({self._name(t): 1 for t in topics})

    def _name(self, topic: str) -> str:
        return self.node.resolve_topic_name(topic)

    def _sub(self, kind, topic, key, convert, qos=COMMAND_QOS) -> None:
        def on_message(msg) -> None:
            self.seen[key].append({**convert(msg), 'phase': self.phase})
        self.node.create_subscription(kind, topic, on_message, qos)

    # --- what the feed sends ---

    def actuate(self, now: float) -> None:
        if self.actuation is None or now < self.next_actuation:
            return
        decision, command, rationale = self.actuation
        self.cycle += 1
        msg = ActionEmission()
        msg.header.stamp.sec, msg.header.stamp.nanosec = self.cycle, 0
        msg.decision.kind, msg.command.kind = decision, command
        msg.decision.decision_stamp = msg.header.stamp
        msg.rationale_sha256 = rationale
        msg.contract_id = 'gate_feed_test'
        msg.schema_version = 1
        self.actuation_pub.publish(msg)
        self.seen['actuations'].append({'stamp_ns': self.cycle * 1_000_000_000,
                                        'rationale_sha256': rationale, 'phase': self.phase})
        self.next_actuation = now + CYCLE_S

    def send_output(self, after_match: bool) -> None:
        k = self.outputs_sent
        self.outputs_sent += 1
        invalid = {}
        if self.mode == 'px4':
            msg = self.setpoint_type()
            msg.timestamp = 123456 + k if k % 2 else 0
            msg.position = [1000.0 + k, 0.0, -10.0]
            msg.velocity = [float('nan')] * 3
            msg.yaw = 0.5
            if self.invalid_outputs:
                vector, index = (msg.position, 1) if k % 2 == 0 else (msg.velocity, 2)
                vector[index] = float('inf')
                invalid = {'invalid': 'position[1]' if k % 2 == 0 else 'velocity[2]'}
        else:
            twist = Twist()
            twist.linear.x, twist.angular.z = 1000.0 + k, 0.5
            if self.invalid_outputs:
                if k % 2 == 0:
                    twist.linear.y = float('nan')
                else:
                    twist.angular.x = float('inf')
                invalid = {'invalid': 'linear.y' if k % 2 == 0 else 'angular.x'}
            if self.stamped:
                msg = TwistStamped(twist=twist)
                msg.header.frame_id = 'base_link'
                msg.header.stamp.sec = k
            else:
                msg = twist
        self.output_pub.publish(msg)
        self.seen['sent'].append({'k': k, 'phase': self.phase, 'after_match': after_match,
                                  **invalid})

    def spin_for(self, seconds: float) -> None:
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            self.actuate(time.monotonic())
            rclpy.spin_once(self.node, timeout_sec=0.01)

    def settle(self) -> None:
        """Listen until the output of every gate record heard has arrived too (or SETTLE_S).

        The gate publishes a record before the output it describes, on another topic: a feed
        that stopped listening between the two would hold a record without its output.
        """
        outputs = ('setpoints', 'commands') if self.mode == 'px4' else ('twists',)
        until = time.monotonic() + SETTLE_S
        while (len(self.seen['gate']) != sum(len(self.seen[key]) for key in outputs)
               and time.monotonic() < until):
            self.spin_for(0.01)

    # --- phases ---

    @staticmethod
    def matches(emission: dict, until: dict, name: str) -> bool:
        if emission['phase'] != name:
            return False
        return all(emission['rationale_sha256'] == sha(wanted) if field == 'cites'
                   else emission[field] == wanted for field, wanted in until.items())

    def play(self, phase: dict) -> None:
        name = phase['name']
        self.phase = name
        if 'local_position' in phase:
            msg = self.local_type()
            for field, value in phase['local_position'].items():
                setattr(msg, field, value)
            self.local_pub.publish(msg)
        self.invalid_outputs = bool(phase.get('invalid_outputs'))
        if phase.get('stop_actuations'):
            self.actuation = None
        if 'actuation' in phase:
            decision, command = phase['actuation']
            self.actuation = (decision, command, phase.get('actuation_sha', sha(name)))
            self.next_actuation = 0.0
        until, count, outputs = phase.get('until', {}), phase.get('count', 1), phase.get(
            'outputs', 0)
        deadline = time.monotonic() + PHASE_DEADLINE_S
        sent_after_match, next_output = 0, 0.0
        while True:
            matched = sum(1 for e in self.seen['gate'] if self.matches(e, until, name))
            if matched >= count and sent_after_match >= outputs:
                break
            now = time.monotonic()
            if now > deadline:
                raise SystemExit(f'phase {name}: {matched}/{count} emissions matching {until}, '
                                 f'{sent_after_match}/{outputs} outputs after the first, in '
                                 f'{PHASE_DEADLINE_S} s')
            if outputs and now >= next_output:
                self.send_output(after_match=matched > 0)
                sent_after_match += matched > 0
                next_output = now + OUTPUT_PERIOD_S
            self.spin_for(0.01)
        self.spin_for(TAIL_S)
        if 'announce' in phase:
            print(phase['announce'], flush=True)


def wait_ready(node, readers: dict[str, int]) -> None:
    readiness = GraphReadiness(node, readers, GraphStatusReporter(node))
    deadline = time.monotonic() + 30.0
    while missing := readiness.missing():
        if time.monotonic() > deadline:
            raise SystemExit(f'gate never matched: {missing}')
        rclpy.spin_once(node, timeout_sec=0.05)
    readiness.close()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument('phases', nargs='?')
    parser.add_argument('--namespace', default='')
    parser.add_argument('--mode', default='px4', choices=('px4', 'twist'))
    parser.add_argument('--stamped', action='store_true')
    parser.add_argument('--actuate-only', nargs=2, type=int, metavar=('DECISION', 'COMMAND'))
    parser.add_argument('--no-actuations', action='store_true')
    args = parser.parse_args()
    rclpy.init()
    node = rclpy.create_node('gate_feed', namespace=args.namespace or '/')
    feed = Feed(node, args.mode, args.stamped, actuations=not args.no_actuations,
                outputs=args.actuate_only is None)
    wait_ready(node, feed.readers)
    print('ready', flush=True)
    try:
        if args.actuate_only is not None:
            decision, command = args.actuate_only
            feed.actuation = (decision, command, sha('actuate_only'))
            while True:
                feed.spin_for(1.0)
        for phase in json.loads(Path(args.phases).read_text()):
            feed.play(phase)
        feed.settle()
        print(json.dumps(feed.seen), flush=True)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    sys.exit(main())
