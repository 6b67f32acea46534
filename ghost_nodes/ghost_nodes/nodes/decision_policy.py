"""Decision policy node: the reference policy on the adjusted level (/decisions)."""

from typing import Any

from ghost_core.hashing import content_address
from ghost_core.loop import decide
from ghost_core.wire import parse_calibrated
from ghost_interfaces.msg import CalibratedSelfAssessment, DecisionRationale
from ghost_nodes.node_base import GhostNode, run
from ghost_nodes.qos import GHOST_QOS

__all__ = ['DecisionPolicyNode', 'main']


class DecisionPolicyNode(GhostNode):
    """For each calibrated assessment, publishes a DecisionRationale citing it by hash."""

    def __init__(self, **options: Any) -> None:
        super().__init__('decision_policy', (), **options)
        self._pub = self.create_graph_publisher(DecisionRationale, 'decisions', GHOST_QOS)
        self.create_graph_subscription(CalibratedSelfAssessment, 'self_assessment/calibrated',
                                       self._on_calibrated, GHOST_QOS)

    def _on_calibrated(self, msg: CalibratedSelfAssessment) -> None:
        # Cite what was received: hash its message dict rather than rebuild it from the contract.
        received, calibrated = self.received(msg, parse_calibrated)
        addresses = content_address(received['raw_assessment']), content_address(received)
        self.publish_contract(self._pub, decide(calibrated, addresses))


def main(args: list[str] | None = None) -> None:
    """Entry point of the ``decision_policy`` executable."""
    run(DecisionPolicyNode, args)
