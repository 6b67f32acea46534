"""What every Ghost node shares: typed, validated parameters and the Jazzy run/shutdown pattern."""

from collections.abc import Callable, Mapping, Sequence
import faulthandler
import json
import os
import signal
import sys
import time
from types import FrameType
from typing import Any, TypeVar

from rcl_interfaces.msg import (
    FloatingPointRange,
    IntegerRange,
    ParameterDescriptor,
    SetParametersResult,
)
import rclpy
from rclpy.exceptions import InvalidParameterTypeException, InvalidParameterValueException
from rclpy.executors import ExternalShutdownException
from rclpy.impl.rcutils_logger import RcutilsLogger
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile
from rclpy.signals import SignalHandlerOptions

from ghost_core.graph import CONFIGURATION_TOPIC, LIFECYCLE_TOPIC, relative_topic
from ghost_core.hashing import hash_form
from ghost_core.lifecycle import lifecycle_record, READY, STOPPING
from ghost_core.parameters import ParamSpec
from ghost_core.wire import MESSAGE_TYPES, to_msg_dict
from ghost_interfaces.msg import ConfigurationChange
from ghost_nodes.convert import from_msg_dict
from ghost_nodes.executors import executor_class, process_executor, spinner
from ghost_nodes.intra_process import GraphPublisher, IntraProcessBus, IntraProcessPublisher
from ghost_nodes.node_parameters import COMMON_PARAMS
from ghost_nodes.qos import CONFIGURATION_QOS
from ghost_nodes.readiness import endpoint_report, GraphStatusReporter, own_edges_missing

__all__ = ['descriptor', 'executor_class', 'GhostNode', 'run', 'run_nodes']

ContractT = TypeVar('ContractT')
ResultT = TypeVar('ResultT')


def descriptor(spec: ParamSpec) -> ParameterDescriptor:
    """The rclpy descriptor of ``spec``: description, read-only flag, range, other constraints."""
    descriptor = ParameterDescriptor(
        description=spec.description, read_only=spec.read_only,
        additional_constraints=spec.constraints())
    value_range = spec.value_range()
    if value_range is not None:
        low, high = value_range
        if isinstance(spec.default, int):
            descriptor.integer_range = [
                IntegerRange(from_value=int(low), to_value=int(high), step=0)]
        else:
            descriptor.floating_point_range = [
                FloatingPointRange(from_value=float(low), to_value=float(high), step=0.0)]
    return descriptor


class GhostNode(Node):
    """A node whose parameters are declared from specs, validated at start-up and on update.

    rclpy enforces each spec's range (see ``ParamSpec``); Ghost runs every check as well and
    words the refusal. Invalid start-up values raise ``ValueError`` naming the parameter (the
    process exits with a one-line error); invalid ``set_parameters`` requests are refused with
    the same reason. Subclasses override ``on_parameters_changed`` to rebuild their core
    configuration. With ``graph_status`` on (``COMMON_PARAMS``: off by default, turned on by
    the graph when a scenario or player waits for it) a node reports its matched endpoints on
    ghost/graph_status (``ghost_nodes.readiness``), which is how the scenario knows the graph
    is ready; off, the node has no reporter, no status publisher and no polling timer.

    A node whose configuration may change while it runs overrides ``configuration_section``:
    after each accepted update it publishes its part of the run configuration on
    ghost/configuration (a ConfigurationChange), in force for its cycles stamped after the
    last one it published, so that the recording says which configuration judged which cycle.

    ``DRAIN_S``: on SIGINT/SIGTERM the node keeps processing for this long before it exits,
    so a cycle already in the pipeline is finished (decided, actuated, recorded) rather than
    cut in half when a whole graph is interrupted at once (Ctrl-C, ``ros2 launch``).
    """

    #: Seconds of processing after a shutdown request (see the class docstring).
    DRAIN_S = 0.5
    #: Whether the node records its start-up and shutdown on ghost/lifecycle (None: when it
    #: has a start configuration, i.e. an agent node; the recorder records its stop).
    LIFECYCLE: bool | None = None
    #: Seconds between two looks at the node's own endpoints, until it is ready.
    READY_POLL_S = 0.1
    #: Seconds destroying the node may take before its process reports where it is stuck.
    TEARDOWN_S = 3.0

    def __init__(self, node_name: str, specs: Sequence[ParamSpec], **options: Any) -> None:
        # ``options`` go to rclpy's Node: in one process (ghost_nodes.agent_process) each node
        # gets its own command line there (cli_args, use_global_arguments=False), and the
        # process's IntraProcessBus as ``intra_process_bus``.
        self._bus: IntraProcessBus | None = options.pop('intra_process_bus', None)
        super().__init__(node_name, **options)
        specs = (*specs, *COMMON_PARAMS)
        self._specs = {spec.name: spec for spec in specs}
        for spec in specs:
            self._declare(spec)
        for spec in specs:
            reason = self._check(spec.name, self.get_parameter(spec.name).value)
            if reason is not None:
                raise ValueError(reason)
        # The stamp of the last cycle this node published (ConfigurationChange's boundary).
        self._last_cycle_ns = -1
        self._configuration_pub = (
            self.create_publisher(ConfigurationChange, relative_topic(CONFIGURATION_TOPIC),
                                  CONFIGURATION_QOS)
            if type(self).configuration_section is not GhostNode.configuration_section
            or type(self).start_configuration is not GhostNode.start_configuration
            else None)
        self._lifecycle_pub = None
        self._ready_timer: Any = None
        lifecycle = self.LIFECYCLE
        if lifecycle is None:
            lifecycle = type(self).start_configuration is not GhostNode.start_configuration
        if lifecycle:
            from std_msgs.msg import String

            self._string = String
            self._lifecycle_pub = self.create_publisher(
                String, relative_topic(LIFECYCLE_TOPIC), CONFIGURATION_QOS)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.add_post_set_parameters_callback(self._after_set)
        self.graph_status: GraphStatusReporter | None = (
            GraphStatusReporter(self, in_process=self._endpoints_in_process)
            if self.param('graph_status') else None)

    def create_graph_publisher(self, msg_type: type[Any], topic: str,
                               qos: QoSProfile) -> GraphPublisher:
        """A publisher of a Ghost graph topic (rclpy's own, or ``ghost_nodes.intra_process``'s).

        In one process with a bus, it also serves that process's subscribers without DDS.
        """
        if self._bus is None:
            publisher: GraphPublisher = self.create_publisher(msg_type, topic, qos)
            return publisher
        return self._bus.create_publisher(self, msg_type, topic, qos)

    def create_graph_subscription(self, msg_type: type[Any], topic: str,
                                  callback: Callable[[Any], None], qos: QoSProfile) -> None:
        """A subscription to a Ghost graph topic, over DDS or in the process.

        In one process with a bus, it is served in the process when a node of the process
        publishes the topic (``ghost_nodes.intra_process``).
        """
        if self._bus is None:
            self.create_subscription(msg_type, topic, callback, qos)
        else:
            self._bus.create_subscription(self, msg_type, topic, callback, qos)

    def publish_contract(self, publisher: GraphPublisher, contract: object) -> None:
        """Publish a ghost_core contract as the message of ``publisher``'s type.

        In the process, the message dict and the contract go with it (``intra_process.Memo``).
        """
        form = to_msg_dict(contract)
        stamp_ns = getattr(contract, 'stamp_ns', None)
        if isinstance(stamp_ns, int):
            self._last_cycle_ns = max(self._last_cycle_ns, stamp_ns)
        if isinstance(publisher, IntraProcessPublisher):
            publisher.publish(from_msg_dict(publisher.msg_type, form), (form, contract))
        else:
            publisher.publish(from_msg_dict(publisher.msg_type, form))  # type: ignore[attr-defined]

    def received(self, msg: Any, parse: Callable[[Mapping[str, Any]], ContractT]
                 ) -> tuple[Mapping[str, Any], ContractT]:
        """A ghost message received: its SPEC section 4 form (what is hashed) and contract.

        From DDS: ``hash_form(msg)`` and ``parse`` of it, which validates it. From a node of
        the process: the form and contract it was published with (``publish_contract``),
        which are what those would give.
        """
        if self._bus is not None:
            memo = self._bus.memo(msg)
            if memo is not None:
                contract_type, parser = MESSAGE_TYPES[type(msg).__name__]
                form, contract = memo
                if parse is parser and type(contract) is contract_type:
                    return form, contract  # type: ignore[return-value]
        form = hash_form(msg)
        return form, parse(form)

    def derive(self, msg: Any, function: Callable[[Any], ResultT]) -> ResultT:
        """``function(msg)`` for a pure ``function``.

        In a process whose nodes all read ``msg``, computed once for all of them
        (``IntraProcessBus.derive``).
        """
        if self._bus is None:
            return function(msg)
        return self._bus.derive(msg, function)

    def _endpoints_in_process(self) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
        if self._bus is None:
            return {}, {}, {}
        return (self._bus.writers_in_process(self), self._bus.readers_in_process(self),
                self._bus.shared_readers(self))

    def _declare(self, spec: ParamSpec) -> None:
        try:
            self.declare_parameter(spec.name, spec.default, descriptor(spec))
        except (InvalidParameterValueException, InvalidParameterTypeException) as err:
            # rclpy refused the start-up value against the range or the type. Say why in
            # Ghost's words: the refused parameter is left undeclared, so declaring it without
            # the range, of any type, reads the value it was given.
            value = self.declare_parameter(spec.name, spec.default,
                                           ParameterDescriptor(dynamic_typing=True)).value
            raise ValueError(self._check(spec.name, value) or str(err)) from None

    def param(self, name: str) -> Any:
        """The current value of a declared parameter."""
        return self.get_parameter(name).value

    def get_logger(self) -> RcutilsLogger:
        """The node's logger (rclpy leaves ``Node.get_logger`` unannotated)."""
        logger: RcutilsLogger = super().get_logger()  # type: ignore[no-untyped-call]
        return logger

    def destroy_node(self) -> None:
        """Destroy the node (rclpy leaves ``Node.destroy_node`` unannotated)."""
        super().destroy_node()  # type: ignore[no-untyped-call]

    def set_parameters(self, parameter_list: list[Parameter]) -> list[SetParametersResult]:
        """As rclpy's, with a refusal against a range worded as Ghost's checks word it."""
        return [self._in_ghost_words(result, [param]) for param, result in zip(
            parameter_list, super().set_parameters(parameter_list), strict=True)]

    def set_parameters_atomically(self, parameter_list: list[Parameter]) -> SetParametersResult:
        """As rclpy's (the set_parameters services call it), with Ghost's wording of a refusal."""
        return self._in_ghost_words(super().set_parameters_atomically(parameter_list),
                                    parameter_list)

    def _in_ghost_words(self, result: SetParametersResult,
                        params: list[Parameter]) -> SetParametersResult:
        # rclpy applies the descriptor's range before any callback and words its refusal
        # 'Parameter X out of range. Min: ..., Max: ..., value: ...'; Ghost's check of the same
        # range says 'parameter X must be >= 1, got 0', as the start-up refusal does.
        if result.successful or 'out of range' not in result.reason:
            return result
        for p in params:
            reason = self._check(p.name, p.value)
            if reason is not None:
                return SetParametersResult(successful=False, reason=reason)
        return result

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

    def _after_set(self, _params: list[Parameter]) -> None:
        self.on_parameters_changed()
        section = self.configuration_section()
        if section is None or not self._publish_configuration(section):
            return
        self.get_logger().info(f'configuration changed: {json.dumps(section, sort_keys=True)}, '
                               f'for cycles after {self._last_cycle_ns} ns')

    def record_lifecycle(self, event: str) -> None:
        """Publish a ghost/lifecycle record (``ghost_core.lifecycle``), if the node keeps them."""
        if self._lifecycle_pub is not None:
            self._lifecycle_pub.publish(self._string(
                data=lifecycle_record(self.get_fully_qualified_name(), event)))

    def watch_readiness(self) -> None:
        """Record 'ready' once the node's own endpoints have matched (agent nodes only)."""
        if self._lifecycle_pub is None or type(self).start_configuration is \
                GhostNode.start_configuration:
            return
        self._ready_timer = self.create_timer(self.READY_POLL_S, self._check_ready)

    def _check_ready(self) -> None:
        report = endpoint_report(self, {'/parameter_events', '/rosout'},
                                 self._endpoints_in_process)
        if own_edges_missing(report):
            return
        self.record_lifecycle(READY)
        self.get_logger().info('ready: every endpoint matched')
        if self._ready_timer is not None:
            self._ready_timer.cancel()
            self.destroy_timer(self._ready_timer)
            self._ready_timer = None

    def publish_start_configuration(self) -> None:
        """Publish the node's part of the start configuration (latched: any recorder gets it).

        The first record a node publishes on ghost/configuration is its start configuration
        (SPEC 5, v1.3: the configuration is in the bag); every later one is a change.
        """
        section = self.start_configuration()
        if section is not None:
            # No stamp: a start part belongs to no cycle, and its time is its log time; the
            # same run gives the same payloads (SPEC 8).
            self._publish_configuration(section, stamped=False)

    def _publish_configuration(self, section: Mapping[str, object], *,
                               stamped: bool = True) -> bool:
        if self._configuration_pub is None:
            return False
        msg = ConfigurationChange()
        if stamped:
            msg.header.stamp = self.get_clock().now().to_msg()
        msg.node = self.get_fully_qualified_name()
        msg.in_force_after_stamp_ns = self._last_cycle_ns
        msg.configuration = json.dumps(section, sort_keys=True, separators=(',', ':'))
        self._configuration_pub.publish(msg)
        return True

    def start_configuration(self) -> Mapping[str, object] | None:
        """The node's part of the start configuration; None: it has none.

        Keys of ``PipelineConfig.to_dict``; ``policies`` holds only the node's own id.
        """
        return None

    def on_parameters_changed(self) -> None:
        """Rebuild whatever the node derived from its parameters (after an accepted update)."""

    def configuration_section(self) -> Mapping[str, object] | None:
        """The node's part of the run configuration (keys of ``PipelineConfig.to_dict``).

        Overridden by the nodes whose configuration may change while they run; None (the
        default) publishes no change.
        """
        return None

    def on_shutdown_requested(self) -> None:
        """Stop producing new work (a source stops publishing); called before the drain."""

    def validate_together(self, updates: dict[str, Any]) -> str | None:
        """Cross-parameter checks for an update; return a reason to refuse it, or None."""
        return None


#: Signals this close together are one request to stop (see ``run``).
SAME_REQUEST_S = 1.0


def _teardown_s(nodes: Sequence[Node]) -> float:
    return max((node.TEARDOWN_S for node in nodes if isinstance(node, GhostNode)),
               default=GhostNode.TEARDOWN_S)


def _report_a_stuck_stop(budget_s: float) -> None:
    """Have a stop that outlasts `budget_s` print every thread's stack on stderr (and go on).

    A hang in rclpy's or the middleware's teardown would otherwise end, seconds later, as a
    bare SIGKILL from ``ros2 launch``; this says where it was stuck ("Timeout (0:00:03)!",
    then the stacks). Re-arming replaces the previous deadline.
    """
    faulthandler.dump_traceback_later(budget_s, exit=False)


def _drain(spin: Callable[[float], None], nodes: Sequence[Node]) -> None:
    """Tell the Ghost nodes to stop, and keep processing for the longest ``DRAIN_S``."""
    ghost_nodes = [node for node in nodes if isinstance(node, GhostNode)]
    drain_s = max((node.DRAIN_S for node in ghost_nodes), default=0.0)
    _report_a_stuck_stop(drain_s + _teardown_s(nodes))
    for node in ghost_nodes:
        node.record_lifecycle(STOPPING)
    for node in ghost_nodes:
        node.on_shutdown_requested()
    deadline = time.monotonic() + drain_s
    while rclpy.ok() and time.monotonic() < deadline:
        spin(min(0.05, drain_s))


def _stop_requests() -> list[float]:
    """Handle SIGINT/SIGTERM from now on; the list gets the time of the first request."""
    requested: list[float] = []

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        now = time.monotonic()
        if requested and now - requested[0] > SAME_REQUEST_S:
            raise KeyboardInterrupt
        if not requested:
            requested.append(now)

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    return requested


def run(node_factory: Callable[[], Node], args: list[str] | None = None) -> None:
    """Run one node until SIGINT/SIGTERM, then drain it and shut down (see ``run_nodes``)."""
    run_nodes([node_factory], args)


def run_nodes(node_factories: Sequence[Callable[[], Node]], args: list[str] | None = None,
              bus: IntraProcessBus | None = None) -> None:
    """Run nodes on one executor until SIGINT/SIGTERM, then drain them and shut down.

    The executor is the one the nodes' ``executor`` parameter names, read once they are built
    (``executor_class``; a process of nodes that disagree does not start).

    rclpy's own signal handler would shut the context down at once, dropping whatever is in
    flight; this one only asks to stop: each node gets ``on_shutdown_requested()``, they keep
    processing for the longest ``DRAIN_S``, and then exit. A second signal more than
    ``SAME_REQUEST_S`` after the first exits at once; one sooner is the same request (Ctrl-C
    under ``ros2 launch`` delivers two: the terminal's to the process group, and launch's own).
    Nodes are destroyed in reverse order of creation. One node per process is the usual graph;
    several are ``ghost_agent``'s single-process mode, where ``bus`` (the one the factories
    gave the nodes) is connected once they are all built, before the executor runs.
    """
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    requested = _stop_requests()
    nodes: list[Node] = []
    executor_name: str | None = None
    executor: Any = None
    code = 0
    try:
        for factory in node_factories:
            nodes.append(factory())
        for node in nodes:
            if isinstance(node, GhostNode):
                node.publish_start_configuration()
                node.watch_readiness()
        executor_name = process_executor(
            node.param('executor') for node in nodes if isinstance(node, GhostNode))
        if bus is not None:
            bus.connect()
        executor = executor_class(executor_name)()
        for node in nodes:
            executor.add_node(node)
        spin = spinner(executor, executor_name)
        while not requested and rclpy.ok():
            spin(0.1)
        _drain(spin, nodes)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except SystemExit as done:  # a finite source is done (ghost_nodes.source): its code
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    except ValueError as err:
        # Bad configuration: one line, no traceback.
        print(f'error: {err}', file=sys.stderr)
        if len(nodes) < len(node_factories) or executor_name is None:
            # A node refused its start-up values (the others go in finally), or the nodes
            # named different executors.
            sys.exit(2)
        raise
    finally:
        _teardown(executor, nodes)
    _leave(code)


def _teardown(executor: Any, nodes: Sequence[Node]) -> None:
    """Shut the executor, the nodes (newest first) and rclpy down; nothing cuts it short."""
    # It is bounded, and SIGKILL still works.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _report_a_stuck_stop(_teardown_s(nodes))
    try:
        if executor is not None:
            # Now, while the context is valid: left to the garbage collector, its destructor
            # runs after rclpy's shutdown and prints an InvalidHandle error.
            executor.shutdown(timeout_sec=1.0)
        for node in reversed(nodes):
            node.destroy_node()
        rclpy.try_shutdown()
    finally:
        faulthandler.cancel_dump_traceback_later()


def _leave(code: int = 0) -> None:
    """End the process now that its nodes are gone and rclpy is shut down (with `code`).

    What is left is the interpreter's own finalisation (modules torn down, the middleware's
    threads joined in its destructors), where nothing of Ghost runs. Under heavy load it took
    seconds: 2.3 s with three CPU burners on two cores, past ``ros2 launch``'s 5 s before
    SIGTERM with a whole graph (``make stress``). So flush what was written, and leave.
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
