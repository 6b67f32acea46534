"""The closed catalogues carry exactly the constants of SPEC section 3."""

from __future__ import annotations

from ghost_core.levels import (
    ActuatorCommandKind,
    DecisionKind,
    NON_CONSERVATIVE_COMMAND_KINDS,
    SelfAssessmentLevel,
    worst_level,
)


def test_self_assessment_levels() -> None:
    """KNOWN=0, UNCERTAIN=1, UNKNOWN=2."""
    assert {m.name: m.value for m in SelfAssessmentLevel} == {
        'KNOWN': 0, 'UNCERTAIN': 1, 'UNKNOWN': 2}


def test_decision_kinds_are_the_closed_catalogue_of_seven() -> None:
    """The seven decision kinds of ADR-0021 with their wire values."""
    assert {m.name: m.value for m in DecisionKind} == {
        'PROCEED': 0, 'HOLD': 1, 'YIELD_TO_PILOT': 2, 'ENGAGE_RTL': 3, 'ENGAGE_LAND': 4,
        'ENGAGE_KILL': 5, 'ABSTAIN_UNCERTAIN': 6}


def test_actuator_command_kinds() -> None:
    """The seven actuator command kinds with their wire values."""
    assert {m.name: m.value for m in ActuatorCommandKind} == {
        'NONE': 0, 'HOLD_POSITION': 1, 'CONTINUE_MISSION': 2, 'VELOCITY_SETPOINT': 3,
        'LAND': 4, 'RETURN_TO_LAUNCH': 5, 'KILL': 6}


def test_only_continue_mission_and_velocity_setpoint_are_non_conservative() -> None:
    """Exactly CONTINUE_MISSION and VELOCITY_SETPOINT move the vehicle on its mission."""
    expected = {ActuatorCommandKind.CONTINUE_MISSION, ActuatorCommandKind.VELOCITY_SETPOINT}
    assert NON_CONSERVATIVE_COMMAND_KINDS == expected


def test_worst_level_is_the_weakest_claim() -> None:
    """UNKNOWN beats UNCERTAIN beats KNOWN."""
    known, uncertain, unknown = SelfAssessmentLevel
    assert worst_level(known, known, known) is known
    assert worst_level(known, uncertain, known) is uncertain
    assert worst_level(uncertain, unknown, known) is unknown
