"""Calibrator node: adjusts each raw assessment by the agent's own prediction errors."""

from typing import Any

from ghost_core.calibration import DOWNGRADE_POLICY_ID
from ghost_core.contracts import BeliefSelfAssessment as RawContract
from ghost_core.hashing import content_address
from ghost_core.loop import calibrate
from ghost_core.ros_inputs import time_ns
from ghost_core.sequencing import CalibrationJoiner, StampedOutcome
from ghost_core.wire import parse_belief_self_assessment, parse_prediction_outcome
from ghost_interfaces.msg import BeliefSelfAssessment, CalibratedSelfAssessment, PredictionOutcome
from ghost_nodes.agent_config import loop_config
from ghost_nodes.node_base import GhostNode, run
from ghost_nodes.node_parameters import PARAMETERS
from ghost_nodes.qos import GHOST_QOS

__all__ = ['CalibratorNode', 'main']


class CalibratorNode(GhostNode):
    """Publishes C_t once both the raw assessment of t and the outcome of t are known."""

    def __init__(self, **options: Any) -> None:
        super().__init__('calibrator', PARAMETERS['calibrator'], **options)
        self.on_parameters_changed()
        # Each raw assessment is kept with H of the message received, which C_t cites.
        self._joiner: CalibrationJoiner[tuple[RawContract, str], object] = CalibrationJoiner(
            self.param('max_history'))
        self._pub = self.create_graph_publisher(CalibratedSelfAssessment,
                                                'self_assessment/calibrated', GHOST_QOS)
        self.create_graph_subscription(BeliefSelfAssessment, 'self_assessment', self._on_raw,
                                       GHOST_QOS)
        self.create_graph_subscription(PredictionOutcome, 'prediction_outcomes',
                                       self._on_outcome, GHOST_QOS)

    def on_parameters_changed(self) -> None:
        """Rebuild the core configuration from the parameters."""
        self._config = loop_config(self.param)

    def validate_together(self, updates: dict[str, object]) -> str | None:
        """Refuse M or K beyond W (a count the window cannot reach: drift detection off)."""
        loop_config(lambda name: updates.get(name, self.param(name)))  # raises ConfigError
        return None

    def configuration_section(self) -> dict[str, object]:
        """M, K and W the calibrated assessments are now computed with."""
        return {'loop': {'downgrade_threshold': self._config.downgrade_threshold,
                         'max_history': self._config.max_history,
                         'min_outcomes': self._config.min_outcomes}}

    def start_configuration(self) -> dict[str, object]:
        """M, K, W and the adjustment policy it runs."""
        return {**self.configuration_section(),
                'policies': {'adjustment_policy_id': DOWNGRADE_POLICY_ID}}

    def _on_raw(self, msg: BeliefSelfAssessment) -> None:
        received, raw = self.received(msg, parse_belief_self_assessment)
        self._publish(self._joiner.on_assessment(time_ns(msg.header.stamp),
                                                 (raw, content_address(received))))

    def _on_outcome(self, msg: PredictionOutcome) -> None:
        _form, outcome = self.received(msg, parse_prediction_outcome)
        self._publish(self._joiner.on_outcome(
            StampedOutcome(time_ns(msg.header.stamp), bool(msg.observed), outcome)))

    def _publish(self, ready: list[tuple[tuple[RawContract, str], list[object]]]) -> None:
        for dropped in self._joiner.dropped:
            self.get_logger().warning(f'cycle {dropped}: its outcome never came; '
                                      'no calibrated assessment for it')
        self._joiner.dropped.clear()
        for (raw, raw_sha256), outcomes in ready:
            calibrated = calibrate(raw, outcomes, self._config,  # type: ignore[arg-type]
                                   raw_sha256)
            self.publish_contract(self._pub, calibrated)


def main(args: list[str] | None = None) -> None:
    """Entry point of the ``calibrator`` executable."""
    run(CalibratorNode, args)
