"""Decision policy node: the reference policy on the adjusted level (/decisions).

Each decision's rationale records the vehicle status in force at its cycle (ADR-0021 §2): the
latest /vehicle_status stamped at or before it (ghost_core.vehicle.VehicleStatusTracker, the
pipeline's rule), UNKNOWN when none was received. The reference policy ignores it.
"""

from typing import Any

from ghost_core.decisions import REFERENCE_POLICY_ID
from ghost_core.hashing import content_address
from ghost_core.loop import decide
from ghost_core.vehicle import VehicleStatusTracker
from ghost_core.wire import parse_calibrated, parse_vehicle_status
from ghost_interfaces.msg import CalibratedSelfAssessment, DecisionRationale, VehicleStatus
from ghost_nodes.node_base import GhostNode, run
from ghost_nodes.qos import GHOST_QOS

__all__ = ['DecisionPolicyNode', 'main']


class DecisionPolicyNode(GhostNode):
    """For each calibrated assessment, publishes a DecisionRationale citing it by hash."""

    def __init__(self, **options: Any) -> None:
        super().__init__('decision_policy', (), **options)
        self._vehicle = VehicleStatusTracker()
        self._pub = self.create_graph_publisher(DecisionRationale, 'decisions', GHOST_QOS)
        self.create_graph_subscription(VehicleStatus, 'vehicle_status', self._on_status,
                                       GHOST_QOS)
        self.create_graph_subscription(CalibratedSelfAssessment, 'self_assessment/calibrated',
                                       self._on_calibrated, GHOST_QOS)

    def start_configuration(self) -> dict[str, object]:
        """The decision policy it runs."""
        return {'policies': {'policy_id': REFERENCE_POLICY_ID}}

    def _on_status(self, msg: VehicleStatus) -> None:
        _form, status = self.received(msg, parse_vehicle_status)
        self._vehicle.on_status(status)

    def _on_calibrated(self, msg: CalibratedSelfAssessment) -> None:
        # Cite what was received: hash its message dict rather than rebuild it from the contract.
        received, calibrated = self.received(msg, parse_calibrated)
        addresses = content_address(received['raw_assessment']), content_address(received)
        stamp_ns = calibrated.stamp_ns
        self.publish_contract(self._pub, decide(calibrated, addresses,
                                                vehicle=self._vehicle.at(stamp_ns)))
        self._vehicle.forget_before(stamp_ns)


def main(args: list[str] | None = None) -> None:
    """Entry point of the ``decision_policy`` executable."""
    run(DecisionPolicyNode, args)
