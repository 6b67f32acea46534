"""The closed-loop node graph, declared once: used by the ROS 2 launch file and the no-ROS runner.

Both `launch/closed_loop.launch.py` and `ghost_nodes.launcher` build their processes from
``closed_loop_graph()``, so the two start the same nodes with the same parameter files,
parameter overrides and remaps. No rclpy here: the launch file imports this module too.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
import json
from pathlib import Path

from ghost_core.scenarios import SCENARIO_NAMES

__all__ = ['GHOST_TOPICS', 'INPUT_TOPICS', 'NodeSpec', 'SCENARIOS', 'closed_loop_graph',
           'expected_subscribers', 'overrides_yaml', 'ros_arguments']

#: Default topic names and types of SPEC section 2 (all remappable).
INPUT_TOPICS: Mapping[str, str] = {
    '/state/nav': 'nav_msgs/msg/Odometry',
    '/observations': 'geometry_msgs/msg/PoseWithCovarianceStamped',
}
GHOST_TOPICS: Mapping[str, str] = {
    '/self_assessment': 'ghost_interfaces/msg/BeliefSelfAssessment',
    '/predictions': 'ghost_interfaces/msg/ForwardPrediction',
    '/prediction_outcomes': 'ghost_interfaces/msg/PredictionOutcome',
    '/self_assessment/calibrated': 'ghost_interfaces/msg/CalibratedSelfAssessment',
    '/decisions': 'ghost_interfaces/msg/DecisionRationale',
    '/actuations': 'ghost_interfaces/msg/ActionEmission',
}

#: The nodes that produce the inputs and wait for the whole graph before the first one.
_SOURCES = frozenset({'scenario', 'input_player'})

#: The scenarios the scenario node can play (ghost_core's catalogue).
SCENARIOS = SCENARIO_NAMES


@dataclass(frozen=True)
class NodeSpec:
    """One process of the graph."""

    name: str
    executable: str
    package: str = 'ghost_nodes'
    param_files: tuple[str, ...] = ()
    parameters: Mapping[str, object] = field(default_factory=dict)
    remaps: tuple[tuple[str, str], ...] = ()
    subscribes: tuple[str, ...] = ()
    publishes: tuple[str, ...] = ()


# Which node subscribes to / publishes which default topic.
_WIRING: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ('scenario', (), ('/state/nav', '/observations')),
    ('self_assessor', ('/state/nav',), ('/self_assessment',)),
    ('forward_predictor', ('/state/nav',), ('/predictions',)),
    ('outcome_evaluator', ('/state/nav', '/predictions', '/observations'),
     ('/prediction_outcomes',)),
    ('calibrator', ('/self_assessment', '/prediction_outcomes'), ('/self_assessment/calibrated',)),
    ('decision_policy', ('/self_assessment/calibrated',), ('/decisions',)),
    ('action_emitter', ('/decisions',), ('/actuations',)),
)


def closed_loop_graph(
    config_dir: Path | str,
    scenario: str = 'drift_then_recovery',
    record: bool = True,
    bag_path: str = '',
    with_scenario: bool = True,
    remaps: Mapping[str, str] | None = None,
    overrides: Mapping[str, Mapping[str, object]] | None = None,
    extra_subscribers: Mapping[str, int] | None = None,
    input_bag: str = '',
) -> list[NodeSpec]:
    """The processes of the closed loop.

    ``config_dir`` holds ghost.yaml (every node's defaults) and scenarios/<scenario>.yaml (the
    scenario's parameters). ``remaps`` maps default topic names to the stack's own (e.g.
    ``{'/state/nav': '/ekf/odom'}``); ``overrides`` maps node name to parameter overrides;
    ``with_scenario`` False leaves the simulator out (a real estimator provides the inputs).
    ``extra_subscribers`` adds subscriptions outside the graph (e.g. a monitor on
    /actuations) that the scenario must also wait for before its first cycle.
    ``input_bag`` replaces the scenario with the ``input_player`` playing that recorded input
    bag; only ghost.yaml is loaded then (no scenario file).
    """
    if scenario not in SCENARIOS:
        raise ValueError(f'unknown scenario {scenario!r}; choose one of {", ".join(SCENARIOS)}')
    config = Path(config_dir)
    files: tuple[str, ...] = (str(config / 'ghost.yaml'),)
    if not input_bag:
        files += (str(config / 'scenarios' / f'{scenario}.yaml'),)
    remap_pairs = tuple(sorted((remaps or {}).items()))
    overrides = overrides or {}
    specs: list[NodeSpec] = []
    for name, subs, pubs in _WIRING:
        executable = name
        if name == 'scenario' and input_bag:
            name = executable = 'input_player'
        elif name == 'scenario' and not with_scenario:
            continue
        params: dict[str, object] = dict(overrides.get(name, {}))
        if name == 'scenario':
            params.setdefault('scenario', scenario)
        if name == 'input_player':
            params.setdefault('input', input_bag)
        # The scenario waits for the whole graph, so it resolves every topic name.
        used = set(subs) | set(pubs) if name not in _SOURCES else set(INPUT_TOPICS) | set(
            GHOST_TOPICS)
        specs.append(NodeSpec(
            name=name, executable=executable, param_files=files, parameters=params,
            remaps=tuple(pair for pair in remap_pairs if pair[0] in used),
            subscribes=subs, publishes=pubs))
    if record:
        topics = (*INPUT_TOPICS, *GHOST_TOPICS)
        params = {'output': bag_path, **overrides.get('recorder', {})}
        if 'run_config' not in params:
            params['run_config'] = _run_config(files)
        specs.append(NodeSpec(
            name='recorder', executable='recorder', param_files=files, parameters=params,
            remaps=tuple(pair for pair in remap_pairs if pair[0] in topics),
            subscribes=topics))
    counts = expected_subscribers(specs)
    for topic, extra in (extra_subscribers or {}).items():
        counts[topic] = counts.get(topic, 0) + extra
    return [replace(spec, parameters={
        'expected_subscribers': [f'{topic}={n}' for topic, n in sorted(counts.items())],
        **spec.parameters}) if spec.name in _SOURCES else spec for spec in specs]


def _run_config(files: tuple[str, ...]) -> str:
    """The agent's configuration from the parameter files, as JSON (for the run manifest)."""
    # Imported here: it loads the node modules (rclpy message types) to know their defaults;
    # the graph is only built where rclpy is installed (ghost_run, the launch file).
    from ghost_nodes.agent_config import pipeline_config_from_files

    return json.dumps(pipeline_config_from_files(files).to_dict(), sort_keys=True)


def expected_subscribers(specs: list[NodeSpec]) -> dict[str, int]:
    """Count the subscriptions of each default topic in the graph.

    The scenario waits for them before its first cycle, so nothing is lost to discovery.
    """
    counts: dict[str, int] = {}
    for spec in specs:
        for topic in spec.subscribes:
            counts[topic] = counts.get(topic, 0) + 1
    return counts


def ros_arguments(spec: NodeSpec, overrides_file: str | None = None) -> list[str]:
    """The ``--ros-args`` of one process: node name, parameter files, remaps.

    ``spec.parameters`` must be passed as ``overrides_file``, a YAML file scoped to the node
    (see ``overrides_yaml``): a bare ``-p name:=value`` is global and loses against the
    node-scoped values of the parameter files, while launch_ros passes them node-scoped too.
    """
    args = ['--ros-args', '-r', f'__node:={spec.name}']
    for path in spec.param_files:
        args += ['--params-file', path]
    if overrides_file is not None:
        args += ['--params-file', overrides_file]
    for src, dst in spec.remaps:
        args += ['-r', f'{src}:={dst}']
    return args


def overrides_yaml(spec: NodeSpec) -> str:
    """A parameter file holding ``spec.parameters`` for the node ``spec.name`` (JSON is YAML)."""
    return json.dumps({spec.name: {'ros__parameters': dict(spec.parameters)}}, indent=2) + '\n'
