"""The ArduPilot nodes: ap_bridge, ap_log_player, ap_mission."""
