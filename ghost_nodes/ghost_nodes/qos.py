"""Named QoS profiles of the Ghost graph (SPEC section 2)."""

from rclpy.qos import QoSDurabilityPolicy, QoSHistoryPolicy, QoSProfile, QoSReliabilityPolicy

__all__ = ['GHOST_QOS', 'GHOST_QOS_DEPTH', 'input_qos']

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


def input_qos(reliability: str) -> QoSProfile:
    """QoS for /state/nav and /observations subscriptions.

    'reliable' (default) loses nothing but matches only reliable publishers; 'best_effort'
    also matches sensor-data publishers (many EKF bridges) at the price of possible loss.
    """
    policies = {'reliable': QoSReliabilityPolicy.RELIABLE,
                'best_effort': QoSReliabilityPolicy.BEST_EFFORT}
    if reliability not in policies:
        raise ValueError(f"input_reliability must be 'reliable' or 'best_effort', "
                         f'got {reliability!r}')
    return QoSProfile(reliability=policies[reliability],
                      durability=QoSDurabilityPolicy.VOLATILE,
                      history=QoSHistoryPolicy.KEEP_LAST, depth=GHOST_QOS_DEPTH)
