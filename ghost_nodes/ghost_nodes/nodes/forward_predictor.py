"""Forward predictor node: constant-velocity prediction of the next cycle (/predictions)."""

from typing import Any

from nav_msgs.msg import Odometry

from ghost_core.prediction import MODEL_ID, prediction_from_belief
from ghost_core.ros_inputs import belief_sample
from ghost_interfaces.msg import ForwardPrediction
from ghost_nodes.node_base import GhostNode, run
from ghost_nodes.node_parameters import PARAMETERS
from ghost_nodes.qos import GHOST_QOS, input_qos
from ghost_nodes.stamps import StampGuard

__all__ = ['ForwardPredictorNode', 'main']


class ForwardPredictorNode(GhostNode):
    """For each belief at t, publishes the predicted position at t + period_s."""

    def __init__(self, **options: Any) -> None:
        super().__init__('forward_predictor', PARAMETERS['forward_predictor'], **options)
        self._stamps = StampGuard(self.get_logger(), 'belief')
        self._pub = self.create_graph_publisher(ForwardPrediction, 'predictions', GHOST_QOS)
        self.create_graph_subscription(Odometry, 'state/nav', self._on_belief,
                                       input_qos(self.param('input_qos')))

    def configuration_section(self) -> dict[str, object]:
        """The process noise Q the predictions now carry."""
        return {'process_noise_q': float(self.param('process_noise'))}

    def start_configuration(self) -> dict[str, object]:
        """Q, the prediction period and the model it runs."""
        return {**self.configuration_section(),
                'period_ns': round(self.param('period_s') * 1e9),
                'policies': {'model_id': MODEL_ID}}

    def _on_belief(self, msg: Odometry) -> None:
        belief = self.derive(msg, belief_sample)
        if not self._stamps.accept(belief.stamp_ns):
            return
        prediction = prediction_from_belief(belief, round(self.param('period_s') * 1e9),
                                            float(self.param('process_noise')))
        if prediction is None:
            # Not finite: nothing can be predicted; the next cycle's outcome says so.
            self.get_logger().warning('belief not finite: no prediction',
                                      throttle_duration_sec=5.0)
            return
        self.publish_contract(self._pub, prediction)


def main(args: list[str] | None = None) -> None:
    """Entry point of the ``forward_predictor`` executable."""
    run(ForwardPredictorNode, args)
