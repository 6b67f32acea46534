"""The ArduPilot nodes' parameters, as data (no rclpy): what they declare, what the page shows."""

from __future__ import annotations

from collections.abc import Mapping

from ghost_core.parameters import non_negative, one_of, ParamSpec, positive
from ghost_nodes.node_parameters import SOURCE_PARAMS

__all__ = ['PARAMETERS']

#: Where ap_bridge takes its belief from (ghost_ardupilot.bridge.BRIDGE_SOURCES).
_SOURCES = ('auto', 'odometry', 'pose_twist')

_AP_BRIDGE = (
    ParamSpec('source', 'auto', "Where the belief (state/nav) comes from: 'auto' "
              '(/ap/odometry/filtered, with the EKF variances, from the first one received; '
              'until then /ap/pose/filtered + /ap/twist/filtered, which carry no covariance: '
              "judged UNKNOWN), 'odometry' (only /ap/odometry/filtered) or 'pose_twist' "
              '(only pose and twist: Ghost abstains).', (one_of(_SOURCES),), read_only=True),
    ParamSpec('gps_delay_ms', 220.0, 'GNSS lag (ms) ArduPilot compensates its fixes for '
              "(GPS1_DELAY_MS / GPS_DELAY_MS, else the driver's lag; 220 is ArduPilot's worst "
              "case): a /ap/navsat fix is stamped at its stamp minus this.", (non_negative,),
              read_only=True),
    ParamSpec('gnss_height', False, "The EKF's height follows GNSS (EK3_SRC1_POSZ = 3): only "
              "then is the fix's vertical axis compared; otherwise it is marked not measured "
              '(variance 1e6 m^2).', read_only=True),
    ParamSpec('max_twist_age_s', 0.1, 'With beliefs from pose and twist: how far (s) the '
              '/ap/twist/filtered held may be from the pose; farther or none, the pose is '
              'dropped.', (non_negative,), read_only=True),
)

_AP_LOG_PLAYER = (
    ParamSpec('log', '', 'The ArduPilot flight log (DataFlash, .bin) to play. Required: a '
              'missing or unreadable file, not DataFlash, or a log without EKF3 state (XKF1) is '
              'refused at start-up.', read_only=True),
    ParamSpec('speed', 1.0, "Playback speed: 1 = the log's own pace (by TimeUS), 10 = ten "
              'times faster.', (positive,), read_only=True),
    ParamSpec('odometry', True, 'Publish /ap/odometry/filtered (the EKF3 state with its XKV '
              'variances, as the proposed AP_DDS publisher would); false: only pose and twist, '
              'as released AP_DDS firmware does.', read_only=True),
    ParamSpec('exit_when_done', False, 'Exit (code 0) a second after the last message, so a '
              'runner knows the log is over (ghost_run --ardupilot-log sets it).',
              read_only=True),
    *SOURCE_PARAMS,
)

_AP_MISSION = (
    ParamSpec('rate_hz', 10.0, 'cmd_vel messages per second (wall clock): more than the '
              '3 s GUID_TIMEOUT after which Copter stops by itself.', (positive,),
              read_only=True),
    ParamSpec('frame_id', 'map', "The cmd_vel's frame: 'map' (ENU) or 'base_link' (FLU), the "
              'two AP_DDS accepts.', (one_of(('map', 'base_link')),), read_only=True),
    ParamSpec('linear', [0.5, 0.0, 0.0], 'The velocity (m/s) the stand-in mission asks for, '
              'in frame_id.', read_only=True),
)

#: Each ArduPilot node's own parameters (beside ghost_nodes' COMMON_PARAMS), by node name.
PARAMETERS: Mapping[str, tuple[ParamSpec, ...]] = {
    'ap_bridge': _AP_BRIDGE,
    'ap_log_player': _AP_LOG_PLAYER,
    'ap_mission': _AP_MISSION,
}
