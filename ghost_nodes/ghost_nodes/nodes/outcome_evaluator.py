"""Outcome evaluator node: pairs observations with predictions (/prediction_outcomes)."""

from geometry_msgs.msg import PoseWithCovarianceStamped
from nav_msgs.msg import Odometry

from ghost_core.contracts import ForwardPrediction as ForwardPredictionContract
from ghost_core.contracts import STATUS_FRAME_MISMATCH, STATUS_INVALID_OBSERVATION
from ghost_core.prediction import outcome_for_cycle
from ghost_core.samples import Observation
from ghost_core.wire import parse_forward_prediction, to_msg_dict
from ghost_interfaces.msg import ForwardPrediction, PredictionOutcome
from ghost_nodes.convert import from_msg_dict, stamp_ns
from ghost_nodes.convert import to_msg_dict as msg_to_dict
from ghost_nodes.node_base import at_least, GhostNode, one_of, ParamSpec, positive, run
from ghost_nodes.qos import GHOST_QOS, input_qos
from ghost_core.sequencing import CycleInputs, OutcomeSequencer
from ghost_nodes.stamps import StampGuard

__all__ = ['OutcomeEvaluatorNode', 'main']

PARAMS = (
    ParamSpec('period_s', 0.1, 'Cycle period (s); stamps within half a period of a cycle '
              'belong to it.', (positive,), read_only=True),
    ParamSpec('grace_cycles', 3, 'A cycle whose prediction or observation has not arrived when '
              'this many later beliefs have is resolved without it.', (at_least(1),),
              read_only=True),
    ParamSpec('input_reliability', 'reliable', "QoS reliability of the /state/nav and "
              "/observations subscriptions: 'reliable' or 'best_effort'.",
              (one_of(('reliable', 'best_effort')),), read_only=True),
)


class OutcomeEvaluatorNode(GhostNode):
    """Publishes exactly one PredictionOutcome per cycle, in cycle order."""

    def __init__(self) -> None:
        super().__init__('outcome_evaluator', PARAMS)
        period_ns = round(self.param('period_s') * 1e9)
        self._sequencer: OutcomeSequencer[ForwardPredictionContract, Observation] = \
            OutcomeSequencer(grace_cycles=self.param('grace_cycles'),
                             tolerance_ns=period_ns // 2)
        self._beliefs = StampGuard(self.get_logger(), 'belief')
        self._observations = StampGuard(self.get_logger(), 'observation')
        self._pub = self.create_publisher(PredictionOutcome, '/prediction_outcomes', GHOST_QOS)
        qos = input_qos(self.param('input_reliability'))
        # Observations first: when both are ready at once, the observation is taken first.
        self.create_subscription(PoseWithCovarianceStamped, '/observations',
                                 self._on_observation, qos)
        self.create_subscription(ForwardPrediction, '/predictions', self._on_prediction,
                                 GHOST_QOS)
        self.create_subscription(Odometry, '/state/nav', self._on_belief, qos)

    def _on_belief(self, msg: Odometry) -> None:
        stamp = stamp_ns(msg.header.stamp)
        if self._beliefs.accept(stamp):
            self._publish(self._sequencer.on_belief(stamp))

    def _on_prediction(self, msg: ForwardPrediction) -> None:
        prediction = parse_forward_prediction(msg_to_dict(msg))
        self._publish(self._sequencer.on_prediction(prediction.target_stamp_ns, prediction))

    def _on_observation(self, msg: PoseWithCovarianceStamped) -> None:
        if not self._observations.accept(stamp_ns(msg.header.stamp)):
            return
        p = msg.pose.pose.position
        cov = [float(v) for v in msg.pose.covariance]
        observation = Observation(stamp_ns(msg.header.stamp), msg.header.frame_id,
                                  (float(p.x), float(p.y), float(p.z)),
                                  tuple(cov[r * 6 + c] for r in range(3) for c in range(3)))
        self._publish(self._sequencer.on_observation(stamp_ns(msg.header.stamp), observation))

    def _publish(self, cycles: list[CycleInputs[ForwardPredictionContract, Observation]]) -> None:
        for cycle in cycles:
            outcome = outcome_for_cycle(cycle.stamp_ns, self._frame_of(cycle), cycle.prediction,
                                        cycle.observation)
            if outcome.status == STATUS_FRAME_MISMATCH and cycle.observation is not None:
                self.get_logger().warning(
                    f'observation frame {cycle.observation.frame_id!r} is not the belief frame '
                    f'{self._frame_of(cycle)!r}: not used', throttle_duration_sec=5.0)
            elif outcome.status == STATUS_INVALID_OBSERVATION:
                self.get_logger().warning('observation not finite or its covariance is not a '
                                          'covariance: not used', throttle_duration_sec=5.0)
            self._pub.publish(from_msg_dict(PredictionOutcome, to_msg_dict(outcome)))

    @staticmethod
    def _frame_of(cycle: CycleInputs[ForwardPredictionContract, Observation]) -> str:
        if cycle.prediction is not None:
            return cycle.prediction.frame_id
        return cycle.observation.frame_id if cycle.observation is not None else ''


def main(args: list[str] | None = None) -> None:
    """Entry point of the ``outcome_evaluator`` executable."""
    run(OutcomeEvaluatorNode, args)
