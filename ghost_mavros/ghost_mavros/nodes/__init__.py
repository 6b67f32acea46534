"""The MAVROS nodes."""
