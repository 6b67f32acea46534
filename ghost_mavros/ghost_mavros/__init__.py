"""ghost_mavros: MAVROS for Ghost, on PX4 or ArduPilot: the mavros_bridge node and its rules.

The only package that imports mavros_msgs (when the node starts); the agent runs without it.
"""
