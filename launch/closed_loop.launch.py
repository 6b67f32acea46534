"""Launch Ghost's closed loop: the node graph of ghost.bringup, optionally recorded.

    ros2 launch ghost closed_loop.launch.py scenario:=drift_then_recovery record:=true bag:=/tmp/b
    ros2 launch ghost closed_loop.launch.py use_scenario:=false state_topic:=/ekf/odom \
        observations_topic:=/rtk/pose
    ros2 launch ghost closed_loop.launch.py namespace:=uav1 record:=true   # /uav1/actuations ...
    ros2 launch ghost closed_loop.launch.py px4:=true record:=true   # PX4 over uXRCE-DDS
    ros2 launch ghost closed_loop.launch.py mavros:=true record:=true   # MAVROS, PX4/ArduPilot
    ros2 launch ghost closed_loop.launch.py ardupilot:=true record:=true   # ArduPilot AP_DDS
    ros2 launch ghost closed_loop.launch.py use_scenario:=false gate:=twist  # cmd_vel gate
    ros2 launch ghost closed_loop.launch.py single_process:=true   # the agent in one process
    ros2 launch ghost closed_loop.launch.py executor:=single_threaded   # rclpy's default
    ros2 launch ghost closed_loop.launch.py use_scenario:=false params_file:=my_ghost.yaml
    ros2 launch ghost closed_loop.launch.py record:=true signing_key:=keys/ghost
    ros2 launch ghost closed_loop.launch.py enclave_prefix:=/ghost   # SROS2: one enclave a node
    ros2 launch ghost closed_loop.launch.py accuracy_profile:=rtk   # what KNOWN means
    ros2 launch ghost closed_loop.launch.py input:=runs/flight_in record:=true bag:=/tmp/b

The graph (nodes, parameter files, parameter overrides, remaps) comes from
ghost.bringup.closed_loop_graph, the same function ghost_run uses, and each node gets the
same parameter files in the same order (ghost.bringup.parameter_files): config/ghost.yaml,
the scenario's file (only when the scenario runs), the overrides of the launch arguments (a
file scoped /**/<node>, so they beat config/ghost.yaml's sections), then params_file.

An argument the file does not declare is refused before any node starts, with the list of the
known ones (ghost.bringup.unknown_launch_arguments). A finite run ends by itself: the scenario
(or the input player, input:=) exits once its last cycle is actuated, and the launch then
shuts down, the recorder last draining and closing the bag, so a verifier can follow it.
"""

import os
import shutil
import tempfile

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, EmitEvent, OpaqueFunction, RegisterEventHandler
from launch.event_handlers import OnProcessExit, OnShutdown
from launch.events import Shutdown
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from ghost.bringup import (
    closed_loop_graph,
    GraphOptions,
    overrides_yaml,
    parameter_files,
    remap_rules,
    ros_arguments,
    Source,
    unknown_launch_arguments,
)
from ghost.launcher import with_executor
from ghost_core.graph import (
    AGENT_PROCESS,
    AGENT_SETTINGS,
    CMD_VEL_IN_TOPIC,
    CMD_VEL_TOPIC,
    GATE_MODES,
    IN_PROCESS_NODES,
    MISSION_SETPOINT_TOPIC,
    SCENARIOS,
    SOURCES,
)
from ghost_nodes.agent_process import graph_document
from ghost_nodes.node_parameters import AGENT_EXECUTOR, EXECUTORS

#: Seconds ros2 launch gives the recorder after SIGINT before SIGTERM: its drain and teardown.
RECORDER_STOP_S = '35'
_TRUE = ('true', '1', 'yes', 'on')
_FALSE = ('false', '0', 'no', 'off')

def _flag(context, name: str) -> bool:
    text = LaunchConfiguration(name).perform(context).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f"launch argument {name}:={text!r} must be 'true' or 'false'")


def _settings(context) -> dict[str, object]:
    """The agent settings given as launch arguments ('' = the configuration files')."""
    settings: dict[str, object] = {}
    for setting in AGENT_SETTINGS:
        text = LaunchConfiguration(setting.name).perform(context).strip()
        if not text:
            continue
        if setting.choices:
            if text not in setting.choices:
                raise ValueError(f'launch argument {setting.name}:={text!r} must be one of '
                                 f'{", ".join(setting.choices)}')
            settings[setting.name] = text
            continue
        try:
            value = setting.kind(text)
        except ValueError:
            raise ValueError(f'launch argument {setting.name}:={text!r} is not a '
                             f'{setting.kind.__name__}') from None
        if not value > 0:
            raise ValueError(f'launch argument {setting.name}:={text!r} must be > 0')
        settings[setting.name] = value
    return settings


def _graph_status(context):
    value = LaunchConfiguration('graph_status').perform(context)
    return None if value == 'auto' else value == 'true'


def _source(context) -> Source:
    """What feeds the agent: px4, mavros, ardupilot:=true, input:=BAG, the scenario, or none."""
    chosen = {'input:=': Source.INPUT_BAG if LaunchConfiguration('input').perform(context)
              else None,
              'px4:=true': Source.PX4 if _flag(context, 'px4') else None,
              'mavros:=true': Source.MAVROS if _flag(context, 'mavros') else None,
              'ardupilot:=true': Source.ARDUPILOT if _flag(context, 'ardupilot') else None}
    given = [name for name, source in chosen.items() if source is not None]
    if len(given) > 1:
        raise ValueError(f'launch arguments {" and ".join(given)}: give one (each is the '
                         "agent's inputs)")
    if given:
        return chosen[given[0]]
    return Source.SCENARIO if _flag(context, 'use_scenario') else Source.EXTERNAL


def _source_overrides(context, source: Source) -> dict[str, dict[str, object]]:
    """The parameters of the graph's source node: a finite run's exits when it is complete."""
    text = LaunchConfiguration('speed').perform(context).strip()
    try:
        speed = float(text)
    except ValueError:
        speed = 0.0
    if not 0 < speed < float('inf'):
        raise ValueError(f'launch argument speed:={text!r} must be a number > 0')
    if source is Source.SCENARIO:
        return {'scenario': {'exit_when_done': True}}
    if source is Source.INPUT_BAG:
        return {'input_player': {'exit_when_done': True, 'speed': speed}}
    return {}


def _end_of_run(action: Node, name: str) -> RegisterEventHandler:
    """When the source ``action`` exits: shut the launch down (an error if it failed)."""
    def on_exit(event, context):
        if context.is_shutdown:
            return None  # Ctrl-C, or another way out: already shutting down
        if event.returncode != 0:
            raise RuntimeError(f'{name} exited with code {event.returncode}: the run did not '
                               'complete')
        return [EmitEvent(event=Shutdown(reason=f'the run is complete ({name} is done)'))]
    return RegisterEventHandler(OnProcessExit(target_action=action, on_exit=on_exit))


def _graph(context, *args, declared=(), **kwargs):
    refused = unknown_launch_arguments(context.launch_configurations, declared)
    if refused is not None:
        raise ValueError(refused)
    config_dir = LaunchConfiguration('config_dir').perform(context) or os.path.join(
        get_package_share_directory('ghost'), 'config')
    remaps = {}
    for default, arg in (('/state/nav', 'state_topic'), ('/observations', 'observations_topic'),
                         (CMD_VEL_IN_TOPIC, 'cmd_vel_in_topic'), (CMD_VEL_TOPIC, 'cmd_vel_topic'),
                         (MISSION_SETPOINT_TOPIC, 'mission_setpoint_topic')):
        value = LaunchConfiguration(arg).perform(context)
        if value and value.lstrip('/') != default.lstrip('/'):
            remaps[default] = value
    # The key's path only: the recorder reads the key and never copies it anywhere.
    signing_key = LaunchConfiguration('signing_key').perform(context)
    overrides = {'recorder': {'signing_key': os.path.abspath(os.path.expanduser(
        signing_key))}} if signing_key else {}
    bag = LaunchConfiguration('bag').perform(context)
    params_file = LaunchConfiguration('params_file').perform(context)
    source = _source(context)
    overrides.update(_source_overrides(context, source))
    input_bag = LaunchConfiguration('input').perform(context)
    if input_bag and not os.path.exists(os.path.expanduser(input_bag)):
        raise ValueError(f'launch argument input:={input_bag!r}: no such bag')
    specs = closed_loop_graph(config_dir, GraphOptions(
        source=source,
        input_bag=os.path.abspath(os.path.expanduser(input_bag)) if input_bag else '',
        # The source follows /actuations to know when its last cycle is done.
        extra_subscribers={'/actuations': 1} if source in (Source.SCENARIO,
                                                           Source.INPUT_BAG) else {},
        scenario=LaunchConfiguration('scenario').perform(context),
        record=_flag(context, 'record'),
        bag_path=os.path.abspath(os.path.expanduser(bag)) if bag else '',
        monitor=_flag(context, 'monitor'),
        gate=LaunchConfiguration('gate').perform(context).strip(),
        remaps=remaps, overrides=overrides,
        namespace=LaunchConfiguration('namespace').perform(context),
        settings=_settings(context),
        params_file=os.path.abspath(os.path.expanduser(params_file)) if params_file else '',
        graph_status=_graph_status(context)))
    # What the agent's nodes spin, in one process or each in its own.
    executor = LaunchConfiguration('executor').perform(context)
    specs = with_executor(specs, executor)
    # Each node's overrides go to a file scoped /**/<node>, written here rather than handed to
    # launch_ros as a dict: launch_ros scopes a dict '/**', and rcl applies a '/**' section
    # before the node's own section of config/ghost.yaml, so e.g. bag:= would be ignored.
    folder = tempfile.mkdtemp(prefix='ghost_launch_')
    # The nodes read their files at start-up; the folder goes when the launch ends.
    cleanup = RegisterEventHandler(OnShutdown(
        on_shutdown=lambda _event, _context: shutil.rmtree(folder, ignore_errors=True)))
    # SROS2: each node runs in its own enclave, <prefix>/<node> (docs/reliability.md).
    prefix = LaunchConfiguration('enclave_prefix').perform(context).rstrip('/')
    nodes = [cleanup]
    single_process = _flag(context, 'single_process')
    in_process = []
    for spec in specs:
        overrides_file = None
        if spec.parameters:
            overrides_file = os.path.join(folder, f'{spec.name}.params.yaml')
            with open(overrides_file, 'w', encoding='utf-8') as stream:
                stream.write(overrides_yaml(spec))
        if single_process and spec.name in IN_PROCESS_NODES:
            in_process.append((spec.name, spec.package, spec.executable,
                               ros_arguments(spec, overrides_file)))
            continue
        node = Node(
            package=spec.package, executable=spec.executable, name=spec.name,
            namespace=spec.namespace or None,
            parameters=parameter_files(spec, overrides_file),
            remappings=remap_rules(spec), output='screen',
            # The recorder closes the bag (summary, metadata.yaml, the manifest's hashes) in
            # up to RecorderNode.TEARDOWN_S (30 s) after its drain; SIGTERM, then SIGKILL,
            # from ros2 launch before that would cut the bag from its manifest.
            **({'sigterm_timeout': RECORDER_STOP_S} if spec.name == 'recorder' else {}),
            **({'ros_arguments': ['--enclave', f'{prefix}/{spec.name}']} if prefix else {}))
        nodes.append(node)
        if spec.name in SOURCES and source in (Source.SCENARIO, Source.INPUT_BAG):
            nodes.append(_end_of_run(node, spec.name))
    if in_process:
        # One process, one executor (ghost_nodes.agent_process); each node keeps its own
        # name, namespace, parameter files and remaps. One process is one enclave.
        graph_file = os.path.join(folder, f'{AGENT_PROCESS}.graph.json')
        with open(graph_file, 'w', encoding='utf-8') as stream:
            stream.write(graph_document(in_process))
        nodes.append(Node(
            package='ghost_nodes', executable=AGENT_PROCESS, output='screen',
            arguments=['--graph', graph_file, '--executor', executor],
            **({'ros_arguments': ['--enclave', f'{prefix}/{AGENT_PROCESS}']} if prefix else {})))
    return nodes


def generate_launch_description() -> LaunchDescription:
    """Declare the arguments; the graph itself is built once they are known."""
    arguments = _arguments()
    return LaunchDescription([
        *arguments,
        OpaqueFunction(function=_graph,
                       kwargs={'declared': [argument.name for argument in arguments]}),
    ])


def _arguments() -> list[DeclareLaunchArgument]:
    """Every launch argument (``--show-args``); any other name is refused."""
    return [
        DeclareLaunchArgument('scenario', default_value='drift_then_recovery',
                              choices=list(SCENARIOS),
                              description='Scenario the simulator plays.'),
        DeclareLaunchArgument('use_scenario', default_value='true',
                              description='Start the simulator; false when a real estimator '
                                          'and position fix publish the inputs (no scenario '
                                          'file is loaded then).'),
        DeclareLaunchArgument('input', default_value='',
                              description='An input bag (rosbag2 MCAP directory or .mcap, e.g. '
                                          "from ghost_import) the input player plays in "
                                          "place of the simulator, as ros2 bag play would; the "
                                          "launch ends when it is done ('' = none)."),
        DeclareLaunchArgument('speed', default_value='1',
                              description='With input:=, the playback speed (1 = the recorded '
                                          'pace).'),
        DeclareLaunchArgument('record', default_value='false',
                              description='Start the recorder (rosbag2-layout MCAP bag).'),
        DeclareLaunchArgument('bag', default_value='',
                              description="Bag directory for the recorder ('' = "
                                          'ghost_bag_<UTC time> in the working directory).'),
        DeclareLaunchArgument('px4', default_value='false',
                              description="Start px4_bridge instead of the simulator: PX4's "
                                          'uXRCE-DDS topics (fmu/out/vehicle_odometry, '
                                          'vehicle_local_position, vehicle_gps_position) become '
                                          'the inputs.'),
        DeclareLaunchArgument('mavros', default_value='false',
                              description='Start mavros_bridge instead of the simulator: '
                                          "MAVROS's topics (mavros/local_position/odom, "
                                          'global_position/raw/fix, state, extended_state; PX4 '
                                          'or ArduPilot behind it) become the inputs.'),
        DeclareLaunchArgument('ardupilot', default_value='false',
                              description="Start ap_bridge instead of the simulator: "
                                          "ArduPilot's AP_DDS topics (/ap/odometry/filtered or "
                                          '/ap/pose/filtered + /ap/twist/filtered, /ap/navsat, '
                                          '/ap/gps_global_origin/filtered, /ap/status) become '
                                          'the inputs.'),
        DeclareLaunchArgument('gate', default_value='', choices=['', *GATE_MODES],
                              description="The command gate between the mission and the "
                                          "vehicle: 'px4' (ghost/mission/trajectory_setpoint "
                                          '-> fmu/in/trajectory_setpoint, offboard_control_mode, '
                                          "vehicle_command), 'ardupilot' (cmd_vel_in -> "
                                          "/ap/cmd_vel, /ap/mode_switch), 'twist' (cmd_vel_in "
                                          "-> cmd_vel) or 'none'. '' = 'px4' with px4:=true, "
                                          "'ardupilot' with ardupilot:=true, else 'none'."),
        DeclareLaunchArgument('mission_setpoint_topic',
                              default_value='ghost/mission/trajectory_setpoint',
                              description='gate:=px4: where your mission publishes its '
                                          'px4_msgs/TrajectorySetpoint (the gate forwards it to '
                                          'fmu/in/trajectory_setpoint only on PROCEED).'),
        DeclareLaunchArgument('cmd_vel_in_topic', default_value='cmd_vel_in',
                              description='gate:=twist: where your mission publishes its '
                                          'Twist / TwistStamped.'),
        DeclareLaunchArgument('cmd_vel_topic', default_value='cmd_vel',
                              description='gate:=twist: where the gated twist goes, e.g. '
                                          '/mavros/setpoint_velocity/cmd_vel_unstamped.'),
        DeclareLaunchArgument('single_process', default_value='false',
                              description='Run the agent, monitor, bridge and gate nodes in '
                                          'one process on one executor (ghost_agent): the '
                                          'same topics and bag, at less cost. The sources and '
                                          'the recorder keep their own processes.'),
        DeclareLaunchArgument('executor', default_value=AGENT_EXECUTOR, choices=list(EXECUTORS),
                              description="What the agent's nodes spin, in one process or "
                                          "each in its own: 'events' (rclpy's experimental "
                                          "EventsExecutor) or 'single_threaded' (rclpy's "
                                          'SingleThreadedExecutor).'),
        DeclareLaunchArgument('graph_status', default_value='auto',
                              choices=['auto', 'true', 'false'],
                              description='Every node reports its matched endpoints on '
                                          "ghost/graph_status (readiness). 'auto': on when the "
                                          'scenario (or a player) runs, since it waits for '
                                          'those reports; off on a live vehicle.'),
        DeclareLaunchArgument('monitor', default_value='true',
                              description='Start the online monitor: /diagnostics at 1 Hz, '
                                          'each node OK/WARN/ERROR/STALE and BAUD-v1/ERUR-v1 '
                                          'judged on the live topics.'),
        DeclareLaunchArgument('namespace', default_value='',
                              description='ROS namespace of every Ghost node and topic, e.g. '
                                          "uav1 (/uav1/actuations); '' = the root namespace."),
        DeclareLaunchArgument('state_topic', default_value='state/nav',
                              description='Topic of the estimator odometry (belief); '
                                          'relative names resolve in the namespace.'),
        DeclareLaunchArgument('observations_topic', default_value='observations',
                              description='Topic of the independent position fix; relative '
                                          'names resolve in the namespace.'),
        *(DeclareLaunchArgument(setting.name, default_value='',
                                choices=['', *setting.choices] if setting.choices else None,
                                description=f"{setting.description} '' = the configuration "
                                            'files.')
          for setting in AGENT_SETTINGS),
        DeclareLaunchArgument('params_file', default_value='',
                              description='Your own parameter file, loaded after every other '
                                          '(sections /**/<node> match in any namespace).'),
        DeclareLaunchArgument('signing_key', default_value='',
                              description='Ed25519 private key (PEM, from ghost_keygen) that '
                                          "signs the recorder's manifest.json ('' = unsigned)."),
        DeclareLaunchArgument('enclave_prefix', default_value='',
                              description="SROS2: run each node in the enclave "
                                          "<enclave_prefix>/<node name> ('' = no enclave; "
                                          'set ROS_SECURITY_* as docs/reliability.md says).'),
        DeclareLaunchArgument('config_dir', default_value='',
                              description='Folder with ghost.yaml and scenarios/ '
                                          "('' = share/ghost/config)."),
    ]
