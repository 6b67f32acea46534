"""Named QoS profiles of the Ghost graph (SPEC section 2)."""

from rclpy.qos import QoSDurabilityPolicy, QoSHistoryPolicy, QoSProfile, QoSReliabilityPolicy

from ghost_core.graph import INPUT_QOS_CHOICES, QosClass, TOPIC_QOS

__all__ = ['AP_COMMAND_QOS', 'AP_QOS', 'AP_STATUS_QOS', 'COMMAND_QOS', 'CONFIGURATION_QOS',
           'DIAGNOSTICS_QOS', 'GHOST_QOS', 'GHOST_QOS_DEPTH',
           'INPUT_QOS_CHOICES', 'input_qos', 'PX4_QOS', 'topic_qos']

#: History depth: at 1 kHz this is one second of messages, so no cycle is dropped while a slow
#: subscriber catches up at the benchmarked rates.
GHOST_QOS_DEPTH = 1000

#: Every ghost topic: reliable, volatile, deep history.
GHOST_QOS = QoSProfile(
    reliability=QoSReliabilityPolicy.RELIABLE,
    durability=QoSDurabilityPolicy.VOLATILE,
    history=QoSHistoryPolicy.KEEP_LAST,
    depth=GHOST_QOS_DEPTH,
)

#: /diagnostics (the monitor): reliable, volatile, a short history, as diagnostic_updater and
#: the aggregator use it; a best-effort reader (Foxglove, ``ros2 topic echo``) matches too.
DIAGNOSTICS_QOS = QoSProfile(
    reliability=QoSReliabilityPolicy.RELIABLE,
    durability=QoSDurabilityPolicy.VOLATILE,
    history=QoSHistoryPolicy.KEEP_LAST,
    depth=10,
)

#: Configuration changes (ghost/configuration): reliable, transient-local, keep-last 100, so
#: that a recorder started after a change still receives it.
CONFIGURATION_QOS = QoSProfile(
    reliability=QoSReliabilityPolicy.RELIABLE,
    durability=QoSDurabilityPolicy.TRANSIENT_LOCAL,
    history=QoSHistoryPolicy.KEEP_LAST,
    depth=100,
)

#: PX4's uXRCE-DDS topics: best-effort, transient-local, keep-last (PX4's ROS 2 examples; a
#: reliable reader would not match PX4's best-effort writers). Depth 5 as px4_ros_com's
#: listeners: the bridge converts each sample at once, so a short queue loses nothing.
PX4_QOS = QoSProfile(
    reliability=QoSReliabilityPolicy.BEST_EFFORT,
    durability=QoSDurabilityPolicy.TRANSIENT_LOCAL,
    history=QoSHistoryPolicy.KEEP_LAST,
    depth=5,
)

#: ArduPilot's AP_DDS topics (AP_DDS_Topic_Table.h): best-effort, volatile, keep-last 5.
AP_QOS = QoSProfile(
    reliability=QoSReliabilityPolicy.BEST_EFFORT,
    durability=QoSDurabilityPolicy.VOLATILE,
    history=QoSHistoryPolicy.KEEP_LAST,
    depth=5,
)
#: /ap/status: reliable, transient-local, keep-last 1 (a late reader gets the current status).
AP_STATUS_QOS = QoSProfile(
    reliability=QoSReliabilityPolicy.RELIABLE,
    durability=QoSDurabilityPolicy.TRANSIENT_LOCAL,
    history=QoSHistoryPolicy.KEEP_LAST,
    depth=1,
)
#: /ap/cmd_vel: AP_DDS reads it best-effort, volatile, depth 5; a reliable writer matches it.
#: Reliable, so that a recorder (reliable by default) records what the gate sent.
AP_COMMAND_QOS = QoSProfile(
    reliability=QoSReliabilityPolicy.RELIABLE,
    durability=QoSDurabilityPolicy.VOLATILE,
    history=QoSHistoryPolicy.KEEP_LAST,
    depth=5,
)
#: The command topics in and out: reliable, volatile, keep last 10 (the ROS default profile).
#: Out: PX4's uXRCE-DDS client reads fmu/in/* best-effort, volatile, keep-last (its
#: create_data_reader), which matches any writer; px4_ros_com's offboard examples publish with
#: this profile, and being reliable a reliable reader (a recorder, a test) matches it too.
#: In: a setpoint is a command, not a sensor sample: reliable, so none is lost silently between
#: the mission and the gate; volatile, so a gate started late never acts on an old one. A
#: best-effort mission writer does not match (rclpy logs the incompatible QoS).
COMMAND_QOS = QoSProfile(
    reliability=QoSReliabilityPolicy.RELIABLE,
    durability=QoSDurabilityPolicy.VOLATILE,
    history=QoSHistoryPolicy.KEEP_LAST,
    depth=10,
)


def input_qos(reliability: str) -> QoSProfile:
    """QoS for the input subscriptions (/state/nav, /observations).

    'best_effort' (default) matches every writer: the best-effort ones of PX4's uXRCE-DDS
    bridge and MAVROS (``SensorDataQoS``) and reliable ones alike; a sample lost on the way is
    a cycle the loop does not see (no retransmission). 'reliable' retransmits but matches only
    reliable writers: nothing is received from a best-effort one.
    """
    policies = {'reliable': QoSReliabilityPolicy.RELIABLE,
                'best_effort': QoSReliabilityPolicy.BEST_EFFORT}
    if reliability not in policies:
        raise ValueError(f"input_qos must be 'best_effort' or 'reliable', got {reliability!r}")
    return QoSProfile(reliability=policies[reliability],
                      durability=QoSDurabilityPolicy.VOLATILE,
                      history=QoSHistoryPolicy.KEEP_LAST, depth=GHOST_QOS_DEPTH)


def topic_qos(topic: str, input_reliability: str = 'best_effort') -> QoSProfile:
    """The profile of a graph topic (``ghost_core.graph.TOPIC_QOS``, by its default name).

    The inputs take ``input_reliability`` (the ``input_qos`` parameter, ``input_qos``).
    """
    qos_class = TOPIC_QOS[topic]
    if qos_class == QosClass.INPUT:
        return input_qos(input_reliability)
    return {QosClass.GHOST: GHOST_QOS, QosClass.PX4: PX4_QOS, QosClass.COMMAND: COMMAND_QOS,
            QosClass.AP: AP_QOS, QosClass.AP_STATUS: AP_STATUS_QOS,
            QosClass.AP_COMMAND: AP_COMMAND_QOS,
            QosClass.DIAGNOSTICS: DIAGNOSTICS_QOS,
            QosClass.CONFIGURATION: CONFIGURATION_QOS}[qos_class]
