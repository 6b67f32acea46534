"""Frame handling at the edge: Odometry twists are expressed in the child (body) frame.

The conversion is pure and lives in ``ghost_core.ros_inputs``, so that the nodes, the offline
replay and the verifier's re-derivation (``verify_all --replay``) convert a recorded belief
with the very same arithmetic; this module is its name on the runtime side.
"""

from ghost_core.ros_inputs import belief_sample, body_twist_in_parent, rotation_matrix

__all__ = ['belief_sample', 'body_twist_in_parent', 'rotation_matrix']
