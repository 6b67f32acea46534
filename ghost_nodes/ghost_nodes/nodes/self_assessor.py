"""Self-assessor node: judges beliefs, confirmed by fixes (state/nav -> self_assessment)."""

from typing import Any

from geometry_msgs.msg import PoseWithCovarianceStamped
from nav_msgs.msg import Odometry

from ghost_core.assessment import SelfAssessor, ThresholdsConfig
from ghost_core.levels import SelfAssessmentLevel
from ghost_core.profiles import ACCURACY_PROFILES, DEFAULT_PROFILE
from ghost_core.ros_inputs import belief_sample, time_ns
from ghost_interfaces.msg import BeliefSelfAssessment
from ghost_nodes.agent_config import thresholds_config
from ghost_nodes.node_base import at_least, below, GhostNode, non_negative, one_of, ParamSpec, run
from ghost_nodes.qos import GHOST_QOS, input_qos, INPUT_QOS_CHOICES
from ghost_nodes.stamps import StampGuard

__all__ = ['SelfAssessorNode', 'main']

_BLOCKS = (('position', 'm'), ('velocity', 'm/s'), ('orientation', 'rad'))

_FINE = frozenset({'within_known_threshold', 'within_uncertain_threshold',
                   'held_by_hysteresis'})


PARAMS = (
    ParamSpec('accuracy_profile', DEFAULT_PROFILE, 'The accuracy the mission needs, which sets '
              "every threshold and the unconfirmed horizon below: 'gnss' (standalone GNSS, "
              "metre-level), 'rtk' (RTK-fixed, decimetre), 'indoor' (mocap/vision). "
              'docs/parameters.md lists their values.', (one_of(tuple(ACCURACY_PROFILES)),)),
    *(spec for block, unit in _BLOCKS for spec in (
        ParamSpec(f'{block}_known_max_std', 0.0,
                  f'Largest 1-sigma {block} std ({unit}) still judged KNOWN; 0 = the '
                  "accuracy profile's.", (non_negative,)),
        ParamSpec(f'{block}_uncertain_max_std', 0.0,
                  f'Largest 1-sigma {block} std ({unit}) still judged UNCERTAIN '
                  "(beyond it: UNKNOWN); 0 = the accuracy profile's.", (non_negative,)))),
    ParamSpec('unconfirmed_horizon_s', -1.0, 'A belief no independent fix (observations) '
              'confirmed for longer than this (s) is at best UNCERTAIN; -1 = the accuracy '
              "profile's, 0 = never (a stack without independent fixes).", (at_least(-1),)),
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
    ParamSpec('recovery_bound_s', 5.0, 'Hysteresis bound: a block whose instantaneous level '
              'has been better for this long (s) without interruption is published at that '
              'level, margin and interval notwithstanding.', (non_negative,)),
    ParamSpec('input_qos', 'best_effort', 'Reliability of the state/nav and observations '
              "subscriptions: 'best_effort' matches best-effort and reliable publishers alike, "
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
        qos = input_qos(self.param('input_qos'))
        self.create_graph_subscription(Odometry, 'state/nav', self._on_belief, qos)
        self.create_graph_subscription(PoseWithCovarianceStamped, 'observations',
                                       self._on_observation, qos)

    def on_parameters_changed(self) -> None:
        """Rebuild the core configuration (and so restart the hysteresis) from the parameters."""
        self._assessor = SelfAssessor(self._build({}))

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
