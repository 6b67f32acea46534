"""Action emitter node: the reference emission contract (/decisions -> /actuations)."""

from typing import Any

from ghost_core.actions import REFERENCE_EMISSION_CONTRACT_ID
from ghost_core.hashing import content_address
from ghost_core.loop import emit
from ghost_core.wire import parse_decision_rationale
from ghost_interfaces.msg import ActionEmission, DecisionRationale
from ghost_nodes.node_base import GhostNode, run
from ghost_nodes.qos import GHOST_QOS

__all__ = ['ActionEmitterNode', 'main']


class ActionEmitterNode(GhostNode):
    """For each decision, publishes the actuation that executes it, citing it by hash."""

    def __init__(self, **options: Any) -> None:
        super().__init__('action_emitter', (), **options)
        self._pub = self.create_graph_publisher(ActionEmission, 'actuations', GHOST_QOS)
        self.create_graph_subscription(DecisionRationale, 'decisions', self._on_decision,
                                       GHOST_QOS)

    def start_configuration(self) -> dict[str, object]:
        """The emission contract it runs."""
        return {'policies': {'contract_id': REFERENCE_EMISSION_CONTRACT_ID}}

    def _on_decision(self, msg: DecisionRationale) -> None:
        received, rationale = self.received(msg, parse_decision_rationale)
        # Cite what was received, hashed as it came.
        self.publish_contract(self._pub, emit(rationale, content_address(received)))


def main(args: list[str] | None = None) -> None:
    """Entry point of the ``action_emitter`` executable."""
    run(ActionEmitterNode, args)
