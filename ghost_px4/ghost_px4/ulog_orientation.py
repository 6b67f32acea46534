"""The attitude and its uncertainty at a belief's stamp, read from every PX4 generation's log.

Pure (no rclpy, no px4_msgs). The importer (ghost_import) takes a belief's attitude and
orientation uncertainty from here; the log player (ghost_px4.ulog_topics) composes a
vehicle_odometry from the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Self

import numpy

from ghost_core.geometry import Matrix3, Vector3
from ghost_px4 import convert as px4
from ghost_px4 import live
from ghost_px4.ulog_read import (
    dataset,
    has,
    latest_at_or_before,
    log_times_ns,
    nearest_within,
    px4_version,
    stamps_ns,
)

__all__ = [
    'ATTITUDE_MAX_AGE_NS',
    'ESTIMATOR_STATUS_MAX_AGE_NS',
    'ORIENTATION_TOPICS',
    'Orientation',
    'SOURCE_ODOMETRY_BODY',
    'SOURCE_ODOMETRY_URT',
    'SOURCE_STATES_QUATERNION',
    'SOURCE_STATES_ROTATION',
    'SOURCE_STATUS_QUATERNION',
    'SOURCE_TILT_HEADING',
]

#: The attitude used for a belief is the latest vehicle_attitude at or before its stamp, at most
#: this old (vehicle_attitude is logged at 25-100 Hz).
ATTITUDE_MAX_AGE_NS = 100_000_000
#: The attitude uncertainty is the estimator_status / estimator_states sample nearest the stamp,
#: at most this far from it (``nearest_within``): they are logged at 1-5 Hz, the FMUv3 log has
#: logger gaps of up to 1.4 s, and the variances change over seconds, so a sample 2 s away is
#: still the EKF's claim.
ESTIMATOR_STATUS_MAX_AGE_NS = 2_000_000_000

#: The log topics the orientation uncertainty may come from (and the primary EKF instance).
ORIENTATION_TOPICS = ('vehicle_attitude', 'estimator_status', 'estimator_states',
                      'estimator_selector_status')
#: Where a belief's orientation uncertainty was read (the importer's summary counts them).
SOURCE_TILT_HEADING = 'vehicle_local_position.tilt_var/heading_var'
SOURCE_STATES_ROTATION = 'estimator_states.covariances[0..2] (rotation error, PX4 1.15+)'
SOURCE_STATES_QUATERNION = 'estimator_states.covariances[0..3] (quaternion, PX4 1.12-1.14)'
SOURCE_STATUS_QUATERNION = 'estimator_status.covariances[0..3] (quaternion, PX4 up to 1.11)'
SOURCE_ODOMETRY_BODY = 'vehicle_odometry.orientation_variance (body axes, PX4 1.14+)'
SOURCE_ODOMETRY_URT = 'vehicle_odometry.pose_covariance (PX4 1.10-1.13)'


def _instances(ulog: Any, name: str) -> dict[int, dict[str, numpy.ndarray]]:
    return {item.multi_id: dict(item.data) for item in ulog.data_list if item.name == name}


@dataclass(slots=True)
class _Instances:
    """A multi-instance estimator topic (one dataset per EKF2 instance) and its stamps."""

    data: dict[int, dict[str, numpy.ndarray]]
    times: dict[int, numpy.ndarray]

    @classmethod
    def of(cls, ulog: Any, name: str, *columns: str) -> _Instances | None:
        data = {k: v for k, v in _instances(ulog, name).items() if has(v, 'timestamp', *columns)}
        if not data:
            return None
        return cls(data, {k: stamps_ns(v) for k, v in data.items()})


@dataclass(slots=True)
class Orientation:
    """Attitude and its uncertainty, looked up per belief stamp, from every PX4 generation.

    The uncertainty comes from the first of these that states it at the stamp (docs/real-data.md):
    the local-position sample's own ``tilt_var``/``heading_var`` (PX4 1.15+; given by the
    caller), ``estimator_states.covariances`` of the primary EKF2 instance (rotation-error
    states from PX4 1.15, quaternion states before, chosen by the log's version, else by
    ``n_states``), ``estimator_status.covariances`` (quaternion states, PX4 up to 1.11).
    Every result is a rotation covariance about the NED axes.
    """

    attitude: dict[str, numpy.ndarray] | None
    attitude_times: numpy.ndarray
    status: _Instances | None
    states: _Instances | None
    states_rotation_error: bool
    primary_times: numpy.ndarray
    primary: numpy.ndarray

    @classmethod
    def of(cls, ulog: Any) -> Self:
        """The log's attitude and uncertainty topics (read with ORIENTATION_TOPICS loaded)."""
        attitude = dataset(ulog, 'vehicle_attitude')
        status = _Instances.of(ulog, 'estimator_status', *(f'covariances[{i}]' for i in range(4)))
        states = _Instances.of(ulog, 'estimator_states', *(f'covariances[{i}]' for i in range(4)))
        version = px4_version(ulog)
        if version is not None:
            rotation_error = version >= (1, 15, 0)
        else:  # no version: PX4 1.16+ logs 25 states (nominal quaternion + 21 + terrain)
            rotation_error = states is not None and any(
                int(numpy.max(d['n_states'])) >= 25 for d in states.data.values()
                if 'n_states' in d and len(d['n_states']))
        selector = dataset(ulog, 'estimator_selector_status')
        empty = numpy.zeros(0, dtype=numpy.int64)
        if selector is not None and has(selector, 'timestamp', 'primary_instance'):
            primary_times = log_times_ns(selector)
            primary = numpy.asarray(selector['primary_instance'], dtype=numpy.int64)
        else:
            primary_times, primary = empty, empty
        return cls(attitude, stamps_ns(attitude) if attitude else empty, status, states,
                   rotation_error, primary_times, primary)

    def primary_instance(self, stamp_ns: int) -> int:
        """The EKF2 instance PX4 had selected at ``stamp_ns`` (estimator_selector_status).

        The latest selection at or before the stamp, else the first one logged; 0 without the
        topic (a single EKF).
        """
        if len(self.primary) == 0:
            return 0
        index = int(numpy.searchsorted(self.primary_times, stamp_ns, side='right')) - 1
        return int(self.primary[max(index, 0)])

    def quaternion(self, stamp_ns: int) -> tuple[tuple[float, ...], Vector3] | None:
        """PX4 q [w, x, y, z] and body rates (FRD) of the latest attitude, or None."""
        if self.attitude is None:
            return None
        index = latest_at_or_before(self.attitude_times, stamp_ns, ATTITUDE_MAX_AGE_NS)
        if index is None:
            return None
        a = self.attitude
        q = tuple(float(a[f'q[{i}]'][index]) for i in range(4))
        rates: Vector3 = (0.0, 0.0, 0.0)
        if has(a, 'rollspeed', 'pitchspeed', 'yawspeed'):
            rates = live.carried_rates(
                (a['rollspeed'][index], a['pitchspeed'][index], a['yawspeed'][index]))
        return q, rates

    def covariance(self, stamp_ns: int, q_wxyz: Sequence[float],
                   tilt_heading: tuple[float, float] | None = None
                   ) -> tuple[Matrix3, str] | str:
        """(rotation covariance about NED, its source), or why no source states one.

        ``tilt_heading``: the belief sample's own ``tilt_var``/``heading_var`` when its topic
        logs them (tried first).
        """
        why: list[str] = []
        if tilt_heading is not None:
            try:
                cov = px4.tilt_heading_covariance_ned(*tilt_heading)
            except ValueError:
                cov, reason = None, 'tilt_var/heading_var not finite or negative'
            else:
                reason = 'tilt_var/heading_var both 0 (EKF not initialised)'
            if cov is not None:
                return cov, SOURCE_TILT_HEADING
            why.append(reason)
        for found in (self._from_states(stamp_ns, q_wxyz), self._from_status(stamp_ns, q_wxyz)):
            if isinstance(found, tuple):
                return found
            if found:
                why.append(found)
        if not why:
            return 'no orientation uncertainty is logged (estimator_status.covariances, '\
                   'estimator_states, tilt_var/heading_var)'
        return '; '.join(why)

    def _lookup(self, topic: _Instances | None, stamp_ns: int
                ) -> tuple[dict[str, numpy.ndarray], int] | str:
        assert topic is not None
        instance = self.primary_instance(stamp_ns)
        data = topic.data.get(instance)
        if data is None:
            return f'primary EKF2 instance {instance} not logged'
        index = nearest_within(topic.times[instance], stamp_ns, ESTIMATOR_STATUS_MAX_AGE_NS)
        if index is None:
            return f'none within {ESTIMATOR_STATUS_MAX_AGE_NS // 10**9} s'
        return data, index

    def _from_states(self, stamp_ns: int, q_wxyz: Sequence[float]
                     ) -> tuple[Matrix3, str] | str:
        if self.states is None:
            return ''
        found = self._lookup(self.states, stamp_ns)
        if isinstance(found, str):
            return f'estimator_states: {found}'
        data, index = found
        try:
            if self.states_rotation_error:
                cov = px4.rotation_error_covariance_ned(
                    [float(data[f'covariances[{i}]'][index]) for i in range(3)])
                source = SOURCE_STATES_ROTATION
            else:
                cov = px4.attitude_covariance_ned(
                    q_wxyz, [float(data[f'covariances[{i}]'][index]) for i in range(4)])
                source = SOURCE_STATES_QUATERNION
        except ValueError:
            return 'estimator_states: variances not finite or negative'
        if cov is None:
            return 'estimator_states: variances all zero (EKF not initialised)'
        return cov, source

    def _from_status(self, stamp_ns: int, q_wxyz: Sequence[float]
                     ) -> tuple[Matrix3, str] | str:
        if self.status is None:
            return ''
        found = self._lookup(self.status, stamp_ns)
        if isinstance(found, str):
            return f'estimator_status: {found}'
        data, index = found
        try:
            cov = px4.attitude_covariance_ned(
                q_wxyz, [float(data[f'covariances[{i}]'][index]) for i in range(4)])
        except ValueError:
            return 'estimator_status: quaternion variances not finite or negative'
        if cov is None:
            return 'estimator_status: quaternion variances all zero (EKF not initialised)'
        return cov, SOURCE_STATUS_QUATERNION
