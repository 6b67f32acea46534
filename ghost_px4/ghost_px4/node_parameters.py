"""The PX4 nodes' parameters, as data (no rclpy): what they declare, what the page shows."""

from __future__ import annotations

from collections.abc import Mapping

from ghost_core.parameters import at_least, at_most, non_negative, one_of, ParamSpec, positive
from ghost_nodes.node_parameters import SOURCE_PARAMS

__all__ = ['BRIDGE_SOURCES', 'PARAMETERS']

#: Where px4_bridge takes its belief from.
BRIDGE_SOURCES = ('vehicle_odometry', 'vehicle_local_position')

_PX4_BRIDGE = (
    ParamSpec('source', 'vehicle_odometry', "Where the belief (state/nav) comes from: "
              "'vehicle_odometry' (fmu/out/vehicle_odometry: pose, velocity, attitude and "
              "their variances) or 'vehicle_local_position' (fmu/out/vehicle_local_position: "
              'eph/epv/evh/evv and validity flags; attitude from the latest '
              'vehicle_odometry).', (one_of(BRIDGE_SOURCES),), read_only=True),
    ParamSpec('gps_delay_ms', 110.0, 'GNSS measurement delay (ms), PX4 EKF2_GPS_DELAY (its '
              'default is 110): a fix is stamped at its sample time minus this.',
              (non_negative,), read_only=True),
    ParamSpec('ekf2_hgt_ref', -1, "The vehicle's EKF2_HGT_REF (0 baro, 1 GNSS, 2 range, "
              "3 vision; -1 unknown). Unless 1, the fix's vertical axis is marked not "
              'measured (variance 1e6 m^2): the EKF height does not follow GNSS.',
              (at_least(-1), at_most(3)), read_only=True),
    ParamSpec('max_attitude_age_s', 0.1, "With source 'vehicle_local_position': the oldest "
              'vehicle_odometry attitude (s before the position sample) a belief may use; '
              "older or none, the sample is dropped. With source 'vehicle_odometry': how far "
              "(s) a vehicle_local_position's validity flags may be from an odometry sample "
              'to mark it (the same EKF2 cycle).', (non_negative,), read_only=True),
)


_PX4_LOG_PLAYER = (
    ParamSpec('log', '', 'The PX4 flight log (ULog, .ulg) to play. Required: a missing or '
              'unreadable file, not a ULog, or a log with neither vehicle_odometry nor '
              'vehicle_local_position is refused at start-up.', read_only=True),
    ParamSpec('speed', 1.0, "Playback speed: 1 = the log's own pace (by timestamp), "
              '10 = ten times faster. Nothing is re-sent on best-effort topics: a reader with '
              'a short queue may lose samples at high speeds.', (positive,), read_only=True),
    ParamSpec('start_s', 0.0, 'Play from this many seconds after the start of the log (its '
              'first logged timestamp).', (non_negative,), read_only=True),
    ParamSpec('duration_s', 0.0, 'Play this many seconds of log from start_s; 0 = to the end.',
              (non_negative,), read_only=True),
    ParamSpec('derive_odometry', True, 'When the log has no vehicle_odometry: publish one '
              'per vehicle_local_position sample, from it, vehicle_attitude and '
              "estimator_status, as ghost_import composes its beliefs (so px4_bridge's "
              'default source works on older logs). False: publish none.', read_only=True),
    ParamSpec('exit_when_done', False, 'Exit (code 0) EXIT_LINGER_S after the last message, '
              'so a runner knows the log is over (ghost_run --px4-ulog sets it); false: stay '
              'up, publishing nothing more, until stopped.', read_only=True),
    *SOURCE_PARAMS,
)


_MISSION_SETPOINTS = (
    ParamSpec('rate_hz', 10.0, 'Setpoints per second (wall clock).', (positive,),
              read_only=True),
    ParamSpec('hover_s', 5.0, 'Seconds of vehicle (PX4) time holding the start point before '
              'the square.', (non_negative,), read_only=True),
    ParamSpec('side_m', 10.0, "Side of the square (m), flown at the start point's height: "
              'north, east, south, west.', (positive,), read_only=True),
    ParamSpec('speed_m_s', 1.0, 'Speed along the square (m/s).', (positive,), read_only=True),
)


#: Each PX4 node's own parameters (beside ghost_nodes' COMMON_PARAMS), by node name.
PARAMETERS: Mapping[str, tuple[ParamSpec, ...]] = {
    'px4_bridge': _PX4_BRIDGE,
    'px4_log_player': _PX4_LOG_PLAYER,
    'mission_setpoints': _MISSION_SETPOINTS,
}
