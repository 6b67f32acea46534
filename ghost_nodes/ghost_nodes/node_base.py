"""What every Ghost node shares: typed, validated parameters and the Jazzy run/shutdown pattern."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
import signal
import sys
import time
from types import FrameType
from typing import Any

from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.signals import SignalHandlerOptions

from ghost_nodes.readiness import GraphStatusReporter

__all__ = ['GhostNode', 'ParamSpec', 'positive', 'at_least', 'non_negative', 'one_of', 'run']

Check = Callable[[Any], str | None]


def at_least(minimum: int | float) -> Check:
    """A check that a number is >= ``minimum``."""
    def check(value: Any) -> str | None:
        return None if value >= minimum else f'must be >= {minimum}, got {value}'
    return check


def positive(value: Any) -> str | None:
    """A check that a number is > 0."""
    return None if value > 0 else f'must be > 0, got {value}'


def non_negative(value: Any) -> str | None:
    """A check that a number is >= 0."""
    return None if value >= 0 else f'must be >= 0, got {value}'


def one_of(choices: Sequence[str]) -> Check:
    """A check that a string is one of ``choices``."""
    def check(value: Any) -> str | None:
        return None if value in choices else f'must be one of {sorted(choices)}, got {value!r}'
    return check


@dataclass(frozen=True)
class ParamSpec:
    """One declared parameter: name, typed default, description, validity checks."""

    name: str
    default: Any
    description: str
    checks: tuple[Check, ...] = ()
    read_only: bool = False


class GhostNode(Node):
    """A node whose parameters are declared from specs, validated at start-up and on update.

    Invalid start-up values raise ``ValueError`` naming the parameter (the process exits with a
    one-line error); invalid ``set_parameters`` requests are refused with the same reason.
    Subclasses override ``on_parameters_changed`` to rebuild their core configuration.
    Every Ghost node reports its matched endpoints on /ghost/graph_status (see
    ``ghost_nodes.readiness``), which is how the scenario knows the graph is ready.

    ``DRAIN_S``: on SIGINT/SIGTERM the node keeps processing for this long before it exits,
    so a cycle already in the pipeline is finished (decided, actuated, recorded) rather than
    cut in half when a whole graph is interrupted at once (Ctrl-C, ``ros2 launch``).
    """

    #: Seconds of processing after a shutdown request (see the class docstring).
    DRAIN_S = 0.5

    def __init__(self, node_name: str, specs: Sequence[ParamSpec]) -> None:
        super().__init__(node_name)
        self._specs = {spec.name: spec for spec in specs}
        for spec in specs:
            self.declare_parameter(spec.name, spec.default, ParameterDescriptor(
                description=spec.description, read_only=spec.read_only))
        for spec in specs:
            reason = self._check(spec.name, self.get_parameter(spec.name).value)
            if reason is not None:
                raise ValueError(reason)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.add_post_set_parameters_callback(lambda _params: self.on_parameters_changed())
        self.graph_status = GraphStatusReporter(self)

    def param(self, name: str) -> Any:
        """The current value of a declared parameter."""
        return self.get_parameter(name).value

    def _check(self, name: str, value: Any) -> str | None:
        spec = self._specs.get(name)
        if spec is None:
            return None
        if type(value) is not type(spec.default) and not (
                isinstance(spec.default, float) and isinstance(value, int)):
            return (f'parameter {name} must be of type {type(spec.default).__name__}, '
                    f'got {value!r}')
        for check in spec.checks:
            problem = check(value)
            if problem is not None:
                return f'parameter {name} {problem}'
        return None

    def _on_set_parameters(self, params: list[Parameter]) -> SetParametersResult:
        for p in params:
            reason = self._check(p.name, p.value)
            if reason is not None:
                return SetParametersResult(successful=False, reason=reason)
        try:
            reason = self.validate_together({p.name: p.value for p in params})
        except ValueError as err:
            reason = str(err)
        if reason is not None:
            return SetParametersResult(successful=False, reason=reason)
        return SetParametersResult(successful=True)

    def on_parameters_changed(self) -> None:
        """Rebuild whatever the node derived from its parameters (after an accepted update)."""

    def on_shutdown_requested(self) -> None:
        """Stop producing new work (a source stops publishing); called before the drain."""

    def validate_together(self, updates: dict[str, Any]) -> str | None:
        """Cross-parameter checks for an update; return a reason to refuse it, or None."""
        return None


#: Signals this close together are one request to stop (see ``run``).
SAME_REQUEST_S = 1.0


def run(node_factory: Callable[[], Node], args: list[str] | None = None) -> None:
    """Run one node until SIGINT/SIGTERM, then drain it and shut down.

    rclpy's own signal handler would shut the context down at once, dropping whatever is in
    flight; this one only asks to stop: the node gets ``on_shutdown_requested()``, keeps
    processing for its ``DRAIN_S``, and then exits. A second signal more than
    ``SAME_REQUEST_S`` after the first exits at once; one sooner is the same request (Ctrl-C
    under ``ros2 launch`` delivers two: the terminal's to the process group, and launch's own).
    """
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    requested: list[float] = []

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        now = time.monotonic()
        if requested and now - requested[0] > SAME_REQUEST_S:
            raise KeyboardInterrupt
        if not requested:
            requested.append(now)

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    node: Node | None = None
    try:
        node = node_factory()
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        while not requested and rclpy.ok():
            executor.spin_once(timeout_sec=0.1)
        if isinstance(node, GhostNode):
            node.on_shutdown_requested()
            deadline = time.monotonic() + node.DRAIN_S
            while rclpy.ok() and time.monotonic() < deadline:
                executor.spin_once(timeout_sec=min(0.05, node.DRAIN_S))
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except ValueError as err:
        # Bad configuration: one line, no traceback.
        print(f'error: {err}', file=sys.stderr)
        if node is None:
            rclpy.try_shutdown()
            sys.exit(2)
        raise
    finally:
        # Nothing cuts the teardown short any more: it is bounded, and SIGKILL still works.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
