"""The vehicle statuses of a PX4 ULog, for the input bag ``ghost_import`` writes.

Before each belief whose status is due (``ghost_px4.status.StatusReporter``: the first, a
change, a heartbeat), a /vehicle_status message stamped with the belief's stamp and written
at its log time: the status of the latest ``vehicle_status``, ``vehicle_land_detected`` and
``mission_result`` samples logged at or before that stamp (``ghost_px4.status``'s rules, as
px4_bridge applies them live). Each log's own fields are read: a log without
``vehicle_status`` gives no status at all (the decisions' context is then UNKNOWN), one
without ``vehicle_land_detected`` (or its ``landed`` field) says ARMED rather than guess
whether the vehicle flies, one without ``mission_result`` (or its ``valid``, ``finished`` and
``failure`` fields) tells the mission by the navigation state alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy

from ghost_core.vehicle import MissionPlan
from ghost_core.wire import to_msg_dict
from ghost_px4.live import FRAME_ID
from ghost_px4.status import Px4Status, StatusReporter
from ghost_px4.ulog_read import column, dataset, has, log_times_ns

__all__ = ['STATUS_TOPICS', 'UlogStatus', 'import_statuses']

#: The log topics the statuses are read from.
STATUS_TOPICS = ('vehicle_status', 'vehicle_land_detected', 'mission_result')
#: The mission_result fields a plan is read from (ghost_core.vehicle.MissionPlan).
_PLAN_FIELDS = ('valid', 'finished', 'failure')


def _latest(times: numpy.ndarray, stamp_ns: int) -> int | None:
    index = int(numpy.searchsorted(times, stamp_ns, side='right')) - 1
    return index if index >= 0 else None


@dataclass(frozen=True, slots=True)
class UlogStatus:
    """A log's status columns: arming and nav state, landed, the plan (None: not logged)."""

    status_times: numpy.ndarray
    arming_state: numpy.ndarray
    nav_state: numpy.ndarray
    land_times: numpy.ndarray | None
    landed: numpy.ndarray | None
    plan_times: numpy.ndarray | None = None
    #: One row per mission_result sample: valid, finished, failure.
    plans: numpy.ndarray | None = None

    @classmethod
    def of(cls, ulog: Any) -> UlogStatus | None:
        """The log's status columns; None when it logs no usable vehicle_status."""
        status = dataset(ulog, 'vehicle_status')
        if status is None or not has(status, 'timestamp', 'arming_state', 'nav_state'):
            return None
        land = dataset(ulog, 'vehicle_land_detected')
        if land is not None and not has(land, 'timestamp', 'landed'):
            land = None
        mission = dataset(ulog, 'mission_result')
        if mission is not None and not has(mission, 'timestamp', *_PLAN_FIELDS):
            mission = None
        return cls(log_times_ns(status), column(status, 'arming_state'),
                   column(status, 'nav_state'),
                   None if land is None else log_times_ns(land),
                   None if land is None else column(land, 'landed') != 0,
                   None if mission is None else log_times_ns(mission),
                   None if mission is None else numpy.stack(
                       [column(mission, name) != 0 for name in _PLAN_FIELDS], axis=1))

    def at(self, stamp_ns: int) -> Px4Status:
        """The latest values logged at or before ``stamp_ns``."""
        found = Px4Status()
        index = _latest(self.status_times, stamp_ns)
        if index is not None:
            found.arming_state = int(self.arming_state[index])
            found.nav_state = int(self.nav_state[index])
        if self.land_times is not None and self.landed is not None:
            land = _latest(self.land_times, stamp_ns)
            if land is not None:
                found.landed = bool(self.landed[land])
        if self.plan_times is not None and self.plans is not None:
            plan = _latest(self.plan_times, stamp_ns)
            if plan is not None:
                valid, finished, failure = (bool(v) for v in self.plans[plan])
                found.plan = MissionPlan(valid, finished, failure)
        return found


def import_statuses(ulog: Any, beliefs: Sequence[tuple[int, int, object]]
                    ) -> list[tuple[int, int, dict[str, object]]]:
    """The /vehicle_status messages (stamp, log time, message dict) for a log's beliefs.

    ``beliefs`` are the written beliefs (stamp, log time, message) in stamp order. Empty when
    the log has no vehicle_status.
    """
    columns = UlogStatus.of(ulog)
    if columns is None:
        return []
    reporter = StatusReporter()
    out: list[tuple[int, int, dict[str, object]]] = []
    for stamp_ns, log_time_ns, _ in beliefs:
        status = columns.at(stamp_ns).at(stamp_ns, FRAME_ID)
        if reporter.due(status):
            out.append((stamp_ns, log_time_ns, to_msg_dict(status)))
    return out
