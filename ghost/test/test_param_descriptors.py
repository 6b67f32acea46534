"""Parameter ranges live in rclpy's descriptors: visible over DDS, enforced by rclpy."""

import json
import os
import subprocess
import sys

from ghost.bringup import closed_loop_graph, GraphOptions
from ghost_core.parameters import at_least, below, non_negative, one_of, ParamSpec, positive
from ghost_nodes.node_base import descriptor

CONFIG = os.path.join(os.path.dirname(__file__), '..', '..', 'config')


def test_bounds_become_inclusive_ranges_and_the_rest_constraint_text() -> None:
    """Integer bounds are exact; a float's strict end is its closure plus a stated constraint."""
    count = descriptor(ParamSpec('n', 4, 'count', (at_least(1),)))
    assert [(r.from_value, r.to_value, r.step) for r in count.integer_range] == [
        (1, 2**63 - 1, 0)]
    assert count.floating_point_range == [] and count.additional_constraints == ''
    strict_int = descriptor(ParamSpec('n', 4, 'count', (positive,)))
    assert strict_int.integer_range[0].from_value == 1
    margin = descriptor(ParamSpec('m', 0.2, 'margin', (non_negative, below(1)), read_only=True))
    assert [(r.from_value, r.to_value) for r in margin.floating_point_range] == [(0.0, 1.0)]
    assert margin.additional_constraints == '< 1 (1 itself is refused)'
    assert margin.read_only and margin.description == 'margin'
    period = descriptor(ParamSpec('p', 0.1, 'period', (positive,)))
    assert period.floating_point_range[0].from_value == 0.0
    assert period.additional_constraints == '> 0 (0 itself is refused)'
    choice = descriptor(ParamSpec('q', 'a', 'qos', (one_of(('a', 'b')),)))
    assert choice.additional_constraints == 'one of a, b'
    assert choice.integer_range == [] and choice.floating_point_range == []


def test_a_running_node_describes_its_ranges_over_dds(ros_env, processes) -> None:
    """describe_parameters on a real calibrator and predictor returns the declared ranges."""
    from ghost.launcher import executable_path
    specs = {s.name: s for s in closed_loop_graph(CONFIG, GraphOptions(scenario='smoke',
        record=False))}
    driver = os.path.join(os.path.dirname(__file__), 'describe_param.py')
    described = {}
    for node, names in (('calibrator', ['min_outcomes', 'max_history']),
                        ('forward_predictor', ['period_s', 'process_noise', 'input_qos'])):
        processes.start([executable_path(specs[node]), '--ros-args', '-r', f'__node:={node}'],
                        ros_env)
        client = subprocess.run([sys.executable, driver, node, *names], env=ros_env, text=True,
                                capture_output=True, timeout=60, check=False)
        assert client.returncode == 0, client.stderr
        described[node] = json.loads(client.stdout)
    calibrator, predictor = described['calibrator'], described['forward_predictor']
    assert calibrator['min_outcomes']['integer_range'] == [[1, 1024, 0]]  # at most W's bound
    assert calibrator['min_outcomes']['read_only'] is False
    assert calibrator['max_history']['read_only'] is True
    assert calibrator['max_history']['description'].startswith('W: the window')
    assert predictor['process_noise']['floating_point_range'] == [[0.0, 10.0, 0.0]]  # Q's bound
    assert predictor['period_s']['floating_point_range'] == [[0.0, 'inf', 0.0]]
    assert predictor['period_s']['additional_constraints'] == '> 0 (0 itself is refused)'
    assert predictor['input_qos']['additional_constraints'] == 'one of best_effort, reliable'
