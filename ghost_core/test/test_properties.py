"""The pure property judgement (ghost_core.properties) and its live twin (ghost_core.monitor)."""

from __future__ import annotations

from collections import Counter

from ghost_core_test.strategies import live_streams
from hypothesis import given, settings
import pytest

from ghost_core.levels import ActuatorCommandKind, DecisionKind, SelfAssessmentLevel
from ghost_core.monitor import OnlineMonitor
from ghost_core.properties import (
    ActuationView,
    BAUD_V1,
    BAUD_VERSION,
    CalibratedView,
    ERUR_V1,
    ERUR_VERSION,
    judge_baud,
    judge_erur,
    ParameterTracker,
    PROPERTIES,
    Violation,
)

KNOWN, UNCERTAIN = SelfAssessmentLevel.KNOWN, SelfAssessmentLevel.UNCERTAIN
PROCEED = (DecisionKind.PROCEED, ActuatorCommandKind.CONTINUE_MISSION)
HOLD = (DecisionKind.HOLD, ActuatorCommandKind.HOLD_POSITION)
TIMEOUT = 1_000_000_000


def _cal(stamp: int, adjusted: int = UNCERTAIN, *, raw: int = KNOWN, drift: bool = True,
         m: int = 4, k: int = 2) -> CalibratedView:
    beyond = 2 if drift else 0
    return CalibratedView(stamp, raw, adjusted, 6, beyond, 0, m, k)


def _act(stamp: int, pair: tuple[int, int]) -> ActuationView:
    return ActuationView(stamp, int(pair[0]), int(pair[1]))


def test_the_judges_read_the_core_views() -> None:
    """BAUD-v1 and ERUR-v1 judge a CalibratedView and ActuationViews (no bag types needed)."""
    assert judge_baud(_cal(1), [_act(1, HOLD)], 4, 2) == ()
    assert [v.kind.value for v in judge_baud(_cal(1), [_act(1, PROCEED)], 4, 2) or ()] == [
        'p2_decision_proceed', 'p3_non_conservative_command']
    assert judge_erur(_cal(1), [_act(1, HOLD)], 4, 2) is None
    clean = _cal(1, KNOWN, drift=False)
    assert judge_baud(clean, [_act(1, PROCEED)], 4, 2) is None
    assert [v.kind.value for v in judge_erur(clean, [], 4, 2) or ()] == ['actuation_missing']
    assert [p.version for p in PROPERTIES] == [BAUD_VERSION, ERUR_VERSION] == [
        'BAUD-v1', 'ERUR-v1']
    assert BAUD_V1.judge is judge_baud and ERUR_V1.judge is judge_erur


def test_the_first_recorded_parameters_are_used_and_a_change_is_noted() -> None:
    """M and K come from the first calibrated assessment; a later different pair is noted."""
    tracker = ParameterTracker()
    assert tracker.resolve(_cal(1, m=4, k=2)) == (4, 2)
    assert tracker.resolve(_cal(2, m=5, k=2)) == (4, 2)
    assert tracker.recorded() == ((4, 2, 1, 1), (5, 2, 1, 2))
    assert tracker.notes('the calibrator published') == (
        'min_outcomes: used 4 (from the first cycle) but the calibrator published 5',)
    given = ParameterTracker(3, None)
    assert given.resolve(_cal(1, m=4, k=2)) == (3, 2)


def test_the_monitor_judges_a_cycle_as_soon_as_its_actuation_arrives() -> None:
    """A PROCEED under drift is reported by the on_actuation call that brings it, then latched."""
    monitor = OnlineMonitor(TIMEOUT)
    assert monitor.on_calibrated(_cal(100), 0) == []
    assert monitor.pending == 1
    found = monitor.on_actuation(_act(100, PROCEED), 1)
    assert [(version, v.kind.value, v.cycle_stamp_ns) for version, v in found] == [
        ('BAUD-v1', 'p2_decision_proceed', 100), ('BAUD-v1', 'p3_non_conservative_command', 100)]
    assert monitor.on_calibrated(_cal(200), 2) == []
    assert monitor.on_actuation(_act(200, HOLD), 3) == []
    baud, erur = monitor.states()
    assert (baud.holds, baud.violations, baud.cycles_total, baud.cycles_precondition_held) == (
        False, 2, 2, 2)
    assert baud.first_violation is not None and baud.first_violation.cycle_stamp_ns == 100
    assert baud.counts_by_kind == (('p2_decision_proceed', 1), ('p3_non_conservative_command', 1))
    assert erur.holds and erur.cycles_precondition_held == 0


def test_an_actuation_that_never_comes_is_actuation_missing() -> None:
    """Missing once a later cycle's actuation arrives, or once the timeout has passed."""
    monitor = OnlineMonitor(TIMEOUT)
    monitor.on_calibrated(_cal(100), 0)
    monitor.on_calibrated(_cal(200), 0)
    found = monitor.on_actuation(_act(200, HOLD), 10)
    assert [(v.cycle_stamp_ns, v.kind.value) for _, v in found] == [(100, 'actuation_missing')]
    monitor.on_calibrated(_cal(300, KNOWN, drift=False), 20)
    assert monitor.expire(20 + TIMEOUT) == []
    found = monitor.expire(21 + TIMEOUT)
    assert [(p, v.cycle_stamp_ns, v.kind.value) for p, v in found] == [
        ('ERUR-v1', 300, 'actuation_missing')]
    # A late actuation does not take the violation back, nor report it again.
    assert monitor.on_actuation(_act(300, PROCEED), 22 + TIMEOUT) == []
    assert monitor.states()[1].violations == 1


def test_an_actuation_before_its_calibrated_assessment_is_kept() -> None:
    """Across topics DDS keeps no order: the actuation may arrive first."""
    monitor = OnlineMonitor(TIMEOUT)
    assert monitor.on_actuation(_act(100, PROCEED), 0) == []
    found = monitor.on_calibrated(_cal(100), 1)
    assert {v.kind.value for _, v in found} == {'p2_decision_proceed',
                                                 'p3_non_conservative_command'}


def test_a_second_actuation_of_a_judged_cycle_is_judged_too() -> None:
    """As the verifier judges every actuation of a cycle, a second producer is caught."""
    monitor = OnlineMonitor(TIMEOUT)
    monitor.on_calibrated(_cal(100), 0)
    assert monitor.on_actuation(_act(100, HOLD), 1) == []
    found = monitor.on_actuation(_act(100, PROCEED), 2)
    assert {v.kind.value for _, v in found} == {'p2_decision_proceed',
                                                 'p3_non_conservative_command'}
    assert monitor.states()[0].cycles_total == 1


def test_the_timeout_must_be_positive() -> None:
    with pytest.raises(ValueError, match='timeout_ns'):
        OnlineMonitor(0)


def _offline(cycles: list[tuple[CalibratedView, list[ActuationView]]]) -> dict[str, object]:
    """What the verifier computes: each complete cycle judged once."""
    out: dict[str, object] = {}
    for prop in PROPERTIES:
        held, found = 0, Counter[Violation]()
        for calibrated, actuations in cycles:
            verdict = prop.judge(calibrated, actuations, 4, 2)
            held += verdict is not None
            found.update(verdict or ())
        out[prop.version] = (held, found)
    return out


@settings(max_examples=300, deadline=None)
@given(live_streams())
def test_the_live_verdict_is_the_offline_verdict(stream) -> None:
    """Whatever the interleaving of the two topics, the monitor finds what the verifier finds."""
    cycles, order = stream
    monitor = OnlineMonitor(TIMEOUT)
    live = {prop.version: Counter[Violation]() for prop in PROPERTIES}
    for now, item in enumerate(order):
        if isinstance(item, CalibratedView):
            found = monitor.on_calibrated(item, now)
        else:
            found = monitor.on_actuation(item, now)
        for version, violation in found:
            live[version][violation] += 1
    for version, violation in monitor.expire(len(order) + TIMEOUT + 1):
        live[version][violation] += 1
    expected = _offline(cycles)
    for state in monitor.states():
        held, found = expected[state.version]  # type: ignore[misc]
        assert live[state.version] == found
        assert state.cycles_precondition_held == held
        assert state.cycles_total == len(cycles)
        assert state.violations == sum(found.values())
