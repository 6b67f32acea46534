"""The bringup: graph options -> the processes of the closed loop, with their parameter files.

The launch file (`launch/closed_loop.launch.py`) and ``ghost_run`` (``ghost.launcher``)
both build their processes with ``closed_loop_graph(config_dir, GraphOptions(...))``, so the
two start the same nodes with the same parameter files, overrides and remaps. What the graph
is (topics, wiring, node packages, gate modes, agent settings) is ``ghost_core.graph``; this
module turns options into ``NodeSpec``s. No rclpy here: the launch file imports it too.

One cohesive job (options -> the processes, their parameter files and what the recorder
records of them), so one module past 400 lines.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
import enum
import json
from pathlib import Path
import tempfile

from ghost_core.graph import (
    AGENT_SETTINGS,
    CMD_VEL_IN_TOPIC,
    CMD_VEL_TOPIC,
    DIAGNOSTICS_TOPIC,
    GATE_MODES,
    GATE_TOPIC,
    GHOST_TOPICS,
    INPUT_TOPICS,
    MAVROS_TOPICS,
    MISSION_SETPOINT_TOPIC,
    NODE_PACKAGES,
    node_topic,
    normalise_namespace,
    PX4_IN_TOPICS,
    PX4_OUT_TOPICS,
    RECORDED_TOPICS,
    relative_topic,
    SCENARIOS,
    SOURCE_SAMPLES_TOPIC,
    SOURCES,
    topic_in_namespace,
    VEHICLE_STATUS_TOPIC,
    WIRING,
)
from ghost_core.pipeline import PipelineConfig
from ghost_nodes.agent_config import node_parameters, pipeline_config

__all__ = ['closed_loop_graph', 'expected_subscribers', 'GraphOptions', 'LAUNCH_OWN_ARGUMENTS',
           'NodeSpec', 'node_key', 'overrides_yaml', 'parameter_files',
           'pipeline_config_from_graph', 'remap_rules', 'ros_arguments', 'Source',
           'unknown_launch_arguments']


class Source(enum.Enum):
    """What feeds the agent's two inputs."""

    #: The simulator plays a scenario (``scenario``; its parameter file is loaded).
    SCENARIO = 'scenario'
    #: A recorded input bag (``input_player``).
    INPUT_BAG = 'input_bag'
    #: A live PX4 over uXRCE-DDS (``px4_bridge`` turns fmu/out/... into the inputs).
    PX4 = 'px4'
    #: A PX4 flight log played as PX4 would (``px4_log_player`` -> ``px4_bridge``), with a
    #: stand-in mission (``mission_setpoints``) feeding the gate.
    PX4_ULOG = 'px4_ulog'
    #: MAVROS (PX4 or ArduPilot behind it): ``mavros_bridge`` turns mavros/... into the inputs.
    MAVROS = 'mavros'
    #: Your own estimator and fix publish the inputs: no source node.
    EXTERNAL = 'external'


@dataclass(frozen=True)
class GraphOptions:
    """Everything that shapes the graph; ``closed_loop_graph`` checks it.

    ``scenario``: with ``Source.SCENARIO``. ``input_bag`` / ``px4_ulog``: the file of
    ``Source.INPUT_BAG`` / ``Source.PX4_ULOG``. ``remaps`` maps default topic names to the
    stack's own (``{'/state/nav': '/ekf/odom'}``; a relative target resolves in
    ``namespace``). ``overrides``: node name -> parameter overrides. ``settings``: the agent
    settings (``ghost_core.graph.AGENT_SETTINGS``) over the configuration files.
    ``extra_subscribers``: subscriptions outside the graph (e.g. ghost_run's own /actuations
    reader) the source must also wait for. ``params_file``: the user's own parameter file,
    loaded last. ``monitor``: the online monitor (/diagnostics). ``gate``: the command gate
    between the mission and the vehicle: 'px4', 'twist' or 'none'; '' means 'px4' with a PX4
    source and 'none' otherwise; the recorder then records the gate's record and, in PX4 mode,
    the setpoints and vehicle commands it sent. ``graph_status``: every node's readiness report
    (None: on when a source node is in the graph, since it waits for those reports).
    """

    source: Source = Source.SCENARIO
    scenario: str = 'drift_then_recovery'
    input_bag: str = ''
    px4_ulog: str = ''
    record: bool = True
    bag_path: str = ''
    namespace: str = ''
    remaps: Mapping[str, str] = field(default_factory=dict)
    overrides: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    settings: Mapping[str, object] = field(default_factory=dict)
    extra_subscribers: Mapping[str, int] = field(default_factory=dict)
    params_file: str = ''
    monitor: bool = True
    gate: str = ''
    graph_status: bool | None = None

    @property
    def px4(self) -> bool:
        """Whether PX4's uXRCE-DDS topics feed the agent (through px4_bridge)."""
        return self.source in (Source.PX4, Source.PX4_ULOG)

    @property
    def gate_mode(self) -> str:
        """The gate's mode, '' resolved."""
        return self.gate or ('px4' if self.px4 else 'none')

    def check(self) -> None:
        """``ValueError`` naming the option that is wrong."""
        if self.scenario not in SCENARIOS:
            raise ValueError(f'unknown scenario {self.scenario!r}; choose one of '
                             f'{", ".join(SCENARIOS)}')
        for name, wanted in (('input_bag', Source.INPUT_BAG), ('px4_ulog', Source.PX4_ULOG)):
            given = bool(getattr(self, name))
            if given != (self.source is wanted):
                raise ValueError(f'{name} is the file of source {wanted.value!r} and only of it '
                                 f'(source {self.source.value!r}, {name} {getattr(self, name)!r})')
        if self.px4_ulog and not Path(self.px4_ulog).is_file():
            raise ValueError(f'px4_ulog {self.px4_ulog!r} is not a file')
        if self.gate not in ('', *GATE_MODES):
            raise ValueError(f'gate must be one of {", ".join(GATE_MODES)}, got {self.gate!r}')
        if self.gate_mode == 'px4' and not self.px4:
            raise ValueError("gate 'px4' holds the vehicle at PX4's local position: it needs a "
                             "PX4 source (px4_bridge); use gate 'twist' for a stack without PX4")
        if self.params_file and not Path(self.params_file).is_file():
            raise ValueError(f'params_file {self.params_file!r} is not a file')
        normalise_namespace(self.namespace)
        _with_settings(self.overrides, self.settings)


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


def node_key(name: str) -> str:
    """The parameter-file key of a node, whatever its namespace (rcl's ``/**/name`` pattern).

    A bare ``name:`` section only matches the node in the root namespace; ``/**/name`` matches
    it in every namespace, so one file serves ``namespace:=uav1`` and ``uav2`` alike.
    """
    return f'/**/{name}'


@dataclass(frozen=True)
class _Common:
    """What every node of one graph shares: namespace, files, remaps, overrides."""

    namespace: str
    files: tuple[str, ...]
    user_files: tuple[str, ...]
    remaps: tuple[tuple[str, str], ...]
    overrides: Mapping[str, Mapping[str, object]]

    def spec(self, name: str, subscribes: tuple[str, ...] = (),
             publishes: tuple[str, ...] = (), remapped: frozenset[str] | None = None,
             parameters: Mapping[str, object] | None = None) -> NodeSpec:
        """A node of the graph, its ``parameters`` under the overrides.

        ``remapped``: the default topics its remaps may rename (default: those it uses).
        """
        used = set(subscribes) | set(publishes) if remapped is None else remapped
        return NodeSpec(
            name=name, executable=name, package=NODE_PACKAGES[name], namespace=self.namespace,
            param_files=self.files, user_param_files=self.user_files,
            parameters={**(parameters or {}), **self.overrides.get(name, {})},
            remaps=tuple(pair for pair in self.remaps if pair[0] in used),
            subscribes=subscribes, publishes=publishes)


def closed_loop_graph(config_dir: Path | str, options: GraphOptions) -> list[NodeSpec]:
    """The processes of the closed loop, for ``options`` (``ValueError`` if they are wrong).

    ``config_dir`` holds ghost.yaml (every node's defaults) and scenarios/<scenario>.yaml
    (the scenario's parameters, loaded only when the scenario runs).
    """
    options.check()
    config = Path(config_dir)
    files: tuple[str, ...] = (str(config / 'ghost.yaml'),)
    if options.source is Source.SCENARIO:
        files += (str(config / 'scenarios' / f'{options.scenario}.yaml'),)
    common = _Common(
        namespace=normalise_namespace(options.namespace), files=files,
        user_files=(str(Path(options.params_file).resolve()),) if options.params_file else (),
        remaps=tuple(sorted(options.remaps.items())),
        overrides=_with_settings(options.overrides, options.settings))
    specs = [*_source_nodes(common, options), *_agent_nodes(common)]
    recorded: dict[str, str] = dict(RECORDED_TOPICS)
    if options.source is Source.PX4_ULOG:
        specs.append(common.spec('mission_setpoints',
                                 subscribes=('/fmu/out/vehicle_local_position',),
                                 publishes=(MISSION_SETPOINT_TOPIC,), remapped=frozenset()))
    if options.px4:
        # The bridge's own inputs, so that verify_all re-derives its conversion too.
        recorded.update(PX4_OUT_TOPICS)
    for spec in specs:
        if spec.name == 'mavros_bridge':  # its inputs too: what its source_samples name
            recorded.update({topic: MAVROS_TOPICS[topic] for topic in spec.subscribes})
    if options.gate_mode != 'none':
        specs.append(_gate(common, options.gate_mode, recorded))
    topics = (*INPUT_TOPICS, *GHOST_TOPICS)
    if options.monitor:
        specs.append(common.spec('monitor', subscribes=topics, publishes=(DIAGNOSTICS_TOPIC,)))
    if options.record:
        specs.append(_recorder(common, options.bag_path, recorded, specs))
    graph_status = options.graph_status
    if graph_status is None:
        graph_status = any(spec.name in SOURCES for spec in specs)
    if graph_status:
        specs = [replace(spec, parameters={'graph_status': True, **spec.parameters})
                 for spec in specs]
    counts = expected_subscribers(specs)
    for topic, extra in options.extra_subscribers.items():
        counts[topic] = counts.get(topic, 0) + extra
    # Relative, so the source resolves them in its namespace (and through its remaps).
    return [replace(spec, parameters={
        'expected_subscribers': [f'{node_topic(topic)}={n}'
                                 for topic, n in sorted(counts.items())],
        **spec.parameters}) if spec.name in SOURCES else spec for spec in specs]


def _source_nodes(common: _Common, options: GraphOptions) -> list[NodeSpec]:
    """The nodes that produce the inputs (none for an external estimator).

    The scenario, the input player and the PX4 bridge also publish the vehicle's status.
    """
    inputs = tuple(INPUT_TOPICS)
    with_status = (*inputs, VEHICLE_STATUS_TOPIC)
    # A source waits for the whole graph, so it resolves every topic name.
    every = frozenset({*INPUT_TOPICS, VEHICLE_STATUS_TOPIC, *GHOST_TOPICS})
    if options.source is Source.SCENARIO:
        return [common.spec('scenario', publishes=with_status, remapped=every,
                            parameters={'scenario': options.scenario})]
    if options.source is Source.INPUT_BAG:
        return [common.spec('input_player', publishes=with_status, remapped=every,
                            parameters={'input': options.input_bag})]
    specs = []
    if options.source is Source.PX4_ULOG:
        specs.append(common.spec('px4_log_player', publishes=tuple(PX4_OUT_TOPICS),
                                 remapped=frozenset(),
                                 parameters={'log': str(Path(options.px4_ulog).resolve())}))
    if options.px4:
        specs.append(common.spec('px4_bridge', subscribes=tuple(PX4_OUT_TOPICS),
                                 publishes=(*with_status, SOURCE_SAMPLES_TOPIC),
                                 remapped=frozenset(with_status)))
    if options.source is Source.MAVROS:
        bridge = common.spec('mavros_bridge', publishes=(*with_status, SOURCE_SAMPLES_TOPIC),
                             remapped=frozenset(with_status))
        # Of the two fix topics, the one of its fix_source, as its parameter files set it.
        fixes = {'navsat': '/mavros/global_position/raw/fix',
                 'gpsraw': '/mavros/gpsstatus/gps1/raw'}
        fix = fixes[str(_bridge_parameters(bridge)['fix_source'])]
        specs.append(replace(bridge, subscribes=tuple(
            topic for topic in MAVROS_TOPICS if topic not in fixes.values() or topic == fix)))
    return specs


def _agent_nodes(common: _Common) -> list[NodeSpec]:
    """The agent's six nodes, as ``ghost_core.graph.WIRING`` wires them."""
    return [common.spec(name, subscribes=subscribes, publishes=publishes)
            for name, subscribes, publishes in WIRING if subscribes]


def _gate(common: _Common, mode: str, recorded: dict[str, str]) -> NodeSpec:
    """The command gate in ``mode``; adds what the recorder records of it to ``recorded``."""
    if mode == 'px4':
        subscribes: tuple[str, ...] = ('/actuations', MISSION_SETPOINT_TOPIC,
                                       '/fmu/out/vehicle_local_position')
        publishes: tuple[str, ...] = (*PX4_IN_TOPICS, GATE_TOPIC)
        recorded.update({topic: PX4_IN_TOPICS[topic] for topic in (
            '/fmu/in/trajectory_setpoint', '/fmu/in/vehicle_command')})
    else:
        subscribes, publishes = ('/actuations', CMD_VEL_IN_TOPIC), (CMD_VEL_TOPIC, GATE_TOPIC)
    recorded[GATE_TOPIC] = 'ghost_interfaces/msg/GateEmission'
    return common.spec('command_gate', subscribes=subscribes, publishes=publishes,
                       parameters={'mode': mode})


def _recorder(common: _Common, bag_path: str, recorded: Mapping[str, str],
              specs: list[NodeSpec]) -> NodeSpec:
    """The recorder of ``recorded``, with the run configuration ``specs`` run with."""
    parameters: dict[str, object] = {'output': bag_path}
    if set(recorded) != set(RECORDED_TOPICS):
        parameters['topics'] = [f'{node_topic(topic)}={type_name}'
                                for topic, type_name in recorded.items()]
    overrides = common.overrides.get('recorder', {})
    if 'run_config' not in overrides:
        remaps = dict(common.remaps)
        parameters['run_config'] = json.dumps({
            **pipeline_config_from_graph(specs).to_dict(),
            # The names the recorder records the inputs under, so that
            # ``verify_all`` re-runs the agent from them without guessing.
            'input_topics': {role: _resolved(topic, remaps, common.namespace) for role, topic in
                             (('state', '/state/nav'), ('observations', '/observations'))},
            **_bridge_run_config(common, specs),
        }, sort_keys=True)
    # The source waits for the monitor -> recorder edge of /diagnostics only when the graph
    # has a monitor (it records other publishers of /diagnostics all the same).
    monitor = any(spec.name == 'monitor' for spec in specs)
    return common.spec('recorder', subscribes=tuple(
                           topic for topic in recorded if (topic != DIAGNOSTICS_TOPIC or monitor)),
                       remapped=frozenset(RECORDED_TOPICS),
                       parameters=parameters)


def _bridge_parameters(spec: NodeSpec) -> dict[str, object]:
    """A bridge's parameter values as its files and overrides give them (px4_ or mavros_bridge).

    Only a PX4 or MAVROS graph needs ghost_px4 or ghost_mavros (the agent's bringup does not).
    """
    if spec.name == 'px4_bridge':
        from ghost_px4.node_parameters import PARAMETERS
    else:
        from ghost_mavros.node_parameters import PARAMETERS
    with tempfile.TemporaryDirectory(prefix='ghost_config_') as folder:
        overrides = None
        if spec.parameters:
            overrides = str(Path(folder) / f'{spec.name}.yaml')
            Path(overrides).write_text(overrides_yaml(spec), encoding='utf-8')
        return node_parameters(parameter_files(spec, overrides), spec.name,
                               {item.name: item.default for item in PARAMETERS[spec.name]},
                               spec.namespace)


def _bridge_run_config(common: _Common, specs: list[NodeSpec]) -> dict[str, object]:
    """The bridge's parameters and topics for the run configuration (none without a bridge).

    ``verify_all`` re-runs px4_bridge with them (ghost_verify.bridge_rederive); mavros_bridge's
    are recorded in the same form, for its re-derivation.
    """
    spec = next((spec for spec in specs if spec.name in ('px4_bridge', 'mavros_bridge')), None)
    if spec is None:
        return {}
    params = _bridge_parameters(spec)
    if spec.name == 'px4_bridge':
        from ghost_px4.bridge import BRIDGE_CONFIG_KEY, BridgeConfig

        key, config = BRIDGE_CONFIG_KEY, BridgeConfig.from_parameters(params).to_dict()
        inputs: tuple[str, ...] = tuple(PX4_OUT_TOPICS)
    else:
        from ghost_mavros.bridge import BRIDGE_CONFIG_KEY as key
        from ghost_mavros.bridge import MavrosConfig

        config, inputs = MavrosConfig.from_parameters(params).to_dict(), spec.subscribes
    remaps = dict(common.remaps)
    topics = {topic: topic_in_namespace(topic, common.namespace)
              for topic in (*inputs, SOURCE_SAMPLES_TOPIC)}
    topics.update({topic: _resolved(topic, remaps, common.namespace)
                   for topic in (*INPUT_TOPICS, VEHICLE_STATUS_TOPIC)})
    return {key: {'parameters': config, 'topics': topics}}


def _with_settings(overrides: Mapping[str, Mapping[str, object]],
                   settings: Mapping[str, object]) -> dict[str, dict[str, object]]:
    """``overrides`` plus each agent setting on the nodes that take it (overrides win)."""
    merged = {name: dict(params) for name, params in overrides.items()}
    known = {setting.name: setting for setting in AGENT_SETTINGS}
    for name, value in settings.items():
        if name not in known:
            raise ValueError(f'unknown setting {name!r}; choose from {", ".join(sorted(known))}')
        if known[name].choices and value not in known[name].choices:
            raise ValueError(f'{name} must be one of {", ".join(known[name].choices)}, '
                             f'got {value!r}')
        for node in known[name].nodes:
            merged.setdefault(node, {}).setdefault(name, value)
    return merged


def _resolved(topic: str, remaps: Mapping[str, str], namespace: str) -> str:
    """The name the recorder records a default topic under (its remap, in its namespace)."""
    if topic not in remaps:
        return topic_in_namespace(topic, namespace)
    target = remaps[topic]
    return target if target.startswith('/') else topic_in_namespace(target, namespace)


def pipeline_config_from_graph(specs: list[NodeSpec]) -> PipelineConfig:
    """The agent's configuration as the graph's nodes get it.

    Each node's parameter files, its overrides and the user's file, in the order both
    ghost_run and the launch file load them (``parameter_files``): every number the agent
    judges with and the ids of what it runs (the run manifest's ``run_config``).
    """
    by_name = {spec.name: spec for spec in specs}
    with tempfile.TemporaryDirectory(prefix='ghost_config_') as folder:
        def files_of(node: str) -> list[str]:
            spec = by_name[node]
            overrides = None
            if spec.parameters:
                overrides = str(Path(folder) / f'{node}.yaml')
                Path(overrides).write_text(overrides_yaml(spec), encoding='utf-8')
            return parameter_files(spec, overrides)

        namespaces = {spec.namespace for spec in specs}
        return pipeline_config(files_of, namespaces.pop() if len(namespaces) == 1 else '')


def expected_subscribers(specs: list[NodeSpec]) -> dict[str, int]:
    """Count the subscriptions of each default topic the graph's sources wait for.

    The scenario waits for them before its first cycle, so nothing is lost to discovery: the
    inputs (whoever publishes them: a source of the graph, or the user's estimator) and every
    topic a node of the graph publishes. A topic read when present but published by no node of
    this graph (``/vehicle_status`` with an external estimator; ghost/configuration, published
    only on a change) has no edge to wait for.
    """
    published = {topic for spec in specs for topic in spec.publishes} | set(INPUT_TOPICS)
    counts: dict[str, int] = {}
    for spec in specs:
        for topic in spec.subscribes:
            if topic in published:
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


#: Launch configurations that ``ros2 launch`` and launch_ros read themselves, so never an
#: unknown argument of the launch file: ``--launch-prefix`` (and its filter), the shutdown
#: timeouts and ``emulate_tty`` of every process, and what an including file's
#: PushRosNamespace, SetRemap and SetParameter set.
LAUNCH_OWN_ARGUMENTS = frozenset({
    'launch-prefix', 'launch-prefix-filter', 'sigterm_timeout', 'sigkill_timeout',
    'emulate_tty', 'ros_namespace', 'ros_remaps', 'global_params'})


def unknown_launch_arguments(given: Mapping[str, str], declared: Sequence[str]) -> str | None:
    """Why the launch file refuses ``given`` (its launch configurations), or None.

    Every name must be one of ``declared`` (the launch file's arguments) or one of
    ``LAUNCH_OWN_ARGUMENTS``; an unknown ``name:=value`` would otherwise be silently ignored.
    """
    unknown = sorted(set(given) - set(declared) - LAUNCH_OWN_ARGUMENTS)
    if not unknown:
        return None
    names = ', '.join(f'{name}:={given[name]!r}' for name in unknown)
    return (f'unknown launch argument{"s" if len(unknown) > 1 else ""} {names}; the known '
            f'ones: {", ".join(sorted(declared))} (ros2 launch ghost closed_loop.launch.py '
            '--show-args; included from your launch file, whose arguments reach this one too: '
            'include it in a GroupAction(forwarding=False) that passes only these, as its '
            'launch_configurations)')
