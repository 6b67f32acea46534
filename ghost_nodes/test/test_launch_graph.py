"""launch/closed_loop.launch.py starts exactly the graph the no-ROS runner starts.

ROS 2's `launch`/`launch_ros` cannot be installed here, so this test loads the launch file
against minimal stand-ins that record what it declares (arguments, Node actions), evaluates
it with given launch arguments, and compares every Node action with ghost_nodes.graph (the
declaration the runner uses): the same executables, names, parameter files, parameter
overrides and remaps. Only the launch API surface the file uses is imitated.
"""

import importlib.util
from pathlib import Path
import sys
import types

import pytest

from ghost_core.scenarios import SCENARIO_NAMES
from ghost_nodes.graph import closed_loop_graph, ros_arguments

ROOT = Path(__file__).resolve().parents[2]
LAUNCH_FILE = ROOT / 'launch' / 'closed_loop.launch.py'
CONFIG = ROOT / 'config'


class _Recorded:
    def __init__(self, *args, **kwargs) -> None:
        self.args, self.kwargs = args, kwargs


class _LaunchConfiguration:
    def __init__(self, name: str) -> None:
        self.name = name

    def perform(self, context) -> str:
        return context.launch_configurations[self.name]


def _stand_ins(monkeypatch) -> None:
    launch = types.ModuleType('launch')
    launch.LaunchDescription = lambda entities: list(entities)
    actions = types.ModuleType('launch.actions')
    actions.DeclareLaunchArgument = _Recorded
    actions.OpaqueFunction = _Recorded
    substitutions = types.ModuleType('launch.substitutions')
    substitutions.LaunchConfiguration = _LaunchConfiguration
    launch_ros = types.ModuleType('launch_ros')
    ros_actions = types.ModuleType('launch_ros.actions')
    ros_actions.Node = _Recorded
    ament = types.ModuleType('ament_index_python')
    packages = types.ModuleType('ament_index_python.packages')
    packages.get_package_share_directory = lambda name: str(ROOT / 'ghost_share_unused')
    for name, module in {'launch': launch, 'launch.actions': actions,
                         'launch.substitutions': substitutions, 'launch_ros': launch_ros,
                         'launch_ros.actions': ros_actions, 'ament_index_python': ament,
                         'ament_index_python.packages': packages}.items():
        monkeypatch.setitem(sys.modules, name, module)


def _evaluate(monkeypatch, **arguments: str) -> list[_Recorded]:
    _stand_ins(monkeypatch)
    spec = importlib.util.spec_from_file_location('closed_loop_launch', LAUNCH_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    entities = module.generate_launch_description()
    declared = {e.args[0]: e.kwargs['default_value'] for e in entities
                if 'default_value' in e.kwargs}
    context = types.SimpleNamespace(launch_configurations={**declared, **arguments})
    (opaque,) = [e for e in entities if 'function' in e.kwargs]
    return opaque.kwargs['function'](context)


def _as_runner_argv(node: _Recorded) -> tuple[str, str, list[str]]:
    """What a launch_ros Node action amounts to, in the runner's terms."""
    *files, overrides = node.kwargs['parameters']
    return (node.kwargs['executable'], node.kwargs['name'],
            [*files, repr(sorted(overrides.items())), *map(repr, node.kwargs['remappings'])])


@pytest.mark.parametrize('arguments', [
    {'scenario': 'smoke', 'record': 'true', 'bag': '/tmp/b'},
    {'scenario': 'drift_then_recovery'},
    {'use_scenario': 'false', 'state_topic': '/ekf/odom', 'observations_topic': '/rtk/pose',
     'record': 'true'},
])
def test_launch_file_declares_the_runner_graph(monkeypatch, arguments) -> None:
    arguments = {'config_dir': str(CONFIG), **arguments}
    nodes = _evaluate(monkeypatch, **arguments)
    truthy = ('true',)
    remaps = {k: v for k, v in (('/state/nav', arguments.get('state_topic')),
                                ('/observations', arguments.get('observations_topic'))) if v}
    specs = closed_loop_graph(
        CONFIG, scenario=arguments.get('scenario', 'drift_then_recovery'),
        record=arguments.get('record', 'false') in truthy, bag_path=arguments.get('bag', ''),
        with_scenario=arguments.get('use_scenario', 'true') in truthy, remaps=remaps)
    assert [n.kwargs['package'] for n in nodes] == [s.package for s in specs]
    launched = [_as_runner_argv(n) for n in nodes]
    expected = [(s.executable, s.name, [*s.param_files, repr(sorted(s.parameters.items())),
                                        *map(repr, s.remaps)]) for s in specs]
    assert launched == expected
    # And the runner turns the same specs into --ros-args carrying the same files and remaps.
    for spec in specs:
        argv = ros_arguments(spec, 'overrides.yaml')
        assert argv[argv.index('-r') + 1] == f'__node:={spec.name}'
        for path in spec.param_files:
            assert path in argv
        for src, dst in spec.remaps:
            assert f'{src}:={dst}' in argv


def test_launch_arguments_cover_every_scenario(monkeypatch) -> None:
    _stand_ins(monkeypatch)
    spec = importlib.util.spec_from_file_location('closed_loop_launch', LAUNCH_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    entities = module.generate_launch_description()
    scenario_arg = next(e for e in entities if e.args and e.args[0] == 'scenario')
    assert set(scenario_arg.kwargs['choices']) == set(SCENARIO_NAMES) == {
        'smoke', 'drift_then_recovery', 'nominal', 'dropout', 'gnss_outage'}


def test_remapped_graph_renames_only_the_inputs(monkeypatch) -> None:
    nodes = _evaluate(monkeypatch, config_dir=str(CONFIG), state_topic='/ekf/odom',
                      use_scenario='false', record='true')
    names = [n.kwargs['name'] for n in nodes]
    assert 'scenario' not in names
    for node in nodes:
        for src, dst in node.kwargs['remappings']:
            assert (src, dst) == ('/state/nav', '/ekf/odom')


def test_enclave_prefix_gives_each_node_its_own_sros2_enclave(monkeypatch) -> None:
    """enclave_prefix:=/ghost runs every node with --enclave /ghost/<node>; '' adds nothing."""
    nodes = _evaluate(monkeypatch, config_dir=str(CONFIG), enclave_prefix='/ghost/',
                      record='true')
    assert {n.kwargs['name']: n.kwargs['ros_arguments'] for n in nodes} == {
        n.kwargs['name']: ['--enclave', f'/ghost/{n.kwargs["name"]}'] for n in nodes}
    assert 'recorder' in {n.kwargs['name'] for n in nodes}
    assert all('ros_arguments' not in n.kwargs
               for n in _evaluate(monkeypatch, config_dir=str(CONFIG)))
