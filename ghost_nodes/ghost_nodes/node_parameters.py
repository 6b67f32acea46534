"""Every ghost_nodes node's parameters, as data (no rclpy).

The nodes declare these (``GhostNode``), ``ghost_nodes.agent_config`` reads their defaults to
build the agent's configuration offline (``ghost_replay``, the run manifest), and
``ghost.param_docs`` renders docs/parameters.md and config/ghost.yaml from them. One cohesive
job, so one module: each node's table below is what ``ros2 param describe`` shows for it. The
agent's four judging nodes' tables live in ``ghost_core.agent_parameters``, since ghost_core's
configuration takes its defaults from them.
"""

from __future__ import annotations

from collections.abc import Mapping

from ghost_bag.layout import MAX_CHUNK_SIZE
from ghost_core.agent_parameters import (
    CALIBRATOR,
    declared,
    FORWARD_PREDICTOR,
    INPUT_QOS_CHOICES,
    NO_COVARIANCE_CHOICES,
    OUTCOME_EVALUATOR,
    SELF_ASSESSOR,
)
from ghost_core.gate import DEFAULT_TIMEOUT_S, MAX_TIMEOUT_S
from ghost_core.graph import GATE_MODES, node_topic, RECORDED_TOPICS, SCENARIOS
from ghost_core.parameters import (
    at_least,
    at_most,
    Bound,
    non_negative,
    one_of,
    ParamSpec,
    positive,
)

__all__ = ['AGENT_EXECUTOR', 'COMMON_PARAMS', 'DEFAULT_EXECUTOR', 'EXECUTORS', 'GATE_NODE_MODES',
           'NO_COVARIANCE_CHOICES', 'PARAMETERS', 'SOURCE_PARAMS']

#: The executors a Ghost process can spin: rclpy's SingleThreadedExecutor, or its
#: EventsExecutor (``rclpy.experimental``, Jazzy). Every node's ``executor`` parameter,
#: ``ghost_agent --executor``, ``ghost_run --executor`` and launch ``executor:=`` take these.
EXECUTORS = ('single_threaded', 'events')
#: What a node spins unless told (its ``executor`` parameter's default): rclpy's own default.
DEFAULT_EXECUTOR = 'single_threaded'
#: What ghost_run, the launch file and ghost_agent give the agent's nodes (IN_PROCESS_NODES)
#: unless told, in one process or each in its own: the SingleThreadedExecutor rebuilds its
#: wait set in Python on every spin, which costs latency at every rate and keeps one process
#: below 500 Hz (docs/performance.md, "Closed loop").
AGENT_EXECUTOR = 'events'

COMMON_PARAMS = (
    ParamSpec('graph_status', False,
              "Report this node's matched endpoints on ghost/graph_status, for a scenario or "
              'player that waits for the whole graph before its first message (the graph turns '
              'it on when one runs: closed_loop_graph, launch graph_status:=auto).',
              read_only=True),
    ParamSpec('executor', DEFAULT_EXECUTOR, "The executor this node's process spins: "
              "'single_threaded' (rclpy's SingleThreadedExecutor) or 'events' (rclpy's "
              'experimental EventsExecutor). ghost_run and the launch file set it on the '
              "agent's six nodes, the monitor, the bridge and the gate: 'events' unless "
              '--executor / executor:= says otherwise. In ghost_agent, every node gets the '
              "process's --executor.", (one_of(EXECUTORS),), read_only=True),
)


#: The parameters every source (scenario, input player, PX4 log player) declares.
SOURCE_PARAMS = (
    ParamSpec('expected_subscribers', [''], 'topic=count pairs: the readers of each topic '
              '(set by the launch file / runner from the graph). Before the first message every '
              'one of them must have matched its writer and been matched by it, as the nodes '
              'report on /ghost/graph_status.', read_only=True),
    ParamSpec('wait_for_graph_s', 30.0, 'Longest wait for expected_subscribers; 0 = no wait.',
              (non_negative,), read_only=True),
)

#: The gate node's modes (the graph's gate modes but 'none', which is no gate).
GATE_NODE_MODES = tuple(mode for mode in GATE_MODES if mode != 'none')
_DEFAULT_TOPICS = [f'{node_topic(topic)}={type_name}' for topic, type_name in
                   RECORDED_TOPICS.items()]
_MAVLINK_ID = (at_least(0), at_most(255))

#: The scenario's and the input player's: a finite run ends by itself (ghost_nodes.source).
_EXIT_WHEN_DONE = ParamSpec(
    'exit_when_done', False, 'After the last cycle, exit (code 0) once its actuation has come '
    'back on actuations (at most 10 s later), so that a launch ends when its run is '
    'complete (the launch file sets it); false: stay up, publishing nothing more, until '
    'stopped (ghost_run stops the graph itself).', read_only=True)

_SCENARIO = (
    ParamSpec('scenario', 'smoke', 'Scenario to play: ' + ', '.join(SCENARIOS) + '.',
              (one_of(SCENARIOS),), read_only=True),
    ParamSpec('seed', 0, 'Seed of the scenario (same seed, same flight).', (non_negative,),
              read_only=True),
    ParamSpec('cycles', 0, "Number of cycles to play; 0 = the scenario's own length.",
              (non_negative,), read_only=True),
    ParamSpec('rate_hz', 0.0, "Publication rate in wall-clock Hz; 0 = the scenario's own "
              "period. Stamps always follow the scenario's simulated time.", (non_negative,),
              read_only=True),
    ParamSpec('frame_id', 'map', 'Frame of the published belief and observations.',
              read_only=True),
    *SOURCE_PARAMS,
    ParamSpec('settle_s', 0.0, 'Extra pause after the graph is ready (not needed: readiness '
              'is proven by matched endpoints, not guessed from discovery).', (non_negative,),
              read_only=True),
    _EXIT_WHEN_DONE,
)

_INPUT_PLAYER = (
    ParamSpec('input', '', 'Input bag (rosbag2 MCAP directory or .mcap file) to play.',
              read_only=True),
    ParamSpec('bag_state_topic', '/state/nav', 'nav_msgs/Odometry topic inside the bag.',
              read_only=True),
    ParamSpec('bag_observations_topic', '/observations',
              'geometry_msgs/PoseWithCovarianceStamped topic inside the bag.', read_only=True),
    ParamSpec('speed', 1.0, 'Playback speed: 1 = the recorded pace, 2 = twice as fast.',
              (positive,), read_only=True),
    *SOURCE_PARAMS,
    _EXIT_WHEN_DONE,
)

_RECORDER = (
    ParamSpec('output', '', "Bag directory to create ('' = ghost_bag_<UTC time> in the working "
              'directory). It must not exist yet.', read_only=True),
    ParamSpec('topics', _DEFAULT_TOPICS, 'topic=type pairs to record (default: the two '
              'inputs, vehicle_status, every ghost topic, ghost/configuration and '
              'ghost/lifecycle, by their default names, relative to the namespace, and the '
              'absolute /diagnostics; remaps apply).', read_only=True),
    ParamSpec('input_qos', INPUT_QOS_CHOICES[0], "Reliability of the subscriptions to the inputs "
              "(state/nav, observations) and to topics of other packages' types (the command "
              "gate's px4_msgs outputs): 'best_effort' records best-effort and reliable "
              "publishers alike, 'reliable' only reliable ones.", (one_of(INPUT_QOS_CHOICES),),
              read_only=True),
    ParamSpec('chunk_size', 262144, f'Largest MCAP chunk in bytes (1..{MAX_CHUNK_SIZE}).',
              (at_least(1), at_most(MAX_CHUNK_SIZE)), read_only=True),
    ParamSpec('chunk_max_age_s', 0.5, 'Oldest a chunk gets before it is written and the file '
              'flushed (s); the partial manifest.json is rewritten then too.', (positive,),
              read_only=True),
    ParamSpec('signing_key', '', "Ed25519 private key (PKCS8 PEM, from ghost_keygen) that signs "
              "the final manifest.json ('' = unsigned). Never copied into the bag or the logs.",
              read_only=True),
    ParamSpec('run_config', '{}', 'The configuration Ghost runs with, as a JSON object '
              '(ghost_run and the launch file fill it in); copied into manifest.json.',
              read_only=True),
)

_MONITOR = (
    ParamSpec('period_s', declared('forward_predictor', 'period_s'), 'Cycle period (s) of the '
              'estimator (the shared /** value): the unit of stale_cycles.', (positive,),
              read_only=True),
    ParamSpec('stale_cycles', 10, 'A topic that delivered nothing for stale_cycles x period_s '
              '(wall clock) is missing; a calibrated assessment without an actuation for that '
              "long is judged 'actuation_missing'. stale_cycles x period_s must exceed the "
              "evaluator's max_observation_lag_s.", (at_least(1),), read_only=True),
    ParamSpec('publish_period_s', 1.0, 'Period (s) of /diagnostics (a first violation is '
              'published at once as well).', (positive,), read_only=True),
    ParamSpec('hardware_id', '', "hardware_id of every status ('' = the node's namespace "
              "without slashes, or 'ghost' in the root namespace).", read_only=True),
)

_COMMAND_GATE = (
    ParamSpec('mode', 'px4', "'px4': gate ghost/mission/trajectory_setpoint into "
              'fmu/in/trajectory_setpoint (px4_msgs), keep fmu/in/offboard_control_mode alive, '
              "send LAND / RTL as fmu/in/vehicle_command. 'twist': gate cmd_vel_in into "
              "cmd_vel (MAVROS, ground robots). 'ardupilot': gate cmd_vel_in (TwistStamped, "
              "frame map or base_link) into ap/cmd_vel, ask ap/mode_switch for the mode a "
              'decision that does not proceed names.', (one_of(GATE_NODE_MODES),),
              read_only=True),
    ParamSpec('timeout_s', DEFAULT_TIMEOUT_S, 'An actuation older than this (s, node clock) is '
              'stale: the gate holds until a new one arrives. Longer than the cycle period.',
              (positive, at_most(MAX_TIMEOUT_S))),
    ParamSpec('rate_hz', 10.0, 'Rate (Hz) of the keep-alive timer: offboard_control_mode (PX4 '
              'needs > 2 Hz), and the hold or zero twist while not passing.',
              (Bound(minimum=2.0, strict_minimum=True),), read_only=True),
    ParamSpec('twist_stamped', False, 'Twist mode: cmd_vel_in and cmd_vel are '
              'geometry_msgs/TwistStamped instead of Twist.', read_only=True),
    ParamSpec('hold_mode', 'BRAKE', "ArduPilot mode: the Copter mode a HOLD or ABSTAIN asks "
              "for: 'BRAKE' (17, stops at once) or 'LOITER' (5, holds position with the "
              "pilot's sticks).", (one_of(('BRAKE', 'LOITER')),), read_only=True),
    ParamSpec('mode_switch_timeout_s', 1.0, 'ArduPilot mode: how long (s) the gate waits for '
              "/ap/mode_switch's answer before it records the request as unanswered.",
              (positive,), read_only=True),
    ParamSpec('target_system', 1, "PX4 mode: VehicleCommand target_system (the vehicle's "
              'MAV_SYS_ID).', _MAVLINK_ID, read_only=True),
    ParamSpec('target_component', 1, 'PX4 mode: VehicleCommand target_component (1 the '
              'autopilot, 0 all components).', _MAVLINK_ID, read_only=True),
    ParamSpec('source_system', 1, 'PX4 mode: VehicleCommand source_system.', _MAVLINK_ID,
              read_only=True),
    ParamSpec('source_component', 1, 'PX4 mode: VehicleCommand source_component.',
              _MAVLINK_ID, read_only=True),
)

#: Each node's own parameters (beside COMMON_PARAMS), by node name.
PARAMETERS: Mapping[str, tuple[ParamSpec, ...]] = {
    'scenario': _SCENARIO,
    'input_player': _INPUT_PLAYER,
    'self_assessor': SELF_ASSESSOR,
    'forward_predictor': FORWARD_PREDICTOR,
    'outcome_evaluator': OUTCOME_EVALUATOR,
    'calibrator': CALIBRATOR,
    'decision_policy': (),
    'action_emitter': (),
    'recorder': _RECORDER,
    'monitor': _MONITOR,
    'command_gate': _COMMAND_GATE,
}
