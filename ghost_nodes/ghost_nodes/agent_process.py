"""Single-process mode: Ghost's nodes in one process, on one executor (``ghost_agent``).

    ghost_agent --graph GRAPH.json [--executor events|single_threaded]
                [--delivery in_process|dds] [--ros-args ...]

``GRAPH.json`` (written by ``ghost.launcher`` for ``ghost_run --single-process`` and by
the launch file for ``single_process:=true``) lists the nodes: ``{"nodes": [{"name": ...,
"executable": ..., "ros_arguments": [...]}]}``, each node's ``ros_arguments`` exactly what
its own process would get (``ghost.bringup.ros_arguments``: name, namespace, parameter
files, remaps). Each node is the same class as in its own process, built with those
arguments as its own command line (``use_global_arguments=False``), so it has the same name,
parameters and topics: the graph publishes the same messages, and records and verifies the
same. What changes is the cost: one Python interpreter, one DDS participant's worth of
processes' scheduling, one executor, instead of one of each per node (docs/performance.md).

Which nodes go in: ``ghost_core.graph.IN_PROCESS_NODES`` (the agent's six, the monitor, the
bridge and the gate). The sources (scenario, players, the stand-in mission) stand for the
vehicle and the mission, and the recorder for ``ros2 bag record``: they keep processes of
their own, so the bag survives the agent's process.

Between the nodes of the process, messages are delivered in it (``--delivery in_process``,
the default; ``ghost_nodes.intra_process``: what rclcpp's intra-process communication does,
which rclpy lacks): a hop is a queue and a guard condition instead of serialisation, DDS and
deserialisation, and a topic nobody outside the process reads is not serialised at all.
``--delivery dds`` sends every hop through the middleware, as between processes.

``--executor events`` (the default) uses rclpy's ``EventsExecutor`` (``rclpy.experimental``,
Jazzy): the same callbacks, dispatched from middleware events instead of a wait set rebuilt in
Python on every spin, which is what lets one process serve 500 Hz (docs/performance.md);
``single_threaded`` is rclpy's SingleThreadedExecutor. Each node's ``executor`` parameter is
set to it, so that ``ros2 param get`` tells which one runs the node.
"""

import argparse
from collections.abc import Callable, Sequence
import importlib
import inspect
import json
import os
from pathlib import Path
import sys

from rclpy.node import Node
from rclpy.parameter import Parameter

from ghost_nodes.intra_process import IntraProcessBus
from ghost_nodes.node_base import GhostNode, run_nodes
from ghost_nodes.node_parameters import AGENT_EXECUTOR, EXECUTORS

__all__ = ['DELIVERIES', 'EXECUTORS', 'graph_document', 'main', 'node_class']
#: ``--delivery`` choices: between the nodes of the process, in it or through DDS.
DELIVERIES = ('in_process', 'dds')


def node_class(package: str, executable: str) -> Callable[..., GhostNode]:
    """The node class an executable of a Ghost package runs (``<package>.nodes.<executable>``)."""
    module_name = f'{package}.nodes.{executable}'
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        if err.name is not None and module_name.startswith(err.name):
            raise ValueError(f'{executable!r} is not a node of {package!r} ({module_name} '
                             'cannot be imported)') from None
        raise
    classes = [cls for _name, cls in inspect.getmembers(module, inspect.isclass)
               if issubclass(cls, GhostNode) and cls.__module__ == module.__name__]
    if len(classes) != 1:
        raise ValueError(f'{module_name} defines {len(classes)} node classes, expected 1')
    node: Callable[..., GhostNode] = classes[0]  # each takes rclpy's Node options
    return node


def graph_document(nodes: Sequence[tuple[str, str, str, Sequence[str]]]) -> str:
    """The ``--graph`` file for (name, package, executable, ros_arguments) of each node."""
    return json.dumps({'nodes': [
        {'name': name, 'package': package, 'executable': executable,
         'ros_arguments': list(arguments)}
        for name, package, executable, arguments in nodes]}, indent=2) + '\n'


def _factories(path: Path, bus: IntraProcessBus | None,
               executor: str) -> list[Callable[[], Node]]:
    try:
        document = json.loads(path.read_text(encoding='utf-8'))
    except (OSError, ValueError) as err:
        raise ValueError(f'--graph {path}: {err}') from None
    entries = document.get('nodes') if isinstance(document, dict) else None
    if not isinstance(entries, list) or not entries:
        raise ValueError(f'--graph {path}: expected {{"nodes": [...]}} with at least one node')
    factories: list[Callable[[], Node]] = []
    for index, entry in enumerate(entries):
        where = f'--graph {path}: nodes[{index}]'
        if not isinstance(entry, dict) or not isinstance(entry.get('package'), str) or \
                not isinstance(entry.get('executable'), str) or \
                not isinstance(entry.get('ros_arguments'), list) or not all(
                    isinstance(a, str) for a in entry['ros_arguments']):
            raise ValueError(f'{where}: needs "package" (str), "executable" (str) and '
                             '"ros_arguments" (list of str)')
        cls = node_class(entry['package'], entry['executable'])
        arguments = list(entry['ros_arguments'])

        def factory(cls: Callable[..., GhostNode] = cls, arguments: list[str] = arguments
                    ) -> Node:
            # The process's executor is every node's (over what the parameter files say).
            options = {'cli_args': arguments, 'use_global_arguments': False,
                       'parameter_overrides': [Parameter('executor', value=executor)]}
            if bus is None:
                return cls(**options)
            return cls(**options, intra_process_bus=bus)
        factories.append(factory)
    return factories


def main(argv: list[str] | None = None) -> None:
    """Entry point of ``ghost_agent``."""
    os.environ.setdefault('PYTHONUNBUFFERED', '1')
    args = sys.argv[1:] if argv is None else argv
    ros_args: list[str] = []
    if '--ros-args' in args:
        split = args.index('--ros-args')
        args, ros_args = args[:split], args[split:]
    parser = argparse.ArgumentParser(prog='ghost_agent', description=__doc__.split('\n\n')[0])
    parser.add_argument('--graph', type=Path, required=True,
                        help='JSON file listing the nodes and their ROS arguments')
    parser.add_argument('--executor', choices=EXECUTORS, default=AGENT_EXECUTOR,
                        help="'events' (rclpy.experimental.EventsExecutor, the default) or "
                             "'single_threaded' (rclpy's SingleThreadedExecutor)")
    parser.add_argument('--delivery', choices=DELIVERIES, default='in_process',
                        help="'in_process' (the default: between the nodes of this process "
                             "without DDS, ghost_nodes.intra_process) or 'dds' (every hop "
                             "through the middleware, as between processes)")
    options = parser.parse_args(args)
    bus = IntraProcessBus() if options.delivery == 'in_process' else None
    try:
        factories = _factories(options.graph, bus, options.executor)
    except ValueError as err:
        print(f'ghost_agent: error: {err}', file=sys.stderr)
        sys.exit(2)
    run_nodes(factories, ['ghost_agent', *ros_args], bus)
