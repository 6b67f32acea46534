"""The MAVROS bridge's parameters, as data (no rclpy): what it declares, what the page shows."""

from __future__ import annotations

from collections.abc import Mapping

from ghost_core.parameters import non_negative, one_of, ParamSpec, positive

__all__ = ['PARAMETERS']

_MAVROS_BRIDGE = (
    ParamSpec('fix_source', 'navsat', "Where the fixes (observations) come from: 'navsat' "
              '(/mavros/global_position/raw/fix, sensor_msgs/NavSatFix with the covariance '
              "MAVROS computed; altitude above the WGS84 ellipsoid) or 'gpsraw' "
              '(/mavros/gpsstatus/gps1/raw, mavros_msgs/GPSRAW: h_acc/v_acc, else eph/epv '
              'times gps_uere_m; altitude MSL).', (one_of(('navsat', 'gpsraw')),),
              read_only=True),
    ParamSpec('autopilot', 'auto', "The autopilot behind MAVROS, named in the bridge's "
              "reasons: 'auto' (from /mavros/state's mode names), 'px4' or 'ardupilot'.",
              (one_of(('auto', 'px4', 'ardupilot')),), read_only=True),
    ParamSpec('origin', '', "The autopilot's EKF origin as 'LAT,LON,ALT' (degrees, degrees, "
              "metres in the fix source's datum: navsat ellipsoid, gpsraw MSL), as the "
              "autopilot reports it (MAVLink GPS_GLOBAL_ORIGIN; not MAVROS 2's gp_origin "
              "topic, which holds ECEF metres). '': fixes are anchored at the first usable fix "
              'and the belief held then (a constant offset present then goes unseen).',
              read_only=True),
    ParamSpec('gnss_height', False, "The EKF's height follows GNSS (ArduPilot EK3_SRC1_POSZ=3, "
              "PX4 EKF2_HGT_REF=1). False: the fix's vertical axis is marked not measured "
              '(variance 1e6 m^2).', read_only=True),
    ParamSpec('gps_delay_ms', 0.0, 'GNSS measurement delay (ms): a fix is stamped at its '
              'header stamp minus this (ArduPilot GPS_DELAY_MS, PX4 EKF2_GPS_DELAY).',
              (non_negative,), read_only=True),
    ParamSpec('gps_uere_m', 1.0, "fix_source 'gpsraw' without h_acc/v_acc: the user "
              "equivalent range error (m) the DOPs are scaled by (MAVROS's gps_uere).",
              (positive,), read_only=True),
)

#: Each MAVROS node's own parameters (beside ghost_nodes' COMMON_PARAMS), by node name.
PARAMETERS: Mapping[str, tuple[ParamSpec, ...]] = {'mavros_bridge': _MAVROS_BRIDGE}
