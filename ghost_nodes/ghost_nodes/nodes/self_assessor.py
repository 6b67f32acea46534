"""Self-assessor node: judges beliefs, confirmed by fixes (state/nav -> self_assessment)."""

from typing import Any

from geometry_msgs.msg import PoseWithCovarianceStamped
from nav_msgs.msg import Odometry

from ghost_core.assessment import ASSESSOR_ID, SelfAssessor, ThresholdsConfig
from ghost_core.levels import SelfAssessmentLevel
from ghost_core.ros_inputs import belief_sample, time_ns
from ghost_interfaces.msg import BeliefSelfAssessment
from ghost_nodes.agent_config import thresholds_config
from ghost_nodes.node_base import GhostNode, run
from ghost_nodes.node_parameters import PARAMETERS
from ghost_nodes.qos import GHOST_QOS, input_qos
from ghost_nodes.stamps import StampGuard

__all__ = ['SelfAssessorNode', 'main']

_BLOCKS = (('position', 'm'), ('velocity', 'm/s'), ('orientation', 'rad'))

_FINE = frozenset({'within_known_threshold', 'within_uncertain_threshold',
                   'held_by_hysteresis'})



class SelfAssessorNode(GhostNode):
    """Publishes one BeliefSelfAssessment per belief, with the thresholds' content address."""

    def __init__(self, **options: Any) -> None:
        super().__init__('self_assessor', PARAMETERS['self_assessor'], **options)
        self.on_parameters_changed()
        self._stamps = StampGuard(self.get_logger(), 'belief')
        self._pub = self.create_graph_publisher(BeliefSelfAssessment, 'self_assessment',
                                                GHOST_QOS)
        qos = input_qos(self.param('input_qos'))
        self.create_graph_subscription(Odometry, 'state/nav', self._on_belief, qos)
        self.create_graph_subscription(PoseWithCovarianceStamped, 'observations',
                                       self._on_observation, qos)

    def on_parameters_changed(self) -> None:
        """Rebuild the core configuration (and so restart the hysteresis) from the parameters.

        The fixes received stay received: the new assessor keeps the confirmation (a fix is
        an input, not a parameter; SPEC 5 v1.3 names it on every assessment).
        """
        previous = getattr(self, '_assessor', None)
        self._assessor = SelfAssessor(self._build({}))
        if previous is not None and previous.confirmed_ns is not None:
            self._assessor.observe(previous.confirmed_ns, (0.0, 0.0, 0.0))

    def configuration_section(self) -> dict[str, object]:
        """The thresholds the assessor now judges with (their content address is published)."""
        return {'thresholds': self._assessor.thresholds.to_dict()}

    def start_configuration(self) -> dict[str, object]:
        """The thresholds it starts with, and the assessor it runs."""
        return {**self.configuration_section(), 'policies': {'assessor_id': ASSESSOR_ID}}

    def _build(self, updates: dict[str, object]) -> ThresholdsConfig:
        return thresholds_config(lambda name: updates.get(name, self.param(name)))

    def validate_together(self, updates: dict[str, object]) -> str | None:
        """Refuse thresholds where uncertain_max_std < known_max_std."""
        self._build(updates)  # raises ConfigError (a ValueError) naming the bad threshold
        return None

    def _on_observation(self, msg: PoseWithCovarianceStamped) -> None:
        p = msg.pose.pose.position
        self._assessor.observe(time_ns(msg.header.stamp), (p.x, p.y, p.z))

    def _on_belief(self, msg: Odometry) -> None:
        if not self._stamps.accept(time_ns(msg.header.stamp)):
            return
        assessment = self._assessor.assess(self.derive(msg, belief_sample))
        if assessment.overall_level == SelfAssessmentLevel.UNKNOWN:
            reasons = sorted({b.reason for b in (assessment.position, assessment.velocity,
                                                 assessment.orientation)} - _FINE)
            self.get_logger().warning(f'belief judged UNKNOWN: {", ".join(reasons)}',
                                      throttle_duration_sec=5.0)
        self.publish_contract(self._pub, assessment)


def main(args: list[str] | None = None) -> None:
    """Entry point of the ``self_assessor`` executable."""
    run(SelfAssessorNode, args)
