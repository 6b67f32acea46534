"""Autopilot events: the one table of what is credited, Ghost's lead words, PX4's failsafe causes.

The real logs: quadrotor_local's low-battery failsafe is listed, never credited (Ghost
abstained throughout that flight), and every credited event is a navigation or estimator one.
"""

from pathlib import Path

from ghost_review_test.review_bags import REALDATA
import pytest

from ghost_review.events import CREDITED, EventClass, FAILSAFES, lead_of, LeadKind
from ghost_review.flight import CycleRow
from ghost_review.px4 import CAUSE_WINDOW_NS, failsafe_cause, log_info

pytestmark = pytest.mark.bag

S = 1_000_000_000
NAVIGATION = {EventClass.POSITION_INVALID, EventClass.ESTIMATOR_FAILSAFE, EventClass.GNSS_LOSS,
              EventClass.ESTIMATOR_RESET}


def _rows(*decisions: str) -> list[CycleRow]:
    """One cycle per second from 1 s, with these decisions."""
    return [CycleRow((index + 1) * S, decision=decision)
            for index, decision in enumerate(decisions)]


def test_only_navigation_and_estimator_events_are_credited() -> None:
    """The table names every class; exactly the navigation ones are credited."""
    assert set(CREDITED) == set(EventClass)
    assert {event_class for event_class, credited in CREDITED.items() if credited} == NAVIGATION
    assert FAILSAFES.isdisjoint(NAVIGATION)
    assert {EventClass.BATTERY_FAILSAFE, EventClass.LINK_FAILSAFE,
            EventClass.GEOFENCE_FAILSAFE} <= FAILSAFES


@pytest.mark.parametrize(('decisions', 'at_s', 'kind', 'seconds', 'text'), [
    (('PROCEED', 'HOLD', 'HOLD'), 3.5, LeadKind.AHEAD, 1.5, '+1.50 s (ahead)'),
    (('PROCEED', 'PROCEED', 'HOLD'), 2.5, LeadKind.BEHIND, -0.5, '-0.50 s (behind)'),
    (('PROCEED', 'HOLD'), 2.0, LeadKind.AT_EVENT, 0.0, '0.00 s (at the event)'),
    (('PROCEED', 'PROCEED'), 1.5, LeadKind.PROCEEDED_THROUGH, None,
     'proceeded through the event (PROCEED then and after)'),
    (('ABSTAIN_UNCERTAIN', 'ABSTAIN_UNCERTAIN', 'PROCEED'), 2.5,
     LeadKind.ABSTAINED_THROUGHOUT, None,
     'abstained throughout (ABSTAIN_UNCERTAIN from its first decision; no lead)'),
    (('PROCEED',), 0.5, LeadKind.BEFORE_FIRST_DECISION, None, "before Ghost's first decision"),
])
def test_lead_words_tell_the_cases_apart(decisions: tuple[str, ...], at_s: float,
                                         kind: LeadKind, seconds: float | None,
                                         text: str) -> None:
    """Ahead, behind, at, proceeded through and abstained throughout are different words."""
    lead = lead_of(_rows(*decisions), round(at_s * S))
    assert lead.kind is kind and lead.text == text
    assert lead.seconds == (None if seconds is None else pytest.approx(seconds))


@pytest.mark.parametrize(('rises', 'warnings', 'announcement', 'expected', 'cause'), [
    ([(9 * S, 'failsafe_flags.battery_warning')], [], '[failsafe] Failsafe activated',
     EventClass.BATTERY_FAILSAFE, 'failsafe_flags.battery_warning'),
    ([(9 * S, 'failsafe_flags.manual_control_signal_lost')], [], 'failsafe on',
     EventClass.LINK_FAILSAFE, 'failsafe_flags.manual_control_signal_lost'),
    ([(8 * S, 'failsafe_flags.geofence_breached'),
      (9 * S, 'failsafe_flags.local_position_invalid')], [], 'failsafe on',
     EventClass.POSITION_INVALID,
     'failsafe_flags.local_position_invalid, failsafe_flags.geofence_breached'),
    ([], [(9 * S, '[health_and_arming_checks] Low battery')], '[failsafe] Failsafe activated',
     EventClass.BATTERY_FAILSAFE, '[health_and_arming_checks] Low battery'),
    ([], [], 'Failsafe enabled: no global position', EventClass.POSITION_INVALID,
     'Failsafe enabled: no global position'),
    ([(10 * S - CAUSE_WINDOW_NS - 1, 'failsafe_flags.battery_warning')], [],
     '[failsafe] Failsafe activated', EventClass.FAILSAFE_CAUSE_UNKNOWN, ''),
    ([(9 * S, 'failsafe_flags.mission_failure')], [], 'failsafe on',
     EventClass.OTHER_FAILSAFE, 'failsafe_flags.mission_failure'),
])
def test_a_failsafe_is_classified_by_what_turned_bad_just_before_it(
        rises: list[tuple[int, str]], warnings: list[tuple[int, str]], announcement: str,
        expected: EventClass, cause: str) -> None:
    """Flags first, then warnings, then the text; nothing in the window: cause not logged."""
    assert failsafe_cause(10 * S, announcement, rises, warnings) == (expected, cause)


@pytest.mark.skipif(not REALDATA.is_dir(), reason='../shared/realdata is not beside the clone')
def test_the_battery_failsafe_of_a_real_flight_is_listed_not_credited() -> None:
    """quadrotor_local: PX4's 'Failsafe activated' follows its battery warning flag."""
    info = log_info(REALDATA / 'quadrotor_local.ulg')
    failsafes = [event for event in info.events if event.listed_failsafe]
    assert [event.event_class for event in failsafes] == [EventClass.BATTERY_FAILSAFE]
    assert 'battery_warning' in failsafes[0].detail and not failsafes[0].credited
    assert all(event.event_class in NAVIGATION for event in info.events if event.credited)


@pytest.mark.skipif(not REALDATA.is_dir(), reason='../shared/realdata is not beside the clone')
@pytest.mark.parametrize('log', sorted(p.name for p in REALDATA.glob('*.ulg')) or ['none'])
def test_every_shared_log_names_the_gnss_its_ekf_fuses(log: str) -> None:
    """Each shared log's fixes are vehicle_gps_position, which its EKF2 fuses (bit 0 set)."""
    info = log_info(Path(REALDATA / log))
    assert info.fixes is not None and info.fixes.topic == 'vehicle_gps_position'
    assert info.fixes.fused, info.fixes.why
