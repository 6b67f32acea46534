"""Self-assessor node: judges each belief's covariance (/state/nav -> /self_assessment)."""

from typing import Any

from nav_msgs.msg import Odometry

from ghost_core.assessment import SelfAssessor, ThresholdsConfig
from ghost_core.levels import SelfAssessmentLevel
from ghost_core.ros_inputs import time_ns
from ghost_interfaces.msg import BeliefSelfAssessment
from ghost_nodes.agent_config import thresholds_config
from ghost_nodes.frames import belief_sample
from ghost_nodes.node_base import below, GhostNode, non_negative, one_of, ParamSpec, positive, run
from ghost_nodes.qos import GHOST_QOS, input_qos, INPUT_QOS_CHOICES
from ghost_nodes.stamps import StampGuard

__all__ = ['SelfAssessorNode', 'main']

_BLOCKS = (('position', 'm', 0.5, 2.0), ('velocity', 'm/s', 0.5, 2.0),
           ('orientation', 'rad', 0.1, 0.35))

_FINE = frozenset({'within_known_threshold', 'within_uncertain_threshold',
                   'held_by_hysteresis'})


PARAMS = (
    *(spec for block, unit, known, uncertain in _BLOCKS for spec in (
        ParamSpec(f'{block}_known_max_std', known,
                  f'Largest 1-sigma {block} std ({unit}) still judged KNOWN.', (positive,)),
        ParamSpec(f'{block}_uncertain_max_std', uncertain,
                  f'Largest 1-sigma {block} std ({unit}) still judged UNCERTAIN '
                  '(beyond it: UNKNOWN).', (positive,)))),
    ParamSpec('no_covariance_level', 'unknown', "Level of a block that declares no uncertainty "
              "(all-zero covariance block, or ROS's -1 sentinel first): 'unknown' or "
              "'uncertain' (never KNOWN).", (one_of(('unknown', 'uncertain')),)),
    ParamSpec('recovery_margin', 0.2, 'Hysteresis: a block returns to a better level only when '
              'its std is <= (1 - margin) x the threshold it must clear.',
              (non_negative, below(1))),
    ParamSpec('recovery_dwell_s', 2.0, 'Hysteresis: ... for this long (s, belief stamps) '
              'without interruption.', (non_negative,)),
    ParamSpec('min_level_interval_s', 5.0, 'Hysteresis: ... and no sooner than this (s) after '
              "the block's last level change. Degradations are always immediate.",
              (non_negative,)),
    ParamSpec('input_qos', 'best_effort', 'Reliability of the state/nav subscription: '
              "'best_effort' matches best-effort and reliable publishers alike, "
              "'reliable' only reliable ones.", (one_of(INPUT_QOS_CHOICES),),
              read_only=True),
)


class SelfAssessorNode(GhostNode):
    """Publishes one BeliefSelfAssessment per belief, with the thresholds' content address."""

    def __init__(self, **options: Any) -> None:
        super().__init__('self_assessor', PARAMS, **options)
        self.on_parameters_changed()
        self._stamps = StampGuard(self.get_logger(), 'belief')
        self._pub = self.create_graph_publisher(BeliefSelfAssessment, 'self_assessment',
                                                GHOST_QOS)
        self.create_graph_subscription(Odometry, 'state/nav', self._on_belief,
                                       input_qos(self.param('input_qos')))

    def on_parameters_changed(self) -> None:
        """Rebuild the core configuration (and so restart the hysteresis) from the parameters."""
        self._assessor = SelfAssessor(self._build({}))

    def _build(self, updates: dict[str, object]) -> ThresholdsConfig:
        return thresholds_config(lambda name: updates.get(name, self.param(name)))

    def validate_together(self, updates: dict[str, object]) -> str | None:
        """Refuse thresholds where uncertain_max_std < known_max_std."""
        self._build(updates)  # raises ConfigError (a ValueError) naming the bad threshold
        return None

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
