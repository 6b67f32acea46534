"""Outcome evaluator node: pairs observations with predictions (/prediction_outcomes)."""

import time
from typing import Any

from geometry_msgs.msg import PoseWithCovarianceStamped
from nav_msgs.msg import Odometry

from ghost_core.contracts import ForwardPrediction as ForwardPredictionContract
from ghost_core.contracts import (
    STATUS_FRAME_MISMATCH,
    STATUS_INVALID_OBSERVATION,
    STATUS_NO_MEASURED_AXIS,
    STATUS_NO_OBSERVATION_COVARIANCE,
)
from ghost_core.prediction import (
    outcome_for_cycle,
)
from ghost_core.ros_inputs import observation_of, time_ns
from ghost_core.samples import Observation
from ghost_core.sequencing import CycleInputs, OutcomeSequencer
from ghost_core.wire import parse_forward_prediction
from ghost_interfaces.msg import ForwardPrediction, PredictionOutcome
from ghost_nodes.agent_config import evaluator_config
from ghost_nodes.node_base import (
    GhostNode,
    run,
)
from ghost_nodes.node_parameters import PARAMETERS
from ghost_nodes.qos import GHOST_QOS, input_qos
from ghost_nodes.stamps import StampGuard

__all__ = ['OutcomeEvaluatorNode', 'main']


class OutcomeEvaluatorNode(GhostNode):
    """Publishes exactly one PredictionOutcome per cycle, in cycle order."""

    def __init__(self, **options: Any) -> None:
        super().__init__('outcome_evaluator', PARAMETERS['outcome_evaluator'], **options)
        self._config = evaluator_config(self.param)
        self._sequencer: OutcomeSequencer[ForwardPredictionContract, Observation] = \
            OutcomeSequencer(grace_cycles=self.param('grace_cycles'),
                             max_observation_lag_ns=self._config.max_observation_lag_ns)
        self._late_reported = 0
        self._belief_frames: dict[int, str] = {}
        self._last_input = time.monotonic()
        idle = float(self.param('idle_flush_s'))
        if idle > 0.0:
            self._idle_s = idle
            self.create_timer(min(idle / 4.0, 0.25), self._flush_if_idle)
        self._beliefs = StampGuard(self.get_logger(), 'belief')
        self._observations = StampGuard(self.get_logger(), 'observation')
        self._pub = self.create_graph_publisher(PredictionOutcome, 'prediction_outcomes',
                                                GHOST_QOS)
        qos = input_qos(self.param('input_qos'))
        # Observations first: when both are ready at once, the observation is taken first.
        self.create_graph_subscription(PoseWithCovarianceStamped, 'observations',
                                       self._on_observation, qos)
        self.create_graph_subscription(ForwardPrediction, 'predictions', self._on_prediction,
                                       GHOST_QOS)
        self.create_graph_subscription(Odometry, 'state/nav', self._on_belief, qos)

    def start_configuration(self) -> dict[str, object]:
        """How it pairs fixes with predictions: lag, unmeasured variance, grace, idle flush."""
        return {'evaluator': self._config.to_dict(), 'grace_cycles': self.param('grace_cycles'),
                'idle_flush_ns': round(float(self.param('idle_flush_s')) * 1e9)}

    def _flush_if_idle(self) -> None:
        if self._sequencer.pending_cycles and time.monotonic() - self._last_input >= self._idle_s:
            self._publish(self._sequencer.flush())

    def _on_belief(self, msg: Odometry) -> None:
        self._last_input = time.monotonic()
        stamp = time_ns(msg.header.stamp)
        if self._beliefs.accept(stamp):
            # The outcome of a cycle is in its belief's frame (as the pure pipeline does).
            self._belief_frames[stamp] = msg.header.frame_id
            self._publish(self._sequencer.on_belief(stamp))

    def _on_prediction(self, msg: ForwardPrediction) -> None:
        self._last_input = time.monotonic()
        _form, prediction = self.received(msg, parse_forward_prediction)
        self._publish(self._sequencer.on_prediction(prediction.stamp_ns, prediction))

    def _on_observation(self, msg: PoseWithCovarianceStamped) -> None:
        self._last_input = time.monotonic()
        stamp = time_ns(msg.header.stamp)
        if self._observations.accept(stamp):
            self._publish(self._sequencer.on_observation(stamp, observation_of(msg)))

    def _publish(self, cycles: list[CycleInputs[ForwardPredictionContract, Observation]]) -> None:
        if self._sequencer.late > self._late_reported:
            self._late_reported = self._sequencer.late
            self.get_logger().warning(
                f'{self._late_reported} fix(es) arrived after their cycle was resolved (later '
                'than max_observation_lag_s): not used', throttle_duration_sec=5.0)
        for cycle in cycles:
            frame_id = self._belief_frames.pop(cycle.stamp_ns, '')
            outcome = outcome_for_cycle(cycle.stamp_ns, frame_id, cycle.prediction,
                                        cycle.observation, self._config)
            if outcome.status == STATUS_FRAME_MISMATCH and cycle.observation is not None:
                self.get_logger().warning(
                    f'observation frame {cycle.observation.frame_id!r} is not the belief frame '
                    f'{frame_id!r}: not used', throttle_duration_sec=5.0)
            elif outcome.status == STATUS_INVALID_OBSERVATION:
                self.get_logger().warning('observation not finite or its covariance is not a '
                                          'covariance: not used', throttle_duration_sec=5.0)
            elif outcome.status == STATUS_NO_OBSERVATION_COVARIANCE:
                self.get_logger().warning('observation declares no covariance (all zeros or '
                                          '-1): not used', throttle_duration_sec=5.0)
            elif outcome.status == STATUS_NO_MEASURED_AXIS:
                self.get_logger().warning('observation measures no axis (every variance above '
                                          'unmeasured_variance_m2): not used',
                                          throttle_duration_sec=5.0)
            self.publish_contract(self._pub, outcome)


def main(args: list[str] | None = None) -> None:
    """Entry point of the ``outcome_evaluator`` executable."""
    run(OutcomeEvaluatorNode, args)
