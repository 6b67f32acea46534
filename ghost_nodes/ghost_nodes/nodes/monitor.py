"""Monitor node: Ghost's health and the live BAUD-v1/ERUR-v1 verdicts on /diagnostics.

It reads every Ghost topic (and the two inputs), judges each cycle with the same functions
as the offline verifier (``ghost_core.properties`` through ``ghost_core.monitor``) and
publishes a ``diagnostic_msgs/DiagnosticArray`` on ``/diagnostics`` once a second, plus at
once when a property is first violated. What the statuses hold: ``ghost_nodes.diagnostics``
and docs/integration.md.
"""

import time
from typing import Any

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import PoseWithCovarianceStamped
from nav_msgs.msg import Odometry

from ghost_core.calibration import drift_condition
from ghost_core.graph import DIAGNOSTICS_TOPIC
from ghost_core.levels import ActuatorCommandKind, DecisionKind, SelfAssessmentLevel
from ghost_core.monitor import OnlineMonitor
from ghost_core.properties import ActuationView, CalibratedView, kind_name, Violation
from ghost_core.ros_inputs import time_ns
from ghost_interfaces.msg import (
    ActionEmission,
    BeliefSelfAssessment,
    CalibratedSelfAssessment,
    DecisionRationale,
    ForwardPrediction,
    PredictionOutcome,
)
from ghost_nodes.diagnostics import (
    default_hardware_id,
    GraphHealth,
    INPUT_TOPICS,
    property_status,
    Status,
)
from ghost_nodes.node_base import GhostNode, run
from ghost_nodes.node_parameters import PARAMETERS
from ghost_nodes.qos import topic_qos

__all__ = ['MonitorNode', 'main']

def _level(value: int) -> str:
    return kind_name(SelfAssessmentLevel, value)


def _decision(value: int) -> str:
    return kind_name(DecisionKind, value)


def _raw_facts(msg: BeliefSelfAssessment) -> tuple[str, tuple[tuple[str, str], ...]]:
    facts = [('raw_level', _level(msg.overall_level))]
    for axis in ('position', 'velocity', 'orientation'):
        block = getattr(msg, axis)
        facts.append((f'{axis}_level', _level(block.level)))
        facts.append((f'{axis}_reason', block.reason))
    return f'raw {_level(msg.overall_level)}', tuple(facts)


def _prediction_facts(msg: ForwardPrediction) -> tuple[str, tuple[tuple[str, str], ...]]:
    return f'model {msg.model_id}', (('model_id', msg.model_id),
                                     ('target_stamp_ns', str(time_ns(msg.target_stamp))))


def _outcome_facts(msg: PredictionOutcome) -> tuple[str, tuple[tuple[str, str], ...]]:
    summary = msg.status + (f', d={msg.position_normalised_distance:.2f}' if msg.observed
                            else '')
    return summary, (('outcome_status', msg.status),
                     ('observed', 'true' if msg.observed else 'false'),
                     ('position_mahalanobis', f'{msg.position_mahalanobis:.3f}'),
                     ('position_normalised_distance', f'{msg.position_normalised_distance:.3f}'),
                     ('position_axes_compared', str(msg.position_axes_compared)))


def _calibrated_facts(msg: CalibratedSelfAssessment) -> tuple[str, tuple[tuple[str, str], ...]]:
    history = msg.calibration_history
    drift = drift_condition(history.outcomes_considered, history.count_beyond_3_std,
                            history.count_beyond_5_std, msg.min_outcomes,
                            msg.downgrade_threshold)
    raw, adjusted = _level(msg.raw_assessment.overall_level), _level(msg.adjusted_overall_level)
    return (f'raw {raw}, adjusted {adjusted} ({msg.adjustment_reason})',
            (('raw_level', raw), ('adjusted_level', adjusted),
             ('adjustment_reason', msg.adjustment_reason),
             ('drift', 'true' if drift else 'false'),
             ('outcomes_considered', str(history.outcomes_considered)),
             ('count_beyond_3_std', str(history.count_beyond_3_std)),
             ('count_beyond_5_std', str(history.count_beyond_5_std)),
             ('min_outcomes', str(msg.min_outcomes)),
             ('downgrade_threshold', str(msg.downgrade_threshold)),
             ('max_history', str(history.window_size))))


def _decision_facts(msg: DecisionRationale) -> tuple[str, tuple[tuple[str, str], ...]]:
    decision = _decision(msg.decision.kind)
    return f'{decision} ({msg.decision.reason})', (
        ('decision', decision), ('decision_reason', msg.decision.reason),
        ('policy_id', msg.policy_id))


def _actuation_facts(msg: ActionEmission) -> tuple[str, tuple[tuple[str, str], ...]]:
    decision, command = _decision(msg.decision.kind), kind_name(ActuatorCommandKind,
                                                                msg.command.kind)
    return f'{decision} -> {command}', (('decision', decision), ('command', command),
                                        ('contract_id', msg.contract_id))


def calibrated_view(msg: CalibratedSelfAssessment) -> CalibratedView:
    """What the property judges read of a calibrated assessment."""
    history = msg.calibration_history
    return CalibratedView(
        stamp_ns=time_ns(msg.header.stamp),
        raw_overall_level=int(msg.raw_assessment.overall_level),
        adjusted_overall_level=int(msg.adjusted_overall_level),
        outcomes_considered=int(history.outcomes_considered),
        count_beyond_3_std=int(history.count_beyond_3_std),
        count_beyond_5_std=int(history.count_beyond_5_std),
        min_outcomes=int(msg.min_outcomes),
        downgrade_threshold=int(msg.downgrade_threshold),
    )


def actuation_view(msg: ActionEmission) -> ActuationView:
    """What the property judges read of an actuation."""
    return ActuationView(time_ns(msg.header.stamp), int(msg.decision.kind),
                         int(msg.command.kind))


def to_diagnostic_status(status: Status) -> DiagnosticStatus:
    """The ROS message of a status."""
    return DiagnosticStatus(level=bytes([int(status.level)]), name=status.name,
                            message=status.message, hardware_id=status.hardware_id,
                            values=[KeyValue(key=k, value=v) for k, v in status.values])


class MonitorNode(GhostNode):
    """Watches the Ghost graph; publishes its health and the property verdicts."""

    def __init__(self, **options: Any) -> None:
        super().__init__('monitor', PARAMETERS['monitor'], **options)
        stale_ns = round(self.param('stale_cycles') * self.param('period_s') * 1e9)
        self._health = GraphHealth(stale_ns)
        self._monitor = OnlineMonitor(stale_ns)
        namespace = self.get_namespace()
        self._namespace = namespace
        self._hardware_id = self.param('hardware_id') or default_hardware_id(namespace)
        self._pub = self.create_publisher(DiagnosticArray, DIAGNOSTICS_TOPIC,
                                          topic_qos(DIAGNOSTICS_TOPIC))
        for topic, msg_type in zip(INPUT_TOPICS, (Odometry, PoseWithCovarianceStamped),
                                   strict=True):
            self.create_graph_subscription(msg_type, topic, self._on_input(topic),
                                           topic_qos('/' + topic))
        for topic, msg_type, facts in (
                ('self_assessment', BeliefSelfAssessment, _raw_facts),
                ('predictions', ForwardPrediction, _prediction_facts),
                ('prediction_outcomes', PredictionOutcome, _outcome_facts),
                ('self_assessment/calibrated', CalibratedSelfAssessment, _calibrated_facts),
                ('decisions', DecisionRationale, _decision_facts),
                ('actuations', ActionEmission, _actuation_facts)):
            self.create_graph_subscription(msg_type, topic, self._on_output(topic, facts),
                                           topic_qos('/' + topic))
        self.create_timer(self.param('publish_period_s'), self._on_timer)

    def _on_input(self, topic: str) -> Any:
        def callback(msg: Any) -> None:
            self._health.on_message(topic, time.monotonic_ns(), time_ns(msg.header.stamp))
        return callback

    def _on_output(self, topic: str, facts: Any) -> Any:
        def callback(msg: Any) -> None:
            now = time.monotonic_ns()
            summary, values = facts(msg)
            self._health.on_message(topic, now, time_ns(msg.header.stamp), summary, values)
            found = []
            if topic == 'self_assessment/calibrated':
                found = self._monitor.on_calibrated(calibrated_view(msg), now)
            elif topic == 'actuations':
                found = self._monitor.on_actuation(actuation_view(msg), now)
            if self._judged(found):
                self._publish(now)  # a first violation is published at once
        return callback

    def _judged(self, found: list[tuple[str, Violation]]) -> bool:
        """Log new violations; True when one of them is a property's first."""
        first_time = False
        for version, violation in found:
            state = next(s for s in self._monitor.states() if s.version == version)
            if state.first_violation == violation:
                first_time = True
                self.get_logger().error(
                    f'{version} violated at cycle {violation.cycle_stamp_ns}: '
                    f'{violation.kind.value} ({violation.postcondition}); observed '
                    + ', '.join(f'{k}={v}' for k, v in violation.observed))
            else:
                self.get_logger().error(
                    f'{version} violated again at cycle {violation.cycle_stamp_ns}: '
                    f'{violation.kind.value} ({state.violations} violations)',
                    throttle_duration_sec=5.0)
        return first_time

    def _on_timer(self) -> None:
        now = time.monotonic_ns()
        self._judged(self._monitor.expire(now))
        self._publish(now)

    def statuses(self, now_ns: int) -> list[Status]:
        """Every status, nodes first, then one per property."""
        statuses = self._health.node_statuses(now_ns, self._namespace, self._hardware_id)
        notes = self._monitor.parameters.notes('the calibrator published')
        for state in self._monitor.states():
            statuses.append(property_status(state, self._monitor.parameters.used, notes,
                                            self._monitor.pending, self._namespace,
                                            self._hardware_id))
        return statuses

    def _publish(self, now_ns: int) -> None:
        msg = DiagnosticArray()
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.status = [to_diagnostic_status(s) for s in self.statuses(now_ns)]
        self._pub.publish(msg)


def main(args: list[str] | None = None) -> None:
    """Entry point of the ``monitor`` executable."""
    run(MonitorNode, args)
