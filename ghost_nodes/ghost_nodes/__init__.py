"""Ghost's closed loop as ROS 2 nodes: thin adapters over ghost_core."""
