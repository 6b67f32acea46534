"""Test helper: the parameters each node gets from ``ros2 launch`` and from ghost_run.

Run in the vendored ROS 2 tools' environment (the ``ros2_env`` fixture): the real ``launch``,
``launch_ros`` and ``ros2launch`` are importable there. ``argv[1]`` is a JSON file holding a
list of cases, each ``{"arguments": {name: value}, "graph": {...} | null}`` (the answer goes
to the JSON file ``argv[2]``: launch logs to stdout):

* launch side: ghost's launch/closed_loop.launch.py, found in the package share as ``ros2
  launch ghost`` finds it, is included with the arguments exactly as ros2launch includes it
  (``IncludeLaunchDescription`` + ``parse_launch_arguments``), and every entity is visited as
  ``LaunchService`` visits it (``visit_all_entities_and_collect_futures``): the declared
  arguments check their choices and set their defaults, the OpaqueFunction builds the Node
  actions, and each Node action builds its command line (parameter files, the temporary file
  of a ``parameters=[dict]``, remaps, namespace). Only the process spawn
  (``ExecuteLocal.execute``) is replaced, by recording the final command line.
* runner side (``graph`` not null): ``ghost.bringup.closed_loop_graph(config_dir,
  GraphOptions(**graph))`` (``source`` by its value) started by
  ``ghost.launcher.GraphProcesses`` (what ghost_run does), with
  ``subprocess.Popen`` replaced by recording the argv.

Neither side's parameters are modelled: each command line is handed to rclpy, which creates a
node from its ROS arguments (``automatically_declare_parameters_from_overrides``), so rcl's
YAML parser and rclpy's matching of node sections (``/**``, ``/**/name``, ``name``) decide
the values, as in the real process. Writes one JSON object per case: ``{"launch": NODES |
{"error": text}, "runner": NODES | {"error": text} | null}``, NODES mapping each node's fully
qualified name to ``{"executable", "files", "remaps", "enclaves", "parameters": {name:
[type, value]}}``.
"""

import json
import os
from pathlib import Path
import sys
import tempfile
from typing import Any

from ament_index_python.packages import get_package_share_directory
import launch
from launch.actions.execute_local import ExecuteLocal
from launch.utilities import visit_all_entities_and_collect_futures
import rclpy
from ros2launch.api.api import parse_launch_arguments

from ghost import launcher
from ghost.bringup import closed_loop_graph, GraphOptions, Source

_RECORDED: list[list[str]] = []


def _record_instead_of_spawning(self: ExecuteLocal, context: Any) -> None:
    self.prepare(context)  # substitutions performed: the command line as it would run
    _RECORDED.append(list(self.process_details['cmd']))


class _RecordedPopen:
    """Stands in for the node process ghost_run would start."""

    pid = 0
    returncode = 0

    def __init__(self, argv: list[str], **_kwargs: object) -> None:
        _RECORDED.append([str(a) for a in argv])

    def poll(self) -> int:
        return 0


def _launch_commands(arguments: dict[str, str]) -> list[list[str]]:
    path = os.path.join(get_package_share_directory('ghost'), 'launch', 'closed_loop.launch.py')
    argv = [f'{name}:={value}' for name, value in arguments.items()]
    description = launch.LaunchDescription([launch.actions.IncludeLaunchDescription(
        launch.launch_description_sources.AnyLaunchDescriptionSource(path),
        launch_arguments=parse_launch_arguments(argv))])
    context = launch.LaunchContext(argv=argv)
    _RECORDED.clear()
    visit_all_entities_and_collect_futures(description, context)
    return list(_RECORDED)


def _runner_commands(graph: dict[str, Any], log_dir: Path) -> list[list[str]]:
    config_dir = os.path.join(get_package_share_directory('ghost'), 'config')
    options = dict(graph)
    source = Source(options.pop('source', Source.SCENARIO.value))
    specs = closed_loop_graph(config_dir, GraphOptions(source=source, **options))
    _RECORDED.clear()
    real_popen = launcher.subprocess.Popen
    launcher.subprocess.Popen = _RecordedPopen  # type: ignore[assignment, misc]
    try:
        processes = launcher.GraphProcesses(specs, log_dir)
        processes.start()
        for log in processes._logs:  # noqa: SLF001 (the runner keeps them open for the nodes)
            log.close()
    finally:
        launcher.subprocess.Popen = real_popen  # type: ignore[misc]
    return list(_RECORDED)


def _plain(value: Any) -> Any:
    if isinstance(value, (str, bool, int, float)) or value is None:
        return value
    if isinstance(value, bytes):
        return list(value)
    return [_plain(v) for v in value]


def _what_the_node_gets(command: list[str]) -> tuple[str, dict[str, Any]]:
    """The node's fully qualified name and parameters, as rclpy resolves its ROS arguments."""
    ros_args = command[1:]
    node = rclpy.create_node(
        'ghost_param_probe', cli_args=ros_args, use_global_arguments=False,
        automatically_declare_parameters_from_overrides=True, start_parameter_services=False,
        enable_rosout=False)
    try:
        names = sorted(node.list_parameters([], 0).names)
        parameters = {p.name: [p.type_.name, _plain(p.value)]
                      for p in node.get_parameters(names)}
        files = [ros_args[i + 1] for i, a in enumerate(ros_args) if a == '--params-file']
        remaps = [ros_args[i + 1] for i, a in enumerate(ros_args)
                  if a in ('-r', '--remap') and not ros_args[i + 1].startswith('__')]
        enclaves = [ros_args[i + 1] for i, a in enumerate(ros_args) if a in ('-e', '--enclave')]
        return node.get_fully_qualified_name(), {
            'executable': os.path.realpath(command[0]), 'files': files, 'remaps': remaps,
            'enclaves': enclaves, 'parameters': parameters}
    finally:
        node.destroy_node()


def _nodes(commands: list[list[str]]) -> dict[str, Any]:
    nodes: dict[str, Any] = {}
    for command in commands:
        name, got = _what_the_node_gets(command)
        if name in nodes:
            raise RuntimeError(f'two processes are node {name}')
        nodes[name] = got
    return nodes


def main() -> int:
    cases = json.loads(Path(sys.argv[1]).read_text())
    ExecuteLocal.execute = _record_instead_of_spawning  # type: ignore[method-assign]
    rclpy.init(args=[])
    out = []
    try:
        for case in cases:
            result: dict[str, Any] = {}
            try:
                result['launch'] = _nodes(_launch_commands(case['arguments']))
            except Exception as err:  # noqa: BLE001 (reported to the test, which judges it)
                result['launch'] = {'error': f'{type(err).__name__}: {err}'}
            result['runner'] = None
            if case.get('graph') is not None:
                try:
                    log_dir = Path(tempfile.mkdtemp(prefix='ghost_run_argv_'))
                    result['runner'] = _nodes(_runner_commands(case['graph'], log_dir))
                except Exception as err:  # noqa: BLE001
                    result['runner'] = {'error': f'{type(err).__name__}: {err}'}
            out.append(result)
    finally:
        rclpy.try_shutdown()
    Path(sys.argv[2]).write_text(json.dumps(out))
    return 0


if __name__ == '__main__':
    sys.exit(main())
