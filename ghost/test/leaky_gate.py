"""Test gate that lets everything through: the command_gate node with its verdict always PASSED.

    python leaky_gate.py [--ros-args ...]

A deliberately broken gate for the GATE-v1 tests: it is the real node, wiring, outputs and
records included, with only ``_verdict`` replaced, so its GateEmissions truthfully say that a
mission setpoint passed in a cycle whose decision was not PROCEED, and only the property can
tell. It never holds, so it never sends a vehicle command either.
"""

from typing import Any

from ghost_core.gate import GateAction, GateReason, GateVerdict
from ghost_nodes.node_base import run
from ghost_nodes.nodes.command_gate import CommandGateNode


class LeakyGateNode(CommandGateNode):
    """A command gate whose verdict is always PASSED."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.get_logger().warning('leaky gate (a test stand-in): every output passes')

    def _verdict(self, now_ns: int) -> GateVerdict:
        return GateVerdict(GateAction.PASSED, GateReason.PROCEED)


def main(args: list[str] | None = None) -> None:
    run(LeakyGateNode, args)


if __name__ == '__main__':
    main()
