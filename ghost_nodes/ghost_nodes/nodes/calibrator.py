"""Calibrator node: adjusts each raw assessment by the agent's own prediction errors."""

from typing import Any

from ghost_core.loop import calibrate
from ghost_core.sequencing import CalibrationJoiner, StampedOutcome
from ghost_core.wire import parse_belief_self_assessment, parse_prediction_outcome, to_msg_dict
from ghost_interfaces.msg import BeliefSelfAssessment, CalibratedSelfAssessment, PredictionOutcome
from ghost_nodes.agent_config import loop_config
from ghost_nodes.convert import from_msg_dict, stamp_ns
from ghost_nodes.convert import to_msg_dict as msg_to_dict
from ghost_nodes.node_base import at_least, GhostNode, ParamSpec, run
from ghost_nodes.qos import GHOST_QOS

__all__ = ['CalibratorNode', 'main']

PARAMS = (
    ParamSpec('min_outcomes', 4, 'M: observed outcomes needed before a downgrade is allowed.',
              (at_least(1),)),
    ParamSpec('downgrade_threshold', 2, 'K: outcomes beyond 3 sigma (beyond_3 + beyond_5) in '
              'the window that trigger a downgrade.', (at_least(1),)),
    ParamSpec('max_history', 32, 'W: the window, in observed outcomes.', (at_least(1),),
              read_only=True),
)


class CalibratorNode(GhostNode):
    """Publishes C_t once both the raw assessment of t and the outcome of t are known."""

    def __init__(self, **options: Any) -> None:
        super().__init__('calibrator', PARAMS, **options)
        self.on_parameters_changed()
        self._joiner: CalibrationJoiner[object, object] = CalibrationJoiner(
            self.param('max_history'))
        self._pub = self.create_publisher(CalibratedSelfAssessment,
                                          'self_assessment/calibrated', GHOST_QOS)
        self.create_subscription(BeliefSelfAssessment, 'self_assessment', self._on_raw,
                                 GHOST_QOS)
        self.create_subscription(PredictionOutcome, 'prediction_outcomes', self._on_outcome,
                                 GHOST_QOS)

    def on_parameters_changed(self) -> None:
        """Rebuild the core configuration from the parameters."""
        self._config = loop_config(self.param)

    def _on_raw(self, msg: BeliefSelfAssessment) -> None:
        raw = parse_belief_self_assessment(msg_to_dict(msg))
        self._publish(self._joiner.on_assessment(stamp_ns(msg.header.stamp), raw))

    def _on_outcome(self, msg: PredictionOutcome) -> None:
        outcome = parse_prediction_outcome(msg_to_dict(msg))
        self._publish(self._joiner.on_outcome(
            StampedOutcome(stamp_ns(msg.header.stamp), bool(msg.observed), outcome)))

    def _publish(self, ready: list[tuple[object, list[object]]]) -> None:
        for dropped in self._joiner.dropped:
            self.get_logger().warning(f'cycle {dropped}: its outcome never came; '
                                      'no calibrated assessment for it')
        self._joiner.dropped.clear()
        for raw, outcomes in ready:
            calibrated = calibrate(raw, outcomes, self._config)  # type: ignore[arg-type]
            self._pub.publish(from_msg_dict(CalibratedSelfAssessment, to_msg_dict(calibrated)))


def main(args: list[str] | None = None) -> None:
    """Entry point of the ``calibrator`` executable."""
    run(CalibratorNode, args)
