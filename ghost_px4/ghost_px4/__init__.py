"""ghost_px4: PX4 for Ghost: ULog import and playback, PX4 conversions, the live bridge.

The only package that reads pyulog or px4_msgs; the agent (ghost_nodes) runs without it.
"""
