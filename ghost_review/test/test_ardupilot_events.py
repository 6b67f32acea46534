"""ArduPilot's own events in the review's classes: what Ghost's lead is reported against."""

from __future__ import annotations

import pytest

from ghost_review.ardupilot import event_class
from ghost_review.events import CREDITED, EventClass

pytestmark = pytest.mark.bag


@pytest.mark.parametrize(('kind', 'detail', 'safety', 'expected'), [
    ('error', 'ERR FAILSAFE_EKFINAV FAILSAFE_OCCURRED (EKF failsafe)', True,
     EventClass.ESTIMATOR_FAILSAFE),
    ('error', 'ERR FAILSAFE_EKFINAV FAILSAFE_RESOLVED', False, EventClass.RECOVERED),
    ('error', 'ERR GPS UNHEALTHY', True, EventClass.GNSS_LOSS),
    ('error', 'ERR FAILSAFE_BATT FAILSAFE_OCCURRED', False, EventClass.BATTERY_FAILSAFE),
    ('error', 'ERR FAILSAFE_RADIO FAILSAFE_OCCURRED', False, EventClass.LINK_FAILSAFE),
    ('error', 'ERR FAILSAFE_FENCE FAILSAFE_OCCURRED', False, EventClass.GEOFENCE_FAILSAFE),
    ('event', 'EV EKF_YAW_RESET', False, EventClass.ESTIMATOR_RESET),
    ('mode', 'MODE LOITER -> LAND (EKF_FAILSAFE)', True, EventClass.ESTIMATOR_FAILSAFE),
    ('mode', 'MODE LOITER -> RTL (RC_COMMAND)', False, EventClass.MODE),
    ('message', 'MSG EKF3 IMU0 is using GPS', False, EventClass.MESSAGE),
])
def test_ardupilot_events_are_classed_by_their_own_enums(
        kind: str, detail: str, safety: bool, expected: EventClass) -> None:
    found = event_class(kind, detail, safety)
    assert found is expected
    # Battery, RC and geofence failsafes are listed, never credited (issue 34).
    if expected in (EventClass.BATTERY_FAILSAFE, EventClass.LINK_FAILSAFE,
                    EventClass.GEOFENCE_FAILSAFE):
        assert not CREDITED[found]
