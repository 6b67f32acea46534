"""``ros2 launch ghost closed_loop.launch.py`` gives every node the parameters ghost_run gives it.

With the real Jazzy ``launch``/``launch_ros`` (the vendored tools, ``ros2_env``) and real
rclpy, no stand-in: ``launch_params.py`` evaluates the launch file as ``ros2 launch`` does,
up to the command line of each node process, and builds the command lines ghost_run starts
(``closed_loop_graph`` + ``GraphProcesses``); rclpy then resolves each command line's
parameter files as the node process would (rcl's YAML parser; ``/**``, ``/**/<node>`` and
``<node>`` sections in the order rclpy applies them). For every scenario and every launch
argument, each node must get the same parameter values (and executable and remaps) both ways,
and the values the argument means. The last test reads the parameters back from the nodes of
a real ``ros2 launch`` over their parameter services.
"""

import json
import os
from pathlib import Path
import signal
import subprocess
import sys
from typing import Any

import pytest

from ghost_core.scenarios import SCENARIO_NAMES

pytestmark = pytest.mark.ros2_tools

HERE = Path(__file__).resolve().parent
INPUT_READERS = ('self_assessor', 'forward_predictor', 'outcome_evaluator', 'recorder')


def _finite(graph: dict[str, Any]) -> dict[str, Any]:
    """``graph`` as a launch starts it: a finite run's source exits once the run is complete.

    The launch ends by itself (ghost_run stops the graph itself): the scenario or the input
    player gets ``exit_when_done``, and its /actuations reader is one more the graph waits for.
    """
    node = {'scenario': 'scenario', 'input_bag': 'input_player'}.get(
        graph.get('source', 'scenario'))
    if node is None:
        return graph
    overrides = dict(graph.get('overrides', {}))
    overrides[node] = {**overrides.get(node, {}), 'exit_when_done': True}
    return {**graph, 'overrides': overrides, 'extra_subscribers': {'/actuations': 1}}


def _evaluate(cases: list[dict[str, Any]], tmp_path: Path, env: dict[str, str],
              processes: Any) -> list[dict[str, Any]]:
    """Run launch_params.py over ``cases``; return its answer, one entry per case."""
    (tmp_path / 'tmp').mkdir(exist_ok=True)
    cases = [{**case, 'graph': None if case['graph'] is None else _finite(case['graph'])}
             for case in cases]
    (tmp_path / 'cases.json').write_text(json.dumps(cases))
    # The temporary parameter files of launch_ros, the launch file and the runner go here.
    env = {**env, 'TMPDIR': str(tmp_path / 'tmp')}
    proc = processes.start([sys.executable, str(HERE / 'launch_params.py'),
                            str(tmp_path / 'cases.json'), str(tmp_path / 'answer.json')], env)
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, f'launch_params.py failed:\n{out}\n{err}'
    return json.loads((tmp_path / 'answer.json').read_text())  # type: ignore[no-any-return]


def _nodes(side: dict[str, Any], what: str, tmp_path: Path) -> dict[str, Any]:
    """Per node: executable, remaps, parameters, and the parameter files that are not temporary."""
    assert 'error' not in side, f'{what}: {side["error"]}'
    temporary = str(tmp_path / 'tmp')
    return {name: {**node, 'files': [f for f in node['files'] if not f.startswith(temporary)]}
            for name, node in side.items()}


def _differences(launched: dict[str, Any], run: dict[str, Any]) -> list[str]:
    lines = []
    for name in sorted(set(launched) | set(run)):
        if name not in run or name not in launched:
            lines.append(f'{name}: only in {"ros2 launch" if name in launched else "ghost_run"}')
            continue
        for key in ('executable', 'files', 'remaps'):
            if launched[name][key] != run[name][key]:
                lines.append(f'{name} {key}: launch {launched[name][key]} != ghost_run '
                             f'{run[name][key]}')
        a, b = launched[name]['parameters'], run[name]['parameters']
        for param in sorted(set(a) | set(b)):
            if a.get(param) != b.get(param):
                lines.append(f'{name} {param}: launch {a.get(param)} != ghost_run {b.get(param)}')
    return lines


def _same_both_ways(result: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    """Assert ros2 launch and ghost_run give each node the same; return the launch's nodes."""
    launched = _nodes(result['launch'], 'ros2 launch', tmp_path)
    run = _nodes(result['runner'], 'ghost_run', tmp_path)
    differences = _differences(launched, run)
    assert not differences, 'ros2 launch and ghost_run differ:\n' + '\n'.join(differences)
    return launched


def _value(nodes: dict[str, Any], node: str, param: str) -> Any:
    kind, value = nodes[node]['parameters'][param]
    return value


def test_every_scenario_gives_each_node_the_runner_parameters(tmp_path, ros2_env,
                                                              processes) -> None:
    """scenario:=<each>: the same nodes, executables, files, remaps and values as ghost_run."""
    cases = [{'arguments': {'scenario': name},
              'graph': {'scenario': name, 'record': False}} for name in SCENARIO_NAMES]
    for result, name in zip(_evaluate(cases, tmp_path, ros2_env, processes), SCENARIO_NAMES,
                            strict=True):
        nodes = _same_both_ways(result, tmp_path)
        assert _value(nodes, '/scenario', 'scenario') == name
        assert '/recorder' not in nodes


def test_bag_argument_is_the_recorders_output(tmp_path, ros2_env, processes) -> None:
    """record:=true bag:=PATH: the recorder's ``output`` is PATH (not ghost.yaml's '')."""
    bag = str(tmp_path / 'bag')
    (result,) = _evaluate([{'arguments': {'scenario': 'smoke', 'record': 'true', 'bag': bag},
                            'graph': {'scenario': 'smoke', 'record': True, 'bag_path': bag}}],
                          tmp_path, ros2_env, processes)
    launched = _nodes(result['launch'], 'ros2 launch', tmp_path)
    assert _value(launched, '/recorder', 'output') == bag
    _same_both_ways(result, tmp_path)


def test_use_scenario_false_loads_no_scenario_file(tmp_path, ros2_env, processes) -> None:
    """use_scenario:=false with remapped inputs: no simulator and no scenarios/*.yaml anywhere."""
    bag = str(tmp_path / 'bag')
    (result,) = _evaluate([{
        'arguments': {'use_scenario': 'false', 'state_topic': '/ekf/odom',
                      'observations_topic': '/rtk/fix', 'record': 'true', 'bag': bag},
        'graph': {'source': 'external', 'record': True, 'bag_path': bag,
                  'remaps': {'/state/nav': '/ekf/odom', '/observations': '/rtk/fix'}}}],
        tmp_path, ros2_env, processes)
    launched = _nodes(result['launch'], 'ros2 launch', tmp_path)
    assert '/scenario' not in launched
    loaded = {name: [f for f in node['files'] if f'{os.sep}scenarios{os.sep}' in f]
              for name, node in launched.items()}
    assert not any(loaded.values()), f'scenario files loaded with use_scenario:=false: {loaded}'
    for name in INPUT_READERS:
        assert any(r.endswith(':=/ekf/odom') for r in launched[f'/{name}']['remaps']), name
    _same_both_ways(result, tmp_path)


def test_signing_key_and_enclaves_keep_the_runner_parameters(tmp_path, ros2_env,
                                                             processes) -> None:
    """signing_key:=KEY reaches the recorder; enclave_prefix:=/ghost only adds enclaves.

    Each node runs in the SROS2 enclave /ghost/<node>, with ghost_run's parameters.
    """
    key = str(tmp_path / 'ghost.pem')
    (result,) = _evaluate([{
        'arguments': {'record': 'true', 'signing_key': key, 'enclave_prefix': '/ghost'},
        'graph': {'record': True, 'overrides': {'recorder': {'signing_key': key}}}}],
        tmp_path, ros2_env, processes)
    launched = _same_both_ways(result, tmp_path)
    assert _value(launched, '/recorder', 'signing_key') == key
    assert {name: node['enclaves'] for name, node in launched.items()} == {
        name: [f'/ghost{name}'] for name in launched}


def test_agent_settings_reach_the_nodes_that_take_them(tmp_path, ros2_env, processes) -> None:
    """period_s, min_outcomes, downgrade_threshold, max_history, input_qos: as ghost_run's."""
    settings = {'period_s': 0.2, 'min_outcomes': 7, 'downgrade_threshold': 5,
                'max_history': 16, 'input_qos': 'reliable'}
    (result,) = _evaluate([{
        'arguments': {'scenario': 'smoke', 'record': 'true',
                      **{name: str(value) for name, value in settings.items()}},
        'graph': {'scenario': 'smoke', 'record': True, 'settings': settings}}],
        tmp_path, ros2_env, processes)
    launched = _nodes(result['launch'], 'ros2 launch', tmp_path)
    assert _value(launched, '/forward_predictor', 'period_s') == 0.2
    assert [_value(launched, '/calibrator', p)
            for p in ('min_outcomes', 'downgrade_threshold', 'max_history')] == [7, 5, 16]
    assert {name: _value(launched, f'/{name}', 'input_qos') for name in INPUT_READERS} == {
        name: 'reliable' for name in INPUT_READERS}
    _same_both_ways(result, tmp_path)


def test_accuracy_profile_and_input_reach_the_nodes(tmp_path, ros2_env, processes) -> None:
    """accuracy_profile:=rtk is the self-assessor's; input:=BAG speed:=2 plays BAG as --input.

    The recorded run configuration then holds rtk's thresholds, which the assessor judges with.
    """
    from input_bags import write_input_bag

    from ghost_core.profiles import accuracy_profile
    from ghost_core.scenarios import generate_scenario

    source = write_input_bag(tmp_path / 'in', generate_scenario('smoke'))
    profiled, played = _evaluate([
        {'arguments': {'scenario': 'smoke', 'record': 'true', 'accuracy_profile': 'rtk'},
         'graph': {'scenario': 'smoke', 'record': True,
                   'overrides': {'self_assessor': {'accuracy_profile': 'rtk'}}}},
        {'arguments': {'input': str(source), 'speed': '2', 'record': 'true'},
         'graph': {'source': 'input_bag', 'input_bag': str(source), 'record': True,
                   'overrides': {'input_player': {'speed': 2.0}}}},
    ], tmp_path, ros2_env, processes)
    launched = _same_both_ways(profiled, tmp_path)
    assert _value(launched, '/self_assessor', 'accuracy_profile') == 'rtk'
    thresholds = json.loads(_value(launched, '/recorder', 'run_config'))['thresholds']
    rtk = accuracy_profile('rtk')
    assert [thresholds[block] for block in ('position', 'velocity', 'orientation')] == [
        {'known_max_std': b.known_max_std, 'uncertain_max_std': b.uncertain_max_std}
        for b in (rtk.position, rtk.velocity, rtk.orientation)]
    launched = _same_both_ways(played, tmp_path)
    assert '/scenario' not in launched
    assert (_value(launched, '/input_player', 'input'),
            _value(launched, '/input_player', 'speed')) == (str(source), 2.0)


def test_gate_arguments_start_the_gate_with_its_remaps(tmp_path, ros2_env, processes) -> None:
    """gate:=twist with MAVROS's setpoint topic; px4:=true starts a PX4-mode gate by default.

    The recorder then records the gate's record (and, in PX4 mode, what it sent).
    """
    mavros = '/mavros/setpoint_velocity/cmd_vel_unstamped'
    twist, px4 = _evaluate([
        {'arguments': {'use_scenario': 'false', 'gate': 'twist', 'record': 'true',
                       'cmd_vel_topic': mavros, 'cmd_vel_in_topic': '/mission/cmd_vel'},
         'graph': {'source': 'external', 'gate': 'twist', 'record': True,
                   'remaps': {'/cmd_vel': mavros, '/cmd_vel_in': '/mission/cmd_vel'}}},
        {'arguments': {'px4': 'true', 'record': 'true',
                       'mission_setpoint_topic': '/mission/setpoint'},
         'graph': {'source': 'px4', 'record': True,
                   'remaps': {'/ghost/mission/trajectory_setpoint': '/mission/setpoint'}}},
    ], tmp_path, ros2_env, processes)
    launched = _same_both_ways(twist, tmp_path)
    assert _value(launched, '/command_gate', 'mode') == 'twist'
    assert sorted(launched['/command_gate']['remaps']) == sorted(
        [f'cmd_vel:={mavros}', 'cmd_vel_in:=/mission/cmd_vel'])
    assert 'ghost/gate=ghost_interfaces/msg/GateEmission' in _value(
        launched, '/recorder', 'topics')
    launched = _same_both_ways(px4, tmp_path)
    assert _value(launched, '/command_gate', 'mode') == 'px4'
    assert launched['/command_gate']['remaps'] == [
        'ghost/mission/trajectory_setpoint:=/mission/setpoint']
    assert {'ghost/gate=ghost_interfaces/msg/GateEmission',
            'fmu/in/trajectory_setpoint=px4_msgs/msg/TrajectorySetpoint'} <= set(
        _value(launched, '/recorder', 'topics'))


def test_mavros_argument_starts_mavros_bridge_recording_its_inputs(tmp_path, ros2_env,
                                                                   processes) -> None:
    """mavros:=true (with gate:=twist to MAVROS's setpoint topic): mavros_bridge, not a scenario.

    The recorder records the MAVROS topics the bridge reads (its fix_source's fix only) and
    the bridge's configuration; mavros:=true with px4:=true is refused.
    """
    mavros = '/mavros/setpoint_velocity/cmd_vel_unstamped'
    bag = str(tmp_path / 'flight_042')
    # docs/integration.md's lines (ArduPilot with the twist gate; PX4 with a parameter file).
    px4_file = _params(tmp_path, 'my_mavros', {'gps_delay_ms': 110.0})
    gpsraw_file = _params(tmp_path, 'gpsraw', {'fix_source': 'gpsraw'})
    live, px4, gpsraw, both = _evaluate([
        {'arguments': {'mavros': 'true', 'record': 'true', 'bag': bag, 'gate': 'twist',
                       'cmd_vel_in_topic': '/mission/cmd_vel', 'cmd_vel_topic': mavros},
         'graph': {'source': 'mavros', 'record': True, 'bag_path': bag, 'gate': 'twist',
                   'remaps': {'/cmd_vel': mavros, '/cmd_vel_in': '/mission/cmd_vel'}}},
        {'arguments': {'mavros': 'true', 'record': 'true', 'bag': bag,
                       'params_file': str(px4_file)},
         'graph': {'source': 'mavros', 'record': True, 'bag_path': bag,
                   'params_file': str(px4_file)}},
        {'arguments': {'mavros': 'true', 'record': 'true', 'params_file': str(gpsraw_file)},
         'graph': {'source': 'mavros', 'record': True, 'params_file': str(gpsraw_file)}},
        {'arguments': {'mavros': 'true', 'px4': 'true'}, 'graph': None},
    ], tmp_path, ros2_env, processes)
    launched = _same_both_ways(live, tmp_path)
    assert '/scenario' not in launched and '/mavros_bridge' in launched
    topics = set(_value(launched, '/recorder', 'topics'))
    assert {'mavros/local_position/odom=nav_msgs/msg/Odometry',
            'mavros/global_position/raw/fix=sensor_msgs/msg/NavSatFix',
            'mavros/state=mavros_msgs/msg/State',
            'mavros/extended_state=mavros_msgs/msg/ExtendedState',
            'source_samples=ghost_interfaces/msg/SourceSamples'} <= topics
    assert not any(topic.startswith('mavros/gpsstatus') for topic in topics)
    config = json.loads(_value(launched, '/recorder', 'run_config'))['mavros_bridge']
    assert config['parameters']['fix_source'] == 'navsat' and config['parameters'][
        'origin'] is None
    launched = _same_both_ways(px4, tmp_path)
    assert _value(launched, '/mavros_bridge', 'gps_delay_ms') == 110.0
    assert json.loads(_value(launched, '/recorder', 'run_config'))['mavros_bridge'][
        'parameters']['gps_delay_ns'] == 110_000_000
    launched = _same_both_ways(gpsraw, tmp_path)
    assert 'mavros/gpsstatus/gps1/raw=mavros_msgs/msg/GPSRAW' in _value(
        launched, '/recorder', 'topics')
    assert both['launch']['error'].endswith(
        "launch arguments px4:=true and mavros:=true: give one (each is the agent's inputs)")


def _params(folder: Path, name: str, values: dict[str, Any]) -> Path:
    """A user's parameter file ``name``.yaml setting ``values`` on mavros_bridge."""
    path = folder / f'{name}.yaml'
    path.write_text(json.dumps({'/**/mavros_bridge': {'ros__parameters': values}}))
    return path


def test_namespace_changes_names_not_values(tmp_path, ros2_env, processes) -> None:
    """namespace:=uav1: every node is /uav1/<node>, with the values of the root-namespace launch.

    config/ghost.yaml's node sections must match in a namespace too (a bare ``calibrator:``
    key only matches /calibrator).
    """
    bag = str(tmp_path / 'bag')
    root, spaced = _evaluate([
        {'arguments': {'scenario': 'smoke', 'record': 'true', 'bag': bag},
         'graph': {'scenario': 'smoke', 'record': True, 'bag_path': bag}},
        {'arguments': {'scenario': 'smoke', 'record': 'true', 'bag': bag, 'namespace': 'uav1'},
         'graph': {'scenario': 'smoke', 'record': True, 'bag_path': bag, 'namespace': 'uav1'}},
    ], tmp_path, ros2_env, processes)
    in_root = _nodes(root['launch'], 'ros2 launch', tmp_path)
    launched = _same_both_ways(spaced, tmp_path)
    assert sorted(launched) == sorted(f'/uav1{name}' for name in in_root)
    for name, node in in_root.items():
        parameters = dict(launched[f'/uav1{name}']['parameters'])
        if 'run_config' in parameters:
            # The recorded input topics are names: in the namespace; every value is the same.
            spaced_config = json.loads(parameters.pop('run_config')[1])
            root_config = json.loads(node['parameters']['run_config'][1])
            assert spaced_config.pop('input_topics') == {
                role: f'/uav1{topic}' for role, topic in root_config.pop('input_topics').items()}
            assert spaced_config == root_config
            parameters['run_config'] = node['parameters']['run_config']
        assert parameters == node['parameters'], name


@pytest.mark.parametrize(('section', 'node', 'param', 'value'), [
    ('/**/calibrator', 'calibrator', 'max_history', 12),
    ('calibrator', 'calibrator', 'min_outcomes', 6),
    ('/**', 'self_assessor', 'input_qos', 'reliable'),
])
def test_params_file_is_loaded_last(tmp_path, ros2_env, processes, section, node, param,
                                    value) -> None:
    """params_file:=PATH: a value of the user's file beats the configuration's and the defaults.

    Whatever the section: ``/**/<node>``, ``<node>`` or ``/**`` (when no node section of the
    configuration sets the parameter).
    """
    mine = tmp_path / 'mine.yaml'
    mine.write_text(json.dumps({section: {'ros__parameters': {param: value}}}))
    (result,) = _evaluate([{
        'arguments': {'scenario': 'smoke', 'record': 'true', 'params_file': str(mine)},
        'graph': {'scenario': 'smoke', 'record': True, 'params_file': str(mine)}}],
        tmp_path, ros2_env, processes)
    launched = _nodes(result['launch'], 'ros2 launch', tmp_path)
    run = _nodes(result['runner'], 'ghost_run', tmp_path)
    assert all(node['files'][-1] == str(mine) for node in launched.values())
    assert (_value(launched, f'/{node}', param), _value(run, f'/{node}', param)) == (
        value, value), "(ros2 launch's value, ghost_run's value)"
    _same_both_ways(result, tmp_path)


def test_running_nodes_hold_the_resolved_parameters(tmp_path, ros2_env, processes) -> None:
    """The nodes of a real ``ros2 launch`` hold the values the evaluation resolves.

    Read over their parameter services; among them the recorder's output is bag:=.
    """
    bag = str(tmp_path / 'bag')
    arguments = {'use_scenario': 'false', 'record': 'true', 'bag': bag, 'min_outcomes': '7',
                 'input_qos': 'reliable'}
    (result,) = _evaluate([{'arguments': arguments, 'graph': None}], tmp_path, ros2_env,
                          processes)
    expected = _nodes(result['launch'], 'ros2 launch', tmp_path)
    log = tmp_path / 'launch.log'
    with log.open('w') as stream:
        launch = processes.start(
            ['ros2', 'launch', 'ghost', 'closed_loop.launch.py',
             *(f'{k}:={v}' for k, v in arguments.items())],
            {**ros2_env, 'TMPDIR': str(tmp_path / 'tmp')}, stdout=stream,
            stderr=subprocess.STDOUT, cwd=tmp_path)
    client = processes.start([sys.executable, str(HERE / 'param_client.py'),
                              str(tmp_path / 'params.json'), *sorted(expected),
                              '--timeout', '60'], ros2_env)
    out, err = client.communicate(timeout=90)
    assert client.returncode == 0, f'{out}\n{err}\nlaunch:\n{log.read_text()[-4000:]}'
    assert launch.poll() is None, log.read_text()[-4000:]
    os.killpg(launch.pid, signal.SIGINT)
    launch.wait(timeout=30)
    running = json.loads((tmp_path / 'params.json').read_text())
    assert running['/recorder']['output'] == bag
    assert running['/calibrator']['min_outcomes'] == 7
    mismatches = [
        f'{name} {param}: running {value!r}, resolved {expected[name]["parameters"][param][1]!r}'
        for name, params in running.items() for param, value in params.items()
        if param in expected[name]['parameters']
        and expected[name]['parameters'][param][1] != value]
    assert not mismatches, '\n'.join(mismatches)
