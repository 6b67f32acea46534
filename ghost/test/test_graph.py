"""The graph declaration: who subscribes to what, and bad input refused."""

import json
from pathlib import Path

import pytest
import yaml

from ghost.bringup import (
    closed_loop_graph,
    expected_subscribers,
    GraphOptions,
    overrides_yaml,
    ros_arguments,
    Source,
)
from ghost_core.graph import PX4_OUT_TOPICS

CONFIG = Path(__file__).resolve().parents[2] / 'config'


def test_graph_has_one_process_per_node_and_the_recorder() -> None:
    names = [s.name for s in closed_loop_graph(CONFIG, GraphOptions(scenario='smoke'))]
    assert sorted(names) == sorted(['scenario', 'self_assessor', 'forward_predictor',
                                    'outcome_evaluator', 'calibrator', 'decision_policy',
                                    'action_emitter', 'monitor', 'recorder'])


def test_scenario_waits_for_every_subscription_of_the_graph() -> None:
    specs = closed_loop_graph(CONFIG, GraphOptions(scenario='smoke'))
    counts = expected_subscribers(specs)
    assert counts['/state/nav'] == 5  # assessor, predictor, evaluator, monitor, recorder
    assert counts['/actuations'] == 2  # the monitor, the recorder
    assert counts['/diagnostics'] == 1  # the recorder, from the monitor
    scenario = next(s for s in specs if s.name == 'scenario')
    # Relative names: the scenario resolves them in its namespace and through its remaps;
    # /diagnostics stays absolute (every namespace shares it).
    assert sorted(scenario.parameters['expected_subscribers']) == sorted(
        f'{t if t == "/diagnostics" else t.lstrip("/")}={n}' for t, n in counts.items())


def test_the_recorder_records_diagnostics_by_its_absolute_name() -> None:
    """By default (no topics parameter) and in a namespace; waited for only with a monitor."""
    from ghost_nodes.node_parameters import PARAMETERS

    default = next(p for p in PARAMETERS['recorder'] if p.name == 'topics').default
    assert '/diagnostics=diagnostic_msgs/msg/DiagnosticArray' in default
    assert 'actuations=ghost_interfaces/msg/ActionEmission' in default
    gated = next(s for s in closed_loop_graph(CONFIG, GraphOptions(
        scenario='smoke', namespace='uav1', gate='twist')) if s.name == 'recorder')
    assert '/diagnostics=diagnostic_msgs/msg/DiagnosticArray' in gated.parameters['topics']
    assert '/diagnostics' in gated.subscribes
    alone = closed_loop_graph(CONFIG, GraphOptions(scenario='smoke', monitor=False))
    assert '/diagnostics' not in expected_subscribers(alone)


def test_unknown_scenario_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown scenario 'bogus'"):
        closed_loop_graph(CONFIG, GraphOptions(scenario='bogus'))


def test_overrides_file_is_scoped_to_its_node() -> None:
    spec = next(s for s in closed_loop_graph(CONFIG, GraphOptions(scenario='smoke',
        bag_path='/tmp/x'))
                if s.name == 'recorder')
    parameters = yaml.safe_load(overrides_yaml(spec))['/**/recorder']['ros__parameters']
    assert parameters.pop('output') == '/tmp/x'
    # The configuration the run manifest records, as a JSON string (not a YAML mapping).
    assert json.loads(parameters.pop('run_config'))['loop']['min_outcomes'] == 4
    assert parameters.pop('graph_status') is True  # the scenario waits for every node's report
    assert parameters == {}


def test_every_scenario_has_a_parameter_file() -> None:
    for name in ('smoke', 'drift_then_recovery', 'nominal', 'dropout'):
        data = yaml.safe_load((CONFIG / 'scenarios' / f'{name}.yaml').read_text())
        assert data['/**/scenario']['ros__parameters']['scenario'] == name


def test_parameter_files_are_read_as_rclpy_reads_them(tmp_path) -> None:
    """/** first, then the node's own section, spelt `calibrator` or `/calibrator`."""
    from ghost_nodes.agent_config import pipeline_config_from_files

    custom = tmp_path / 'mine.yaml'
    custom.write_text('/**:\n  ros__parameters:\n    period_s: 0.2\n'
                      '/calibrator:\n  ros__parameters:\n    downgrade_threshold: 5\n')
    config = pipeline_config_from_files([CONFIG / 'ghost.yaml', custom])
    assert config.period_ns == 200_000_000
    assert config.loop.downgrade_threshold == 5


def test_a_later_files_wildcard_section_does_not_beat_a_nodes_own_section(tmp_path) -> None:
    """Rcl's order: sections where their key first appeared; later files update them in place.

    This is why launch_ros's '/**'-scoped dict of parameters lost against config/ghost.yaml
    (bag:= was ignored), and why the overrides files are scoped '/**/<node>'.
    """
    from ghost_nodes.agent_config import node_parameters

    first = tmp_path / 'first.yaml'
    first.write_text('/**:\n  ros__parameters:\n    a: 1\n    b: 1\n'
                     '/**/n:\n  ros__parameters:\n    a: 2\n')
    later = tmp_path / 'later.yaml'
    later.write_text('/**:\n  ros__parameters:\n    a: 3\n    b: 3\n'
                     '/**/n:\n  ros__parameters:\n    c: 4\n')
    assert node_parameters([first, later], 'n', {'a': 0, 'b': 0, 'c': 0}) == {
        'a': 2, 'b': 3, 'c': 4}


@pytest.mark.parametrize(('pattern', 'name', 'matches'), [
    ('/**', '/uav1/calibrator', True), ('/**/calibrator', '/calibrator', True),
    ('/**/calibrator', '/uav1/a/calibrator', True), ('calibrator', '/calibrator', True),
    ('calibrator', '/uav1/calibrator', False), ('/uav1/calibrator', '/uav1/calibrator', True),
    ('/*/calibrator', '/uav1/calibrator', True), ('/*/calibrator', '/calibrator', False),
    ('/uav2/calibrator', '/uav1/calibrator', False), ('/**/recorder', '/calibrator', False),
])
def test_parameter_file_keys_select_nodes_as_rcl_does(pattern, name, matches) -> None:
    from ghost_nodes.agent_config import node_name_matches

    assert node_name_matches(pattern, name) is matches


def test_without_the_scenario_no_scenario_file_is_loaded() -> None:
    specs = closed_loop_graph(CONFIG, GraphOptions(scenario='drift_then_recovery',
        source=Source.EXTERNAL))
    assert all(spec.param_files == (str(CONFIG / 'ghost.yaml'),) for spec in specs)
    recorder = next(s for s in specs if s.name == 'recorder')
    # The shipped configuration (K=3, W=32), not drift_then_recovery's (K=2, W=8).
    loop = json.loads(recorder.parameters['run_config'])['loop']
    assert (loop['downgrade_threshold'], loop['max_history']) == (3, 32)


def test_settings_reach_the_nodes_that_take_them_and_the_run_config(tmp_path) -> None:
    specs = closed_loop_graph(CONFIG, GraphOptions(scenario='smoke', settings={
        'period_s': 0.05, 'min_outcomes': 6, 'downgrade_threshold': 4, 'max_history': 16,
        'input_qos': 'reliable'}))
    by_name = {s.name: s for s in specs}
    assert by_name['forward_predictor'].parameters['period_s'] == 0.05
    assert {k: by_name['calibrator'].parameters[k] for k in (
        'min_outcomes', 'downgrade_threshold', 'max_history')} == {
        'min_outcomes': 6, 'downgrade_threshold': 4, 'max_history': 16}
    for name in ('self_assessor', 'forward_predictor', 'outcome_evaluator', 'recorder'):
        assert by_name[name].parameters['input_qos'] == 'reliable'
    config = json.loads(by_name['recorder'].parameters['run_config'])
    assert config['period_ns'] == 50_000_000
    assert config['loop'] == {'min_outcomes': 6, 'downgrade_threshold': 4, 'max_history': 16}


def test_the_accuracy_profile_setting_reaches_the_assessor_and_is_recorded_by_name() -> None:
    """ghost_run --accuracy-profile and launch accuracy_profile:= take this one path."""
    from ghost_core.profiles import accuracy_profile

    specs = closed_loop_graph(CONFIG, GraphOptions(scenario='smoke', settings={
        'accuracy_profile': 'rtk'}))
    by_name = {s.name: s for s in specs}
    assert by_name['self_assessor'].parameters['accuracy_profile'] == 'rtk'
    thresholds = json.loads(by_name['recorder'].parameters['run_config'])['thresholds']
    assert thresholds == accuracy_profile('rtk').thresholds().to_dict()
    assert thresholds['accuracy_profile'] == 'rtk'
    with pytest.raises(ValueError, match='accuracy_profile must be one of gnss, rtk, indoor'):
        closed_loop_graph(CONFIG, GraphOptions(settings={'accuracy_profile': 'lidar'}))


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match='input_qos must be one of best_effort, reliable'):
        closed_loop_graph(CONFIG, GraphOptions(settings={'input_qos': 'sometimes'}))
    with pytest.raises(ValueError, match="unknown setting 'rate'"):
        closed_loop_graph(CONFIG, GraphOptions(settings={'rate': 3}))
    with pytest.raises(ValueError, match='not a valid ROS namespace'):
        closed_loop_graph(CONFIG, GraphOptions(namespace='1uav'))
    with pytest.raises(ValueError, match='is not a file'):
        closed_loop_graph(CONFIG, GraphOptions(params_file='/nonexistent/ghost.yaml'))


def test_the_users_params_file_is_loaded_last_and_in_the_run_config(tmp_path) -> None:
    mine = tmp_path / 'mine.yaml'
    mine.write_text('/**/calibrator:\n  ros__parameters:\n    max_history: 64\n')
    specs = closed_loop_graph(CONFIG, GraphOptions(scenario='smoke', params_file=str(mine),
        settings={'max_history': 16}, namespace='uav1'))
    for spec in specs:
        assert spec.namespace == '/uav1'
        assert spec.user_param_files == (str(mine),)
        assert ros_arguments(spec, 'o.yaml')[-2 * len(spec.remaps) - 1] == str(mine)
    recorder = next(s for s in specs if s.name == 'recorder')
    assert json.loads(recorder.parameters['run_config'])['loop']['max_history'] == 64


def test_namespace_and_remaps_in_the_ros_arguments() -> None:
    specs = closed_loop_graph(CONFIG, GraphOptions(scenario='smoke', namespace='/uav2/',
        remaps={'/state/nav': '/ekf/odom', '/observations': 'rtk/fix'}))
    assessor = next(s for s in specs if s.name == 'self_assessor')
    args = ros_arguments(assessor)
    assert args[:5] == ['--ros-args', '-r', '__node:=self_assessor', '-r', '__ns:=/uav2']
    # Matched on the relative name, so the rule applies in the namespace.
    assert args[-2:] == ['-r', 'state/nav:=/ekf/odom']
    evaluator = next(s for s in specs if s.name == 'outcome_evaluator')
    assert ros_arguments(evaluator)[-4:] == ['-r', 'observations:=rtk/fix',
                                             '-r', 'state/nav:=/ekf/odom']


def test_px4_replaces_the_scenario_with_the_bridge() -> None:
    specs = closed_loop_graph(CONFIG, GraphOptions(scenario='drift_then_recovery',
        source=Source.PX4, remaps={'/state/nav': '/ekf/odom'}))
    names = [s.name for s in specs]
    assert 'scenario' not in names and names[0] == 'px4_bridge'
    bridge = specs[0]
    # It publishes the inputs and the vehicle status, remapped like every other node's, and
    # the PX4 samples each came from; no scenario file.
    assert bridge.publishes == ('/state/nav', '/observations', '/vehicle_status',
                                '/source_samples')
    assert bridge.remaps == (('/state/nav', '/ekf/odom'),)
    assert all(spec.param_files == (str(CONFIG / 'ghost.yaml'),) for spec in specs)
    with pytest.raises(ValueError, match="input_bag is the file of source 'input_bag'"):
        closed_loop_graph(CONFIG, GraphOptions(source=Source.PX4, input_bag='/tmp/in'))


def test_with_px4_the_recorder_records_the_bridges_inputs_and_configuration(tmp_path) -> None:
    """The fmu/out topics px4_bridge reads, and its parameters as the node gets them."""
    mine = tmp_path / 'mine.yaml'
    mine.write_text('/**/px4_bridge:\n  ros__parameters:\n    gps_delay_ms: 80.0\n')
    specs = closed_loop_graph(CONFIG, GraphOptions(source=Source.PX4, namespace='uav1',
        params_file=str(mine), remaps={'/state/nav': '/ekf/odom'},
        overrides={'px4_bridge': {'ekf2_hgt_ref': 1}}))
    recorder = next(s for s in specs if s.name == 'recorder')
    assert {f'{topic.removeprefix("/")}={type_name}' for topic, type_name
            in PX4_OUT_TOPICS.items()} <= set(recorder.parameters['topics'])
    assert set(PX4_OUT_TOPICS) <= set(recorder.subscribes)
    recorded = json.loads(recorder.parameters['run_config'])['px4_bridge']
    assert recorded['parameters'] == {'source': 'vehicle_odometry', 'gps_delay_ns': 80_000_000,
                                      'ekf2_hgt_ref': 1, 'max_attitude_age_ns': 100_000_000}
    assert recorded['topics']['/fmu/out/vehicle_odometry'] == '/uav1/fmu/out/vehicle_odometry'
    assert recorded['topics']['/source_samples'] == '/uav1/source_samples'
    assert recorded['topics']['/state/nav'] == '/ekf/odom'
    assert recorded['topics']['/vehicle_status'] == '/uav1/vehicle_status'
    scenario = closed_loop_graph(CONFIG, GraphOptions(scenario='smoke'))
    recorder = next(s for s in scenario if s.name == 'recorder')
    assert 'px4_bridge' not in json.loads(recorder.parameters['run_config'])


def test_the_architecture_page_shows_the_declared_wiring() -> None:
    """docs/architecture.md's node table says what ghost_core.graph.WIRING declares."""
    from ghost_core.graph import WIRING

    page = (CONFIG.parent / 'docs' / 'architecture.md').read_text(encoding='utf-8')
    rows = {}
    for line in page.splitlines():
        cells = [cell.strip() for cell in line.strip().strip('|').split('|')]
        if len(cells) == 4 and cells[0].startswith('`'):
            rows[cells[0].strip('`')] = cells[1:3]

    def topics(cell: str) -> tuple[str, ...]:
        return tuple(t.strip().strip('`') for t in cell.split(',') if t.strip() not in ('—', ''))

    for node, subscribes, publishes in WIRING:
        assert node in rows, f'docs/architecture.md has no row for {node}'
        assert topics(rows[node][0]) == subscribes, node
        assert topics(rows[node][1]) == publishes, node
