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

__all__ = ['AGENT_PROCESS', 'CMD_VEL_IN_TOPIC', 'GATE_MODES', 'GATE_TOPIC', 'GHOST_TOPICS',
           'IN_PROCESS_NODES', 'INPUT_QOS_CHOICES',
           'INPUT_TOPICS', 'MISSION_SETPOINT_TOPIC', 'NodeSpec', 'PX4_IN_TOPICS', 'WIRING',
           'PX4_OUT_TOPICS', 'SCENARIOS',
           'closed_loop_graph', 'expected_subscribers', 'node_key', 'normalise_namespace',
           'overrides_yaml', 'parameter_files', 'relative_topic', 'remap_rules', 'ros_arguments',
           'topic_in_namespace']

#: Default topic names and types of SPEC section 2 (all remappable), as a graph in the root
#: namespace resolves them. The nodes use them relative (``relative_topic``), so a graph in
#: namespace ``uav1`` publishes /uav1/actuations and so on.
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

#: The command gate's record of every output it sent (ghost_interfaces/GateEmission).
GATE_TOPIC = '/ghost/gate'
#: What the mission wants to send, into the gate: PX4 mode, and the generic (Twist) mode.
MISSION_SETPOINT_TOPIC = '/ghost/mission/trajectory_setpoint'
CMD_VEL_IN_TOPIC = '/cmd_vel_in'
#: PX4's uXRCE-DDS topics (px4_msgs): what px4_bridge reads, and what the gate writes.
PX4_OUT_TOPICS: Mapping[str, str] = {
    '/fmu/out/vehicle_odometry': 'px4_msgs/msg/VehicleOdometry',
    '/fmu/out/vehicle_local_position': 'px4_msgs/msg/VehicleLocalPosition',
    '/fmu/out/vehicle_gps_position': 'px4_msgs/msg/SensorGps',
    '/fmu/out/vehicle_status': 'px4_msgs/msg/VehicleStatus',
}
PX4_IN_TOPICS: Mapping[str, str] = {
    '/fmu/in/trajectory_setpoint': 'px4_msgs/msg/TrajectorySetpoint',
    '/fmu/in/offboard_control_mode': 'px4_msgs/msg/OffboardControlMode',
    '/fmu/in/vehicle_command': 'px4_msgs/msg/VehicleCommand',
}
#: Values of ``closed_loop_graph(gate=...)`` (launch ``gate:=``, ``ghost_run --gate``).
GATE_MODES = ('none', 'px4', 'twist')

#: The nodes single-process mode runs in one process (ghost_nodes.agent_process): the agent,
#: the monitor, the bridge and the gate. The sources stand for the vehicle and the mission, and
#: the recorder for ``ros2 bag record``: they keep processes of their own.
IN_PROCESS_NODES = frozenset({
    'self_assessor', 'forward_predictor', 'outcome_evaluator', 'calibrator', 'decision_policy',
    'action_emitter', 'monitor', 'px4_bridge', 'command_gate'})
#: The name of that one process (its log, its entry in the launcher).
AGENT_PROCESS = 'ghost_agent'

#: The nodes that produce the inputs and wait for the whole graph before the first one.
_SOURCES = frozenset({'scenario', 'input_player', 'px4_log_player'})

#: The scenarios the scenario node can play (ghost_core's catalogue).
SCENARIOS = SCENARIO_NAMES

#: Values of the nodes' ``input_qos`` parameter (ghost_nodes.qos.input_qos).
INPUT_QOS_CHOICES = ('best_effort', 'reliable')

#: Nodes that subscribe to the inputs, and so take ``input_qos``.
_INPUT_READERS = ('self_assessor', 'forward_predictor', 'outcome_evaluator', 'recorder')

#: Which node takes which agent setting (launch argument / ghost_run flag).
_SETTING_NODES: Mapping[str, tuple[str, ...]] = {
    'period_s': ('forward_predictor',),
    'min_outcomes': ('calibrator',),
    'downgrade_threshold': ('calibrator',),
    'max_history': ('calibrator',),
    'input_qos': _INPUT_READERS,
}


def relative_topic(topic: str) -> str:
    """The name a node uses for a default topic: without the root '/', so a namespace applies."""
    return topic.removeprefix('/')


def normalise_namespace(namespace: str) -> str:
    """``'uav1'``, ``'/uav1/'`` -> ``'/uav1'``; ``''`` or ``'/'`` -> ``''`` (the root).

    ``ValueError`` for a name ROS would refuse (REP-144 tokens: letters, digits, underscores,
    not starting with a digit, no empty token).
    """
    stripped = namespace.strip().strip('/')
    if not stripped:
        return ''
    for token in stripped.split('/'):
        if not token or not (token[0].isalpha() or token[0] == '_') or not all(
                c.isalnum() or c == '_' for c in token) or not token.isascii():
            raise ValueError(f'namespace {namespace!r} is not a valid ROS namespace (tokens of '
                             'letters, digits and underscores, not starting with a digit)')
    return '/' + stripped


def topic_in_namespace(topic: str, namespace: str) -> str:
    """The fully qualified name of a default topic for a graph in ``namespace``."""
    return f'{normalise_namespace(namespace)}/{relative_topic(topic)}'


def node_key(name: str) -> str:
    """The parameter-file key of a node, whatever its namespace (rcl's ``/**/name`` pattern).

    A bare ``name:`` section only matches the node in the root namespace; ``/**/name`` matches
    it in every namespace, so one file serves ``namespace:=uav1`` and ``uav2`` alike.
    """
    return f'/**/{name}'


@dataclass(frozen=True)
class NodeSpec:
    """One process of the graph."""

    name: str
    executable: str
    package: str = 'ghost_nodes'
    namespace: str = ''
    param_files: tuple[str, ...] = ()
    parameters: Mapping[str, object] = field(default_factory=dict)
    user_param_files: tuple[str, ...] = ()
    remaps: tuple[tuple[str, str], ...] = ()
    subscribes: tuple[str, ...] = ()
    publishes: tuple[str, ...] = ()


#: Which node subscribes to / publishes which default topic: the one home of the graph's edges
#: (the runner, the launch file's readiness and the monitor's diagnostics derive from it).
WIRING: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ('scenario', (), ('/state/nav', '/observations')),
    ('self_assessor', ('/state/nav', '/observations'), ('/self_assessment',)),
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
    namespace: str = '',
    settings: Mapping[str, object] | None = None,
    params_file: str = '',
    monitor: bool = True,
    px4: bool = False,
    gate: str = '',
    px4_ulog: str = '',
    graph_status: bool | None = None,
) -> list[NodeSpec]:
    """The processes of the closed loop.

    ``config_dir`` holds ghost.yaml (every node's defaults) and scenarios/<scenario>.yaml (the
    scenario's parameters, loaded only when the scenario runs). ``remaps`` maps default topic
    names to the stack's own (e.g. ``{'/state/nav': '/ekf/odom'}``; a relative target
    resolves in ``namespace``); ``overrides`` maps node name to parameter overrides;
    ``with_scenario`` False leaves the simulator out (a real estimator provides the inputs).
    ``extra_subscribers`` adds subscriptions outside the graph (e.g. a monitor on
    /actuations) that the scenario must also wait for before its first cycle.
    ``input_bag`` replaces the scenario with the ``input_player`` playing that recorded input
    bag; only ghost.yaml is loaded then (no scenario file).
    ``namespace`` puts every node (and so every topic) in that namespace. ``settings`` sets
    the agent settings of the launch file's arguments (``period_s``, ``min_outcomes``,
    ``downgrade_threshold``, ``max_history``, ``input_qos``) on the nodes that take them, over
    the configuration files. ``params_file`` is the user's own parameter file, loaded last.
    ``px4`` replaces the scenario with ``px4_bridge``, which turns PX4's uXRCE-DDS topics
    (``fmu/out/...``) into the two inputs; no scenario file is loaded then.
    ``monitor`` starts the online monitor (``/diagnostics``, BAUD-v1/ERUR-v1 on the live
    topics), which reads every topic of the graph.
    ``gate`` starts the ``command_gate`` between the mission and the vehicle: ``'px4'``
    (``ghost/mission/trajectory_setpoint`` -> ``fmu/in/...``), ``'twist'`` (``cmd_vel_in`` ->
    ``cmd_vel``) or ``'none'``; ``''`` means ``'px4'`` with ``px4`` and ``'none'`` otherwise.
    The recorder then records the gate's record (``ghost/gate``) and, in PX4 mode, the
    setpoints and vehicle commands it sent.
    ``px4_ulog`` plays that PX4 flight log as PX4 would (``px4_log_player`` on ``fmu/out/...``)
    into ``px4_bridge`` and a PX4-mode gate fed by a stand-in mission (``mission_setpoints``).
    ``graph_status`` turns on every node's readiness report (``ghost/graph_status``, the
    parameter of the same name); ``None`` turns it on when a source (scenario, input player,
    log player) is in the graph, since a source waits for those reports before its first
    message, and leaves it off otherwise (a live vehicle: nothing waits).
    """
    if scenario not in SCENARIOS:
        raise ValueError(f'unknown scenario {scenario!r}; choose one of {", ".join(SCENARIOS)}')
    if px4_ulog and input_bag:
        raise ValueError('px4_ulog and input_bag both replace the scenario: choose one')
    if px4_ulog and not Path(px4_ulog).is_file():
        raise ValueError(f'px4_ulog {px4_ulog!r} is not a file')
    px4 = px4 or bool(px4_ulog)
    if px4 and input_bag:
        raise ValueError('px4 and input_bag both replace the scenario: choose one')
    if gate not in ('', *GATE_MODES):
        raise ValueError(f'gate must be one of {", ".join(GATE_MODES)}, got {gate!r}')
    gate = gate or ('px4' if px4 else 'none')
    if gate == 'px4' and not px4:
        raise ValueError("gate 'px4' holds the vehicle at PX4's local position: it needs px4 "
                         "(px4_bridge); use gate 'twist' for a stack without PX4")
    with_scenario = with_scenario and not px4
    namespace = normalise_namespace(namespace)
    config = Path(config_dir)
    files: tuple[str, ...] = (str(config / 'ghost.yaml'),)
    if with_scenario and not input_bag:
        files += (str(config / 'scenarios' / f'{scenario}.yaml'),)
    user_files: tuple[str, ...] = ()
    if params_file:
        if not Path(params_file).is_file():
            raise ValueError(f'params_file {params_file!r} is not a file')
        user_files = (str(Path(params_file).resolve()),)
    remap_pairs = tuple(sorted((remaps or {}).items()))
    overrides = _with_settings(overrides or {}, settings or {})
    specs: list[NodeSpec] = []
    for name, subs, pubs in WIRING:
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
            name=name, executable=executable, namespace=namespace, param_files=files,
            parameters=params, user_param_files=user_files,
            remaps=tuple(pair for pair in remap_pairs if pair[0] in used),
            subscribes=subs, publishes=pubs))
    if px4:
        specs.insert(0, NodeSpec(
            name='px4_bridge', executable='px4_bridge', package='ghost_px4', namespace=namespace,
            param_files=files,
            parameters=dict(overrides.get('px4_bridge', {})), user_param_files=user_files,
            remaps=tuple(pair for pair in remap_pairs if pair[0] in INPUT_TOPICS),
            subscribes=tuple(PX4_OUT_TOPICS), publishes=tuple(INPUT_TOPICS)))
    if px4_ulog:
        player = {'log': str(Path(px4_ulog).resolve()), **overrides.get('px4_log_player', {})}
        specs.insert(0, NodeSpec(
            name='px4_log_player', executable='px4_log_player', package='ghost_px4',
            namespace=namespace,
            param_files=files, parameters=player, user_param_files=user_files,
            publishes=tuple(PX4_OUT_TOPICS)))
        specs.append(NodeSpec(
            name='mission_setpoints', executable='mission_setpoints', package='ghost_px4',
            namespace=namespace,
            param_files=files, parameters=dict(overrides.get('mission_setpoints', {})),
            user_param_files=user_files, subscribes=('/fmu/out/vehicle_local_position',),
            publishes=(MISSION_SETPOINT_TOPIC,)))
    recorded: dict[str, str] = {**INPUT_TOPICS, **GHOST_TOPICS}
    if gate != 'none':
        gate_params: dict[str, object] = {'mode': gate, **overrides.get('command_gate', {})}
        if gate == 'px4':
            gate_subs: tuple[str, ...] = ('/actuations', MISSION_SETPOINT_TOPIC,
                                          '/fmu/out/vehicle_local_position')
            gate_pubs: tuple[str, ...] = (*PX4_IN_TOPICS, GATE_TOPIC)
            recorded.update({topic: PX4_IN_TOPICS[topic] for topic in (
                '/fmu/in/trajectory_setpoint', '/fmu/in/vehicle_command')})
        else:
            gate_subs, gate_pubs = ('/actuations', CMD_VEL_IN_TOPIC), ('/cmd_vel', GATE_TOPIC)
        recorded[GATE_TOPIC] = 'ghost_interfaces/msg/GateEmission'
        gate_topics = {*gate_subs, *gate_pubs}
        specs.append(NodeSpec(
            name='command_gate', executable='command_gate', namespace=namespace,
            param_files=files, parameters=gate_params, user_param_files=user_files,
            remaps=tuple(pair for pair in remap_pairs if pair[0] in gate_topics),
            subscribes=gate_subs, publishes=gate_pubs))
    topics = (*INPUT_TOPICS, *GHOST_TOPICS)
    if monitor:
        specs.append(NodeSpec(
            name='monitor', executable='monitor', namespace=namespace, param_files=files,
            parameters=dict(overrides.get('monitor', {})), user_param_files=user_files,
            remaps=tuple(pair for pair in remap_pairs if pair[0] in topics),
            subscribes=topics))
    if record:
        params = {'output': bag_path, **overrides.get('recorder', {})}
        if set(recorded) != set(topics):
            params.setdefault('topics', [f'{relative_topic(topic)}={type_name}'
                                         for topic, type_name in recorded.items()])
        if 'run_config' not in params:
            params['run_config'] = _run_config(specs, {
                role: _resolved(topic, dict(remap_pairs), namespace)
                for role, topic in (('state', '/state/nav'), ('observations', '/observations'))})
        specs.append(NodeSpec(
            name='recorder', executable='recorder', namespace=namespace, param_files=files,
            parameters=params, user_param_files=user_files,
            remaps=tuple(pair for pair in remap_pairs if pair[0] in topics),
            subscribes=tuple(recorded)))
    if graph_status is None:
        graph_status = any(spec.name in _SOURCES for spec in specs)
    if graph_status:
        specs = [replace(spec, parameters={'graph_status': True, **spec.parameters})
                 for spec in specs]
    counts = expected_subscribers(specs)
    for topic, extra in (extra_subscribers or {}).items():
        counts[topic] = counts.get(topic, 0) + extra
    # Relative, so the source resolves them in its namespace (and through its remaps).
    return [replace(spec, parameters={
        'expected_subscribers': [f'{relative_topic(topic)}={n}'
                                 for topic, n in sorted(counts.items())],
        **spec.parameters}) if spec.name in _SOURCES else spec for spec in specs]


def _with_settings(overrides: Mapping[str, Mapping[str, object]],
                   settings: Mapping[str, object]) -> dict[str, dict[str, object]]:
    """``overrides`` plus each agent setting on the nodes that take it (overrides win)."""
    merged = {name: dict(params) for name, params in overrides.items()}
    for setting, value in settings.items():
        if setting not in _SETTING_NODES:
            raise ValueError(f'unknown setting {setting!r}; choose from '
                             f'{", ".join(sorted(_SETTING_NODES))}')
        if setting == 'input_qos' and value not in INPUT_QOS_CHOICES:
            raise ValueError(f'input_qos must be one of {", ".join(INPUT_QOS_CHOICES)}, '
                             f'got {value!r}')
        for name in _SETTING_NODES[setting]:
            merged.setdefault(name, {}).setdefault(setting, value)
    return merged


def _resolved(topic: str, remaps: Mapping[str, str], namespace: str) -> str:
    """The name the recorder records a default topic under (its remap, in its namespace)."""
    if topic not in remaps:
        return topic_in_namespace(topic, namespace)
    target = remaps[topic]
    return target if target.startswith('/') else topic_in_namespace(target, namespace)


def _run_config(specs: list[NodeSpec], input_topics: Mapping[str, str]) -> str:
    """The agent's configuration as its nodes get it, as JSON (for the run manifest).

    Read from each node's parameter files and overrides, in the order rclpy applies them
    (``PipelineConfig.to_dict``: every number the agent judges with and the ids of what it
    runs), and ``input_topics``: the names the recorder records the two inputs under, so that
    ``verify_all --replay`` re-runs the agent from them without guessing.
    """
    # Imported here: it loads the node modules (rclpy message types) to know their defaults;
    # the graph is only built where rclpy is installed (ghost_run, the launch file).
    from ghost_nodes.agent_config import pipeline_config_from_graph

    return json.dumps({**pipeline_config_from_graph(specs).to_dict(),
                       'input_topics': dict(input_topics)}, sort_keys=True)


def expected_subscribers(specs: list[NodeSpec]) -> dict[str, int]:
    """Count the subscriptions of each default topic in the graph.

    The scenario waits for them before its first cycle, so nothing is lost to discovery.
    """
    counts: dict[str, int] = {}
    for spec in specs:
        for topic in spec.subscribes:
            counts[topic] = counts.get(topic, 0) + 1
    return counts


def parameter_files(spec: NodeSpec, overrides_file: str | None) -> list[str]:
    """A node's parameter files in load order: configuration, overrides, the user's file.

    ``overrides_file`` holds ``spec.parameters`` (``overrides_yaml``), or None when the node
    has none. Both the launch file and ghost_run pass exactly this list.
    """
    return [*spec.param_files, *([overrides_file] if overrides_file else []),
            *spec.user_param_files]


def ros_arguments(spec: NodeSpec, overrides_file: str | None = None) -> list[str]:
    """The ``--ros-args`` of one process: node name, namespace, parameter files, remaps.

    ``spec.parameters`` must be passed as ``overrides_file``, a YAML file scoped to the node
    (see ``overrides_yaml``): a bare ``-p name:=value`` is global and loses against the
    node-scoped values of the parameter files.
    """
    args = ['--ros-args', '-r', f'__node:={spec.name}']
    if spec.namespace:
        args += ['-r', f'__ns:={spec.namespace}']
    for path in parameter_files(spec, overrides_file):
        args += ['--params-file', path]
    for src, dst in remap_rules(spec):
        args += ['-r', f'{src}:={dst}']
    return args


def remap_rules(spec: NodeSpec) -> list[tuple[str, str]]:
    """The node's remap rules, matched on the relative default name (so in its namespace)."""
    return [(relative_topic(src), dst) for src, dst in spec.remaps]


def overrides_yaml(spec: NodeSpec) -> str:
    """A parameter file holding ``spec.parameters`` for the node, in any namespace (JSON is YAML).

    Scoped ``/**/<name>`` like the sections of config/ghost.yaml: rclpy applies a file's
    sections in the order their keys first appeared, so a ``/**`` section (what launch_ros
    writes for a ``parameters=[dict]``) would lose against the node's own section there.
    """
    return json.dumps({node_key(spec.name): {'ros__parameters': dict(spec.parameters)}},
                      indent=2) + '\n'
