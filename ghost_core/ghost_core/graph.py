"""The Ghost graph, declared once, as data: topics, who publishes and reads them, the nodes.

Pure (no rclpy). The launch file and ``ghost_run`` (through ``ghost.bringup``), the
monitor's diagnostics, the recorder's default topics and docs/architecture.md all derive
from these tables; a test checks the launch file's graph against them through the real
``launch_ros``.

Topic names are the defaults of docs/spec.md §2, as a graph in the root namespace resolves
them; the nodes use them relative (``relative_topic``), so a graph in namespace ``uav1``
publishes /uav1/actuations and so on. Every topic has a QoS class (``TOPIC_QOS``), which
``ghost_nodes.qos`` turns into rclpy's profiles.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ghost_core.agent_parameters import ACCURACY_PROFILE_NAMES, INPUT_QOS_CHOICES
from ghost_core.scenarios import SCENARIO_NAMES

__all__ = ['AGENT_PROCESS', 'AGENT_SETTINGS', 'AgentSetting', 'AP_CMD_VEL_TOPIC',
           'AP_MODE_SWITCH_SERVICE', 'AP_OUT_TOPICS', 'CMD_VEL_IN_TOPIC', 'CMD_VEL_TOPIC',
           'CONFIGURATION_TOPIC', 'CONFIGURATION_TYPE', 'DIAGNOSTICS_TOPIC', 'DIAGNOSTICS_TYPE',
           'GATE_MODES', 'GATE_TOPIC', 'GHOST_TOPICS', 'GRAPH_STATUS_TOPIC', 'IN_PROCESS_NODES',
           'INPUT_QOS_CHOICES', 'INPUT_READERS', 'INPUT_TOPICS', 'LIFECYCLE_TOPIC',
           'LIFECYCLE_TYPE', 'MAVROS_TOPICS', 'MISSION_SETPOINT_TOPIC', 'NODE_PACKAGES',
           'node_topic', 'normalise_namespace', 'OPTIONAL_INPUTS', 'PX4_IN_TOPICS',
           'PX4_OUT_TOPICS', 'QosClass', 'RECORDED_TOPICS', 'relative_topic', 'SCENARIOS',
           'SOURCE_SAMPLES_TOPIC', 'SOURCE_SAMPLES_TYPE', 'SOURCES',
           'topic_in_namespace', 'TOPIC_QOS', 'VEHICLE_STATUS_TOPIC', 'VEHICLE_STATUS_TYPE',
           'WIRING']

#: The agent's two inputs: the estimator's belief and the independent position fix.
INPUT_TOPICS: Mapping[str, str] = {
    '/state/nav': 'nav_msgs/msg/Odometry',
    '/observations': 'geometry_msgs/msg/PoseWithCovarianceStamped',
}
#: What the agent publishes, one message per cycle on each.
GHOST_TOPICS: Mapping[str, str] = {
    '/self_assessment': 'ghost_interfaces/msg/BeliefSelfAssessment',
    '/predictions': 'ghost_interfaces/msg/ForwardPrediction',
    '/prediction_outcomes': 'ghost_interfaces/msg/PredictionOutcome',
    '/self_assessment/calibrated': 'ghost_interfaces/msg/CalibratedSelfAssessment',
    '/decisions': 'ghost_interfaces/msg/DecisionRationale',
    '/actuations': 'ghost_interfaces/msg/ActionEmission',
}
#: The vehicle's status (armed, airborne, mode), which the decision policy records in each
#: decision's context (ADR-0021 §2): published by what speaks to the vehicle (px4_bridge, the
#: scenario), recorded as an input so that a re-derivation reproduces the context.
VEHICLE_STATUS_TOPIC = '/vehicle_status'
VEHICLE_STATUS_TYPE = 'ghost_interfaces/msg/VehicleStatus'
#: The autopilot samples each input an adapter (px4_bridge) publishes was made from (SPEC 5,
#: v1.3): one SourceSamples beside each belief, fix and vehicle status, so that the verifier
#: re-derives each from exactly the samples it names (ghost_verify.bridge_rederive).
SOURCE_SAMPLES_TOPIC = '/source_samples'
SOURCE_SAMPLES_TYPE = 'ghost_interfaces/msg/SourceSamples'
#: Each change a node applies to its configuration while it runs (``ros2 param set``): the
#: recorder records it beside the start configuration, and the verifier judges every cycle
#: with the configuration in force (ghost_core.run_configuration).
CONFIGURATION_TOPIC = '/ghost/configuration'
CONFIGURATION_TYPE = 'ghost_interfaces/msg/ConfigurationChange'
#: Each agent node's start-up and shutdown, as the recorder logs them (ghost_core.lifecycle):
#: 'ready' once its own endpoints have matched, 'stopping' when it begins to drain; the
#: recorder's 'stopping' too. std_msgs/String holding JSON, transient-local like the
#: configuration, so that a recorder that starts late still gets every 'ready'.
LIFECYCLE_TOPIC = '/ghost/lifecycle'
LIFECYCLE_TYPE = 'std_msgs/msg/String'
#: The monitor's health and live verdicts (diagnostic_msgs/DiagnosticArray). Absolute, as
#: ROS tools expect it (rqt_robot_monitor via diagnostic_aggregator, Foxglove): graphs in
#: different namespaces share it; their status names differ.
DIAGNOSTICS_TOPIC = '/diagnostics'
DIAGNOSTICS_TYPE = 'diagnostic_msgs/msg/DiagnosticArray'
#: What the recorder records by default: the inputs and where an adapter took them from, the
#: agent's outputs, its configuration changes and /diagnostics, so that a diagnostics panel
#: (Foxglove) also works after the flight (the bringup adds the gate's topics when it runs one).
RECORDED_TOPICS: Mapping[str, str] = {**INPUT_TOPICS, VEHICLE_STATUS_TOPIC: VEHICLE_STATUS_TYPE,
                                      SOURCE_SAMPLES_TOPIC: SOURCE_SAMPLES_TYPE,
                                      **GHOST_TOPICS,
                                      CONFIGURATION_TOPIC: CONFIGURATION_TYPE,
                                      LIFECYCLE_TOPIC: LIFECYCLE_TYPE,
                                      DIAGNOSTICS_TOPIC: DIAGNOSTICS_TYPE}
#: The command gate's record of every output it sent (ghost_interfaces/GateEmission).
GATE_TOPIC = '/ghost/gate'
#: What the mission wants to send, into the gate: PX4 mode, and the generic (Twist) mode.
MISSION_SETPOINT_TOPIC = '/ghost/mission/trajectory_setpoint'
CMD_VEL_IN_TOPIC = '/cmd_vel_in'
#: Where the twist-mode gate sends the gated twist.
CMD_VEL_TOPIC = '/cmd_vel'
#: Each node's readiness report (ghost_nodes.readiness), which a source waits for.
GRAPH_STATUS_TOPIC = '/ghost/graph_status'
#: PX4's uXRCE-DDS topics (px4_msgs): what px4_bridge reads (the land detector and the
#: mission result for the flight and mission status), and what the gate writes.
PX4_OUT_TOPICS: Mapping[str, str] = {
    '/fmu/out/vehicle_odometry': 'px4_msgs/msg/VehicleOdometry',
    '/fmu/out/vehicle_local_position': 'px4_msgs/msg/VehicleLocalPosition',
    '/fmu/out/vehicle_gps_position': 'px4_msgs/msg/SensorGps',
    '/fmu/out/vehicle_status': 'px4_msgs/msg/VehicleStatus',
    '/fmu/out/vehicle_land_detected': 'px4_msgs/msg/VehicleLandDetected',
    '/fmu/out/mission_result': 'px4_msgs/msg/MissionResult',
}
#: MAVROS's topics (PX4 or ArduPilot behind it) that mavros_bridge reads, by default the
#: fix source 'navsat' (raw/fix); with 'gpsraw' it reads gps1/raw instead.
MAVROS_TOPICS: Mapping[str, str] = {
    '/mavros/local_position/odom': 'nav_msgs/msg/Odometry',
    '/mavros/global_position/raw/fix': 'sensor_msgs/msg/NavSatFix',
    '/mavros/gpsstatus/gps1/raw': 'mavros_msgs/msg/GPSRAW',
    '/mavros/state': 'mavros_msgs/msg/State',
    '/mavros/extended_state': 'mavros_msgs/msg/ExtendedState',
}
PX4_IN_TOPICS: Mapping[str, str] = {
    '/fmu/in/trajectory_setpoint': 'px4_msgs/msg/TrajectorySetpoint',
    '/fmu/in/offboard_control_mode': 'px4_msgs/msg/OffboardControlMode',
    '/fmu/in/vehicle_command': 'px4_msgs/msg/VehicleCommand',
}

#: ArduPilot's AP_DDS topics ap_bridge reads (../shared/vendor/ardupilot_msgs/README.md), the
#: EKF variances' /ap/odometry/filtered included (proposed upstream, ArduPilot PR #31857).
AP_OUT_TOPICS: Mapping[str, str] = {
    '/ap/odometry/filtered': 'nav_msgs/msg/Odometry',
    '/ap/pose/filtered': 'geometry_msgs/msg/PoseStamped',
    '/ap/twist/filtered': 'geometry_msgs/msg/TwistStamped',
    '/ap/navsat': 'sensor_msgs/msg/NavSatFix',
    '/ap/gps_global_origin/filtered': 'geographic_msgs/msg/GeoPointStamped',
    '/ap/status': 'ardupilot_msgs/msg/Status',
}
#: What the command gate sends ArduPilot: velocity (TwistStamped, frame 'map' ENU or
#: 'base_link' FLU), and the mode switch it asks for (ardupilot_msgs/srv/ModeSwitch).
AP_CMD_VEL_TOPIC = '/ap/cmd_vel'
AP_MODE_SWITCH_SERVICE = '/ap/mode_switch'


class QosClass:
    """The QoS classes of the graph's topics (``ghost_nodes.qos`` has their profiles)."""

    #: Reliable, volatile, deep history: every topic the agent publishes.
    GHOST = 'ghost'
    #: The inputs: best-effort by default (``input_qos``), to match PX4's bridge and MAVROS.
    INPUT = 'input'
    #: PX4's uXRCE-DDS outputs: best-effort, transient-local, keep-last 5 (PX4's examples).
    PX4 = 'px4'
    #: AP_DDS's outputs: best-effort, volatile, keep-last 5 (AP_DDS_Topic_Table.h).
    AP = 'ardupilot'
    #: /ap/status: reliable, transient-local, keep-last 1 (AP_DDS_Topic_Table.h).
    AP_STATUS = 'ardupilot_status'
    #: /ap/cmd_vel: best-effort, volatile, keep-last 5 (AP_DDS reads it best-effort).
    AP_COMMAND = 'ardupilot_command'
    #: Commands to the vehicle (fmu/in/*, cmd_vel) and the mission's setpoints: reliable,
    #: volatile, keep-last 10 (px4_ros_com's offboard examples; matched by PX4's readers).
    COMMAND = 'command'
    #: /diagnostics: reliable, volatile, keep-last 10 (diagnostic_updater's).
    DIAGNOSTICS = 'diagnostics'
    #: Configuration changes: reliable, transient-local, keep-last 100 (a recorder that
    #: starts late still receives the changes in force).
    CONFIGURATION = 'configuration'


#: The QoS class of every topic of the graph.
TOPIC_QOS: Mapping[str, str] = {
    **{topic: QosClass.INPUT for topic in INPUT_TOPICS},
    **{topic: QosClass.GHOST for topic in GHOST_TOPICS},
    VEHICLE_STATUS_TOPIC: QosClass.GHOST,
    SOURCE_SAMPLES_TOPIC: QosClass.GHOST,
    GATE_TOPIC: QosClass.GHOST,
    GRAPH_STATUS_TOPIC: QosClass.GHOST,
    MISSION_SETPOINT_TOPIC: QosClass.COMMAND,
    CMD_VEL_IN_TOPIC: QosClass.COMMAND,
    CMD_VEL_TOPIC: QosClass.COMMAND,
    **{topic: QosClass.PX4 for topic in PX4_OUT_TOPICS},
    **{topic: QosClass.COMMAND for topic in PX4_IN_TOPICS},
    **{topic: QosClass.AP for topic in AP_OUT_TOPICS if topic != '/ap/status'},
    '/ap/status': QosClass.AP_STATUS,
    AP_CMD_VEL_TOPIC: QosClass.AP_COMMAND,
    DIAGNOSTICS_TOPIC: QosClass.DIAGNOSTICS,
    CONFIGURATION_TOPIC: QosClass.CONFIGURATION,
    LIFECYCLE_TOPIC: QosClass.CONFIGURATION,
}

#: Which node subscribes to / publishes which default topic, for the agent and its source
#: (the runner's waits, the launch file's readiness and the monitor's diagnostics derive
#: from it; ``ghost.bringup`` adds the optional nodes: bridge, gate, monitor, recorder).
WIRING: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ('scenario', (), ('/state/nav', '/observations', VEHICLE_STATUS_TOPIC)),
    ('self_assessor', ('/state/nav', '/observations'), ('/self_assessment',)),
    ('forward_predictor', ('/state/nav',), ('/predictions',)),
    ('outcome_evaluator', ('/state/nav', '/predictions', '/observations'),
     ('/prediction_outcomes',)),
    ('calibrator', ('/self_assessment', '/prediction_outcomes'), ('/self_assessment/calibrated',)),
    ('decision_policy', ('/self_assessment/calibrated', VEHICLE_STATUS_TOPIC), ('/decisions',)),
    ('action_emitter', ('/decisions',), ('/actuations',)),
)

#: Topics a node reads when they are there, whose absence is no fault: the vehicle status is
#: context (UNKNOWN without it: a stack with no autopilot status), published on change.
OPTIONAL_INPUTS = frozenset({VEHICLE_STATUS_TOPIC})

#: The package of each node's executable.
NODE_PACKAGES: Mapping[str, str] = {
    **{name: 'ghost_nodes' for name in (
        'scenario', 'input_player', 'self_assessor', 'forward_predictor', 'outcome_evaluator',
        'calibrator', 'decision_policy', 'action_emitter', 'recorder', 'monitor',
        'command_gate')},
    **{name: 'ghost_px4' for name in ('px4_bridge', 'px4_log_player', 'mission_setpoints')},
    'mavros_bridge': 'ghost_mavros',
    **{name: 'ghost_ardupilot' for name in ('ap_bridge', 'ap_log_player', 'ap_mission')},
}

#: Values of the gate's mode (launch ``gate:=``, ``ghost_run --gate``); 'none': no gate.
GATE_MODES = ('none', 'px4', 'twist', 'ardupilot')

#: The nodes single-process mode runs in one process (ghost_nodes.agent_process): the agent,
#: the monitor, the bridge and the gate. The sources stand for the vehicle and the mission, and
#: the recorder for ``ros2 bag record``: they keep processes of their own.
IN_PROCESS_NODES = frozenset({
    'self_assessor', 'forward_predictor', 'outcome_evaluator', 'calibrator', 'decision_policy',
    'action_emitter', 'monitor', 'px4_bridge', 'mavros_bridge', 'command_gate'})
#: The name of that one process (its log, its entry in the launcher).
AGENT_PROCESS = 'ghost_agent'

#: The nodes that produce the inputs and wait for the whole graph before the first one.
SOURCES = frozenset({'scenario', 'input_player', 'px4_log_player', 'ap_log_player'})

#: The scenarios the scenario node can play (ghost_core's catalogue).
SCENARIOS = SCENARIO_NAMES

#: Nodes that subscribe to the inputs, and so take ``input_qos``.
INPUT_READERS = ('self_assessor', 'forward_predictor', 'outcome_evaluator', 'recorder')


@dataclass(frozen=True)
class AgentSetting:
    """One agent setting: a launch argument and a ``ghost_run`` flag of the same meaning."""

    name: str
    kind: type[int] | type[float] | type[str]
    description: str
    #: The nodes whose parameter of the same name it sets.
    nodes: tuple[str, ...]
    #: For a string setting, its allowed values.
    choices: tuple[str, ...] = ()


#: The agent settings, in the order the launch file and ``ghost_run --help`` list them.
AGENT_SETTINGS: tuple[AgentSetting, ...] = (
    AgentSetting('period_s', float, "Cycle period, s: the predictor's horizon (> 0).",
                 ('forward_predictor',)),
    AgentSetting('min_outcomes', int, 'M: observed outcomes needed before a downgrade (> 0).',
                 ('calibrator',)),
    AgentSetting('downgrade_threshold', int,
                 'K: outcomes beyond 3 sigma in the window that drift (> 0).', ('calibrator',)),
    AgentSetting('max_history', int, 'W: the window, in observed outcomes (> 0).',
                 ('calibrator',)),
    AgentSetting('input_qos', str, 'Reliability of the input subscriptions: best_effort '
                 'matches best-effort (PX4 bridge, MAVROS) and reliable publishers; reliable '
                 'only reliable ones.', INPUT_READERS, INPUT_QOS_CHOICES),
    AgentSetting('accuracy_profile', str, 'The accuracy the mission needs, which sets the '
                 "self-assessor's thresholds and unconfirmed horizon (docs/parameters.md): "
                 'gnss, rtk or indoor.', ('self_assessor',), ACCURACY_PROFILE_NAMES),
)


def relative_topic(topic: str) -> str:
    """The name a node uses for a default topic: without the root '/', so a namespace applies."""
    return topic.removeprefix('/')


def node_topic(topic: str) -> str:
    """The name a node subscribes to a graph topic by: relative, but /diagnostics stays absolute.

    /diagnostics is shared by every graph on the domain (``DIAGNOSTICS_TOPIC``); a namespace
    must not move it.
    """
    return topic if topic == DIAGNOSTICS_TOPIC else relative_topic(topic)


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
