"""ghost_ardupilot: ArduPilot for Ghost (DataFlash log import, ArduPilot's own events)."""

__version__ = '0.1.0'
