"""PX4 nodes: the uXRCE-DDS bridge, the flight-log player, the stand-in mission."""
