"""Launch Ghost's closed loop: the node graph of ghost_nodes.graph, optionally recorded.

    ros2 launch ghost closed_loop.launch.py scenario:=drift_then_recovery record:=true
    ros2 launch ghost closed_loop.launch.py use_scenario:=false state_topic:=/ekf/odom \
        observations_topic:=/rtk/pose
    ros2 launch ghost closed_loop.launch.py record:=true signing_key:=keys/ghost
    ros2 launch ghost closed_loop.launch.py enclave_prefix:=/ghost   # SROS2: one enclave a node

The graph (nodes, parameter files, parameter overrides, remaps) comes from
ghost_nodes.graph.closed_loop_graph, the same function the no-ROS runner uses.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from ghost_nodes.graph import closed_loop_graph, SCENARIOS


def _truthy(text: str) -> bool:
    return text.strip().lower() in ('1', 'true', 'yes', 'on')


def _node_parameters(parameters):
    """The Node action's parameter dict: the recorder's run_config kept a string.

    launch_ros reads a plain string parameter as YAML, which would turn the JSON object of
    run_config into a mapping (and refuse it); ParameterValue(value_type=str) keeps it text.
    """
    parameters = dict(parameters)
    if 'run_config' in parameters:
        try:
            from launch_ros.parameter_descriptions import ParameterValue
        except ImportError:  # launch_ros without parameter_descriptions (a stand-in)
            return parameters
        parameters['run_config'] = ParameterValue(parameters['run_config'], value_type=str)
    return parameters


def _graph(context, *args, **kwargs):
    config_dir = LaunchConfiguration('config_dir').perform(context) or os.path.join(
        get_package_share_directory('ghost'), 'config')
    remaps = {}
    for default, arg in (('/state/nav', 'state_topic'), ('/observations', 'observations_topic')):
        value = LaunchConfiguration(arg).perform(context)
        if value and value != default:
            remaps[default] = value
    # The key's path only: the recorder reads the key and never copies it anywhere.
    signing_key = LaunchConfiguration('signing_key').perform(context)
    overrides = {'recorder': {'signing_key': os.path.abspath(os.path.expanduser(
        signing_key))}} if signing_key else None
    specs = closed_loop_graph(
        config_dir,
        scenario=LaunchConfiguration('scenario').perform(context),
        record=_truthy(LaunchConfiguration('record').perform(context)),
        bag_path=LaunchConfiguration('bag').perform(context),
        with_scenario=_truthy(LaunchConfiguration('use_scenario').perform(context)),
        remaps=remaps, overrides=overrides)
    # SROS2: each node runs in its own enclave, <prefix>/<node> (docs/reliability.md).
    prefix = LaunchConfiguration('enclave_prefix').perform(context).rstrip('/')
    return [
        Node(package=spec.package, executable=spec.executable, name=spec.name,
             parameters=[*spec.param_files, _node_parameters(spec.parameters)],
             remappings=list(spec.remaps), output='screen',
             **({'ros_arguments': ['--enclave', f'{prefix}/{spec.name}']} if prefix else {}))
        for spec in specs
    ]


def generate_launch_description() -> LaunchDescription:
    """Declare the arguments; the graph itself is built once they are known."""
    return LaunchDescription([
        DeclareLaunchArgument('scenario', default_value='drift_then_recovery',
                              choices=list(SCENARIOS),
                              description='Scenario the simulator plays.'),
        DeclareLaunchArgument('use_scenario', default_value='true',
                              description='Start the simulator; false when a real estimator '
                                          'and position fix publish the inputs.'),
        DeclareLaunchArgument('record', default_value='false',
                              description='Start the recorder (rosbag2-layout MCAP bag).'),
        DeclareLaunchArgument('bag', default_value='',
                              description="Bag directory for the recorder ('' = "
                                          'ghost_bag_<UTC time>).'),
        DeclareLaunchArgument('signing_key', default_value='',
                              description='Ed25519 private key (PEM, from ghost_keygen) that '
                                          "signs the recorder's manifest.json ('' = unsigned)."),
        DeclareLaunchArgument('state_topic', default_value='/state/nav',
                              description='Topic of the estimator odometry (belief).'),
        DeclareLaunchArgument('observations_topic', default_value='/observations',
                              description='Topic of the independent position fix.'),
        DeclareLaunchArgument('enclave_prefix', default_value='',
                              description="SROS2: run each node in the enclave "
                                          "<enclave_prefix>/<node name> ('' = no enclave; "
                                          'set ROS_SECURITY_* as docs/reliability.md says).'),
        DeclareLaunchArgument('config_dir', default_value='',
                              description='Folder with ghost.yaml and scenarios/ '
                                          "('' = share/ghost/config)."),
        OpaqueFunction(function=_graph),
    ])
