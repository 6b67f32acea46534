"""ghost: the bringup. Graph options -> processes (bringup, launcher), ghost_run, ghost_replay.

The launch file and config/ are installed by this package too (share/ghost).
"""
