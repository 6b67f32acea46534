"""Ghost's closed loop as ROS 2 nodes: thin adapters over ghost_core."""

__all__ = ['convert', 'errors', 'frames', 'graph', 'launcher', 'sequencing']
