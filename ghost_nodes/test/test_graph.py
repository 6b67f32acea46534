"""The graph declaration: who subscribes to what, and bad input refused."""

import json
from pathlib import Path

import pytest
import yaml

from ghost_nodes.graph import closed_loop_graph, expected_subscribers, overrides_yaml

CONFIG = Path(__file__).resolve().parents[2] / 'config'


def test_graph_has_one_process_per_node_and_the_recorder() -> None:
    names = [s.name for s in closed_loop_graph(CONFIG, scenario='smoke')]
    assert sorted(names) == sorted(['scenario', 'self_assessor', 'forward_predictor',
                                    'outcome_evaluator', 'calibrator', 'decision_policy',
                                    'action_emitter', 'recorder'])


def test_scenario_waits_for_every_subscription_of_the_graph() -> None:
    specs = closed_loop_graph(CONFIG, scenario='smoke')
    counts = expected_subscribers(specs)
    assert counts['/state/nav'] == 4  # assessor, predictor, evaluator, recorder
    assert counts['/actuations'] == 1  # the recorder
    scenario = next(s for s in specs if s.name == 'scenario')
    assert sorted(scenario.parameters['expected_subscribers']) == sorted(
        f'{t}={n}' for t, n in counts.items())


def test_unknown_scenario_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown scenario 'bogus'"):
        closed_loop_graph(CONFIG, scenario='bogus')


def test_overrides_file_is_scoped_to_its_node() -> None:
    spec = next(s for s in closed_loop_graph(CONFIG, scenario='smoke', bag_path='/tmp/x')
                if s.name == 'recorder')
    parameters = yaml.safe_load(overrides_yaml(spec))['recorder']['ros__parameters']
    assert parameters.pop('output') == '/tmp/x'
    # The configuration the run manifest records, as a JSON string (not a YAML mapping).
    assert json.loads(parameters.pop('run_config'))['loop']['min_outcomes'] == 4
    assert parameters == {}


def test_every_scenario_has_a_parameter_file() -> None:
    for name in ('smoke', 'drift_then_recovery', 'nominal', 'dropout'):
        data = yaml.safe_load((CONFIG / 'scenarios' / f'{name}.yaml').read_text())
        assert data['scenario']['ros__parameters']['scenario'] == name


def test_parameter_files_are_read_as_rclpy_reads_them(tmp_path) -> None:
    """/** first, then the node's own section, spelt `calibrator` or `/calibrator`."""
    from ghost_nodes.agent_config import pipeline_config_from_files

    custom = tmp_path / 'mine.yaml'
    custom.write_text('/**:\n  ros__parameters:\n    period_s: 0.2\n'
                      '/calibrator:\n  ros__parameters:\n    downgrade_threshold: 5\n')
    config = pipeline_config_from_files([CONFIG / 'ghost.yaml', custom])
    assert config.period_ns == 200_000_000
    assert config.loop.downgrade_threshold == 5
