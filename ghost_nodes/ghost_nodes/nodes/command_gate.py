"""Command gate node: what the mission sends reaches the vehicle only while Ghost says PROCEED.

One cohesive job (the gate node, both modes), so one module past 400 lines.

A thin adapter over ``ghost_core.gate.gate_verdict``. It keeps the latest actuation
(``actuations``), asks the rule for a verdict at every output (``_verdict``), and sends what
the verdict says: the mission's output unchanged (PASSED), a hold (HELD), or, once, a
px4_msgs/VehicleCommand (LAND / RETURN_TO_LAUNCH; the vehicle is held meanwhile). Every output
is also published on ``ghost/gate`` as a GateEmission, the record GATE-v1 is judged on
(docs/properties.md). See docs/integration.md, "Command gate".

Modes (parameter ``mode``):

- ``px4``: ``ghost/mission/trajectory_setpoint`` -> ``fmu/in/trajectory_setpoint``; the timer
  keeps ``fmu/in/offboard_control_mode`` alive (PX4 leaves offboard below 2 Hz) and repeats
  the hold while the verdict is not PASSED, so the vehicle holds when the mission stops
  publishing or Ghost is gone; LAND / RETURN_TO_LAUNCH go to ``fmu/in/vehicle_command``, once
  per transition into that command.
- ``twist``: ``cmd_vel_in`` -> ``cmd_vel`` (geometry_msgs/Twist, or TwistStamped with
  ``twist_stamped``), for MAVROS/ArduPilot and ground robots. The timer repeats a zero twist
  while the verdict is not PASSED. A LAND or RETURN_TO_LAUNCH actuation is a zero twist here
  (recorded as held, reason land / return_to_launch): there is no autopilot to command.

Fail closed: no actuation yet, or the latest older than ``timeout_s``, is a hold
(``gate_verdict``); the timer makes it happen without mission traffic. When the actuations'
last publisher is gone (Ghost's processes stopped: DDS unmatches their writer), the gate holds
at once, before the timeout, with reason ``actuation_source_gone``: rclpy's subscription
``matched`` event (Jazzy) triggers the check, and the timer repeats it
(``get_publisher_count``), which is the only check on an rmw without matched events. A new
actuation ends it. Such a hold is more conservative than the rule (which would still pass
until the timeout): GATE-v1 forbids passing, never holding. A process killed outright is
unmatched only when its DDS lease expires (Fast DDS: 20 s): there the timeout holds first.

The record: every output's GateEmission is built as a ``ghost_core.contracts.GateEmission``
(validated) and published before the output is sent, so no output leaves without its record:
a stop between the two (SIGINT lands inside a callback) leaves a record of an output that was
not sent, which GATE-v1 judges as if it had been, the conservative side.

The hold (PX4): the vehicle's position (fmu/out/vehicle_local_position, NED) when the hold
began, with zero velocity and its heading then; an axis (x/y, z, heading) that was not valid
is NaN (not controlled: PX4 holds it by the zero velocity) until a valid value arrives during
the hold. The point is latched, not followed: a setpoint that moves with the vehicle would not
hold it against wind. It is released by the next PASSED output.

Clocks: the verdict's time, the actuation's receive time and every GateEmission stamp are the
node's clock (ROS time) in nanoseconds. px4_msgs ``timestamp`` fields the gate fills are the
same clock in microseconds, as px4_ros_com's offboard examples fill them; PX4's uXRCE-DDS
client maps them onto its boot-time clock with its time synchronisation. A mission setpoint's
non-zero ``timestamp`` is kept.

px4_msgs is imported when a px4-mode node starts, not with this module, so the parameter page
(``ghost.param_docs``) renders and twist mode runs without a PX4 workspace.
"""

from dataclasses import dataclass
import math
from typing import Any

from geometry_msgs.msg import Twist, TwistStamped
from rclpy.event_handler import SubscriptionEventCallbacks, UnsupportedEventTypeError

from ghost_core.contracts import GateEmission as GateEmissionContract
from ghost_core.gate import gate_verdict, GateAction, GateReason, GateVerdict, LatestActuation
from ghost_core.graph import GATE_TOPIC, relative_topic
from ghost_core.hashing import is_sha256_hex
from ghost_core.ros_inputs import time_ns
from ghost_core.run_configuration import GATE_SECTION
from ghost_core.wire import to_msg_dict
from ghost_interfaces.msg import ActionEmission, GateEmission
from ghost_nodes.convert import from_msg_dict
from ghost_nodes.node_base import (
    GhostNode,
    run,
)
from ghost_nodes.node_parameters import PARAMETERS
from ghost_nodes.qos import COMMAND_QOS, GHOST_QOS, PX4_QOS

__all__ = ['CommandGateNode', 'main']

_NAN = float('nan')
_ZERO3 = (0.0, 0.0, 0.0)


@dataclass(frozen=True, slots=True)
class _Actuation:
    """The latest actuation: what the rule needs, and what the record cites."""

    latest: LatestActuation
    stamp_ns: int
    rationale_sha256: str


#: What a record cites before the first actuation (has_actuation False, every field zero).
_NO_ACTUATION = _Actuation(LatestActuation(0, 0, 0), 0, '')


def _time(msg: Any, ns: int) -> None:
    msg.sec, msg.nanosec = divmod(ns, 1_000_000_000)


def _floats(values: Any) -> tuple[float, float, float]:
    x, y, z = (float(v) for v in values)
    return x, y, z


def _xyz(vector: Any) -> tuple[float, float, float]:
    return float(vector.x), float(vector.y), float(vector.z)


class CommandGateNode(GhostNode):
    """Passes the mission's setpoints (or cmd_vel) while PROCEED; holds otherwise."""

    def __init__(self, **options: Any) -> None:
        super().__init__('command_gate', PARAMETERS['command_gate'], **options)
        self._mode: str = self.param('mode')
        self.on_parameters_changed()
        self._actuation: _Actuation | None = None
        self._source_gone = False
        self._ignored_actuations = 0  # invalid actuations ignored (logged: 1st, every 100th)
        self._invalid_outputs = 0     # invalid mission outputs held (logged: the same)
        self._commanded = 0        # the VehicleCommand sent for the current command, or 0
        self._passing = False      # the last verdict was PASSED
        self._reason: GateReason | None = None  # the last verdict's (logged when it changes)
        # Latest valid local position (x, y, z NED, heading), NaN where not valid; the hold.
        self._here = (_NAN, _NAN, _NAN, _NAN)
        self._hold_at = [_NAN, _NAN, _NAN, _NAN]
        self._mission_position_mode = False  # the last passed setpoint set a position
        self._frame_id = ''                  # twist mode: the last input's frame
        self._record_pub = self.create_publisher(GateEmission, relative_topic(GATE_TOPIC),
                                                 GHOST_QOS)
        events = SubscriptionEventCallbacks(matched=self._on_matched)
        try:
            self._actuations = self.create_subscription(
                ActionEmission, 'actuations', self._on_actuation, GHOST_QOS,
                event_callbacks=events)
            source_check = 'matched events and the timer'
        except UnsupportedEventTypeError:
            self._actuations = self.create_subscription(
                ActionEmission, 'actuations', self._on_actuation, GHOST_QOS)
            source_check = 'the timer (this rmw has no matched events)'
        if self._mode == 'px4':
            self._init_px4()
        else:
            self._init_twist()
        self.create_timer(1.0 / self.param('rate_hz'), self._on_timer)
        self.get_logger().info(
            f'{self._mode} mode: {self._in_topic} -> {self._out_topic}; hold after '
            f'{self._timeout_ns / 1e9:g} s without an actuation, or when its publisher is gone '
            f'(checked by {source_check})')

    def _init_px4(self) -> None:
        from px4_msgs.msg import (
            OffboardControlMode,
            TrajectorySetpoint,
            VehicleCommand,
            VehicleLocalPosition,
        )

        self._setpoint_type = TrajectorySetpoint
        self._offboard_type = OffboardControlMode
        self._command_type = VehicleCommand
        self._in_topic = self.resolve_topic_name('ghost/mission/trajectory_setpoint')
        self._out_topic = self.resolve_topic_name('fmu/in/trajectory_setpoint')
        self._command_topic = self.resolve_topic_name('fmu/in/vehicle_command')
        self._out_pub = self.create_publisher(TrajectorySetpoint, 'fmu/in/trajectory_setpoint',
                                              COMMAND_QOS)
        self._offboard_pub = self.create_publisher(
            OffboardControlMode, 'fmu/in/offboard_control_mode', COMMAND_QOS)
        self._command_pub = self.create_publisher(VehicleCommand, 'fmu/in/vehicle_command',
                                                  COMMAND_QOS)
        self.create_subscription(TrajectorySetpoint, 'ghost/mission/trajectory_setpoint',
                                 self._on_setpoint, COMMAND_QOS)
        self.create_subscription(VehicleLocalPosition, 'fmu/out/vehicle_local_position',
                                 self._on_local_position, PX4_QOS)

    def _init_twist(self) -> None:
        self._twist_type: type[Any] = TwistStamped if self.param('twist_stamped') else Twist
        self._in_topic = self.resolve_topic_name('cmd_vel_in')
        self._out_topic = self.resolve_topic_name('cmd_vel')
        self._out_pub = self.create_publisher(self._twist_type, 'cmd_vel', COMMAND_QOS)
        self.create_subscription(self._twist_type, 'cmd_vel_in', self._on_twist, COMMAND_QOS)

    def on_parameters_changed(self) -> None:
        """Take a new timeout_s."""
        self._timeout_ns = int(round(self.param('timeout_s') * 1e9))

    def configuration_section(self) -> dict[str, object]:
        """The timeout GATE-v1 judges this gate's freshness with (recorded, SPEC 5 v1.3)."""
        return {GATE_SECTION: {'timeout_s': self._timeout_ns / 1e9}}

    def start_configuration(self) -> dict[str, object]:
        """The timeout it starts with."""
        return self.configuration_section()

    # --- the verdict ---

    def _now_ns(self) -> int:
        return int(self.get_clock().now().nanoseconds)

    def _verdict(self, now_ns: int) -> GateVerdict:
        """The verdict at ``now_ns``: the rule, or a hold when the actuations' source is gone.

        The one place the gate decides (the GATE-v1 tests' leaky gate overrides it).
        """
        if self._actuation is not None and self._source_gone:
            return GateVerdict(GateAction.HELD, GateReason.ACTUATION_SOURCE_GONE)
        latest = self._actuation.latest if self._actuation is not None else None
        return gate_verdict(latest, now_ns, self._timeout_ns)

    def _decide(self, now_ns: int) -> GateVerdict:
        """The verdict, with what follows from it: the vehicle command."""
        verdict = self._verdict(now_ns)
        wanted = verdict.vehicle_command if verdict.action is GateAction.VEHICLE_COMMAND else 0
        if wanted and wanted != self._commanded and self._mode == 'px4':
            self._send_vehicle_command(verdict, now_ns)
        self._commanded = wanted
        self._passing = verdict.action is GateAction.PASSED
        if verdict.reason != self._reason:
            self._reason = verdict.reason
            self.get_logger().info(f'{"passing" if self._passing else "holding"}: '
                                   f'{verdict.reason}')
        return verdict

    # --- inputs ---

    def _on_actuation(self, msg: Any) -> None:
        now = self._now_ns()
        if not is_sha256_hex(str(msg.rationale_sha256)):
            # Not one of Ghost's actuations (a foreign publisher?): it cannot justify anything,
            # and the gate keeps acting on the last valid one (which goes stale in time).
            self._ignored_actuations += 1
            if self._ignored_actuations == 1 or self._ignored_actuations % 100 == 0:
                self.get_logger().warning(
                    f'ignored actuation #{self._ignored_actuations}: rationale_sha256 '
                    f'{str(msg.rationale_sha256)[:70]!r} is not a SHA-256')
            return
        self._actuation = _Actuation(
            LatestActuation(int(msg.decision.kind), int(msg.command.kind), now),
            time_ns(msg.header.stamp), str(msg.rationale_sha256))
        self._source_gone = False
        self._decide_and_hold_if_stopped(now)

    def _on_matched(self, _status: Any) -> None:
        if self._source_lost():
            self._decide_and_hold_if_stopped(self._now_ns())

    def _source_lost(self) -> bool:
        """Mark the actuations' source gone if their last publisher is; True when it just went."""
        if (self._actuation is None or self._source_gone
                or self._actuations.get_publisher_count() > 0):
            return False
        self._source_gone = True
        self.get_logger().warning('the actuations have no publisher any more (Ghost is gone?): '
                                  'holding')
        return True

    def _decide_and_hold_if_stopped(self, now_ns: int) -> None:
        # Leaving PASSED holds at once rather than at the next tick or mission output.
        was_passing = self._passing
        verdict = self._decide(now_ns)
        if was_passing and verdict.action is not GateAction.PASSED:
            self._publish_hold(verdict, now_ns)

    def _on_local_position(self, msg: Any) -> None:
        xy = bool(msg.xy_valid) and math.isfinite(msg.x) and math.isfinite(msg.y)
        z = bool(msg.z_valid) and math.isfinite(msg.z)
        heading = bool(msg.heading_good_for_control) and math.isfinite(msg.heading)
        self._here = (float(msg.x) if xy else _NAN, float(msg.y) if xy else _NAN,
                      float(msg.z) if z else _NAN, float(msg.heading) if heading else _NAN)

    def _on_setpoint(self, msg: Any) -> None:
        now = self._now_ns()
        verdict = self._decide(now)
        if verdict.action is not GateAction.PASSED:
            self._publish_hold(verdict, now)
            return
        if msg.timestamp == 0:
            msg.timestamp = now // 1000
        position = _floats(msg.position)
        try:
            record = self._record(now, verdict, self._out_topic, 'ned', position=position,
                                  velocity=_floats(msg.velocity), yaw=float(msg.yaw))
        except ValueError as err:
            self._hold_invalid_output(err, now)
            return
        self._mission_position_mode = any(map(math.isfinite, position))
        # Only a setpoint sent releases the hold: one held as invalid keeps the point latched.
        self._hold_at = [_NAN, _NAN, _NAN, _NAN]
        self._record_pub.publish(record)
        self._out_pub.publish(msg)

    def _on_twist(self, msg: Any) -> None:
        now = self._now_ns()
        if self._twist_type is TwistStamped:
            self._frame_id = str(msg.header.frame_id)
        verdict = self._decide(now)
        if verdict.action is not GateAction.PASSED:
            zero = self._twist_type()
            if self._twist_type is TwistStamped:
                zero.header = msg.header
            self._send_zero_twist(zero, verdict, now)
            return
        try:
            record = self._record(now, verdict, self._out_topic, self._frame_id,
                                  twist=msg.twist if self._twist_type is TwistStamped else msg)
        except ValueError as err:
            self._hold_invalid_output(err, now)
            return
        self._record_pub.publish(record)
        self._out_pub.publish(msg)

    def _on_timer(self) -> None:
        self._source_lost()
        now = self._now_ns()
        verdict = self._decide(now)
        if verdict.action is not GateAction.PASSED:
            self._publish_hold(verdict, now)
        elif self._mode == 'px4':
            self._publish_offboard_mode(now, self._mission_position_mode)

    def _hold_invalid_output(self, err: ValueError, now_ns: int) -> None:
        """Hold instead of a mission output that cannot be recorded truthfully (e.g. inf)."""
        self._invalid_outputs += 1
        if self._invalid_outputs == 1 or self._invalid_outputs % 100 == 0:
            self.get_logger().warning(f'held mission output #{self._invalid_outputs}: {err}')
        self._publish_hold(GateVerdict(GateAction.HELD, GateReason.INVALID_MISSION_OUTPUT),
                           now_ns)

    # --- outputs ---

    def _publish_hold(self, verdict: GateVerdict, now_ns: int) -> None:
        if self._mode != 'px4':
            zero = self._twist_type()
            if self._twist_type is TwistStamped:
                _time(zero.header.stamp, now_ns)
                zero.header.frame_id = self._frame_id
            self._send_zero_twist(zero, verdict, now_ns)
            return
        for axis in range(4):
            if math.isnan(self._hold_at[axis]):
                self._hold_at[axis] = self._here[axis]
        x, y, z, yaw = self._hold_at
        hold = self._setpoint_type()
        hold.timestamp = now_ns // 1000
        hold.position = [x, y, z]
        hold.velocity = [0.0, 0.0, 0.0]
        hold.yaw = yaw
        at_position = not (math.isnan(x) and math.isnan(y) and math.isnan(z))
        record = self._record(now_ns, self._as_held(verdict), self._out_topic, 'ned',
                              position=(x, y, z), velocity=_ZERO3, yaw=yaw)
        self._publish_offboard_mode(now_ns, at_position)
        self._record_pub.publish(record)
        self._out_pub.publish(hold)

    def _send_zero_twist(self, zero: Any, verdict: GateVerdict, now_ns: int) -> None:
        record = self._record(now_ns, self._as_held(verdict), self._out_topic, self._frame_id)
        self._record_pub.publish(record)
        self._out_pub.publish(zero)

    def _publish_offboard_mode(self, now_ns: int, position: bool) -> None:
        mode = self._offboard_type()
        mode.timestamp = now_ns // 1000
        mode.position = position
        mode.velocity = not position
        self._offboard_pub.publish(mode)

    def _send_vehicle_command(self, verdict: GateVerdict, now_ns: int) -> None:
        command = self._command_type()
        command.timestamp = now_ns // 1000
        command.command = verdict.vehicle_command
        command.target_system = self.param('target_system')
        command.target_component = self.param('target_component')
        command.source_system = self.param('source_system')
        command.source_component = self.param('source_component')
        command.from_external = True
        record = self._record(now_ns, verdict, self._command_topic, '',
                              vehicle_command=verdict.vehicle_command)
        self._command_pub.publish(command)
        self._record_pub.publish(record)
        self.get_logger().info(f'sent VehicleCommand {verdict.vehicle_command} '
                               f'({verdict.reason})')

    @staticmethod
    def _as_held(verdict: GateVerdict) -> GateVerdict:
        # A LAND / RTL verdict's setpoint output is a hold; the command went separately.
        return GateVerdict(GateAction.HELD, verdict.reason)

    def _record(self, now_ns: int, verdict: GateVerdict, topic: str, frame_id: str, *,
                position: tuple[float, float, float] = _ZERO3,
                velocity: tuple[float, float, float] = _ZERO3, yaw: float = 0.0,
                twist: Any = None, vehicle_command: int = 0) -> Any:
        """The GateEmission message of an output (the contract raises on an invalid one)."""
        cited = self._actuation or _NO_ACTUATION
        record = GateEmissionContract(
            stamp_ns=now_ns,
            frame_id=frame_id,
            action=verdict.action,
            reason=verdict.reason,
            mode=self._mode,
            output_topic=topic,
            timeout_s=self._timeout_ns / 1e9,
            has_actuation=self._actuation is not None,
            actuation_stamp_ns=cited.stamp_ns,
            rationale_sha256=cited.rationale_sha256,
            decision_kind=cited.latest.decision_kind,
            command_kind=cited.latest.command_kind,
            actuation_received_ns=cited.latest.received_ns,
            position=position,
            velocity=velocity,
            yaw=yaw,
            twist_linear=_ZERO3 if twist is None else _xyz(twist.linear),
            twist_angular=_ZERO3 if twist is None else _xyz(twist.angular),
            vehicle_command=vehicle_command,
        )
        return from_msg_dict(GateEmission, to_msg_dict(record))


def main(args: list[str] | None = None) -> None:
    """Entry point of the ``command_gate`` executable."""
    run(CommandGateNode, args)
