"""Contract invariants: each violation is rejected naming its field; boundaries are accepted."""

from __future__ import annotations

from collections.abc import Callable
import dataclasses
import math
from typing import Annotated

from ghost_core_test import examples as ex
import pytest

from ghost_core._checks import MAX_STAMP_NS
from ghost_core.contracts import (
    ActionEmission,
    ActuatorCommand,
    CalibrationHistory,
    Contract,
    DecisionContext,
    PredictionOutcome,
    StampNs,
    STATUS_NO_OBSERVATION,
    STATUS_NO_PREDICTION,
    Taxonomy,
)
from ghost_core.errors import ContractError, GhostError
from ghost_core.levels import ActuatorCommandKind, SelfAssessmentLevel

NAN = float('nan')
INF = math.inf

UNOBSERVED = PredictionOutcome(ex.STAMP_NS, 'map', ex.STAMP_NS - 1, False, STATUS_NO_OBSERVATION,
                               (1.0, 2.0, 3.0), (0.0, 0.0, 0.0), 0.0, 0.0)
NO_PREDICTION = PredictionOutcome(ex.STAMP_NS, 'map', 0, False, STATUS_NO_PREDICTION,
                                  (0.0, 0.0, 0.0), (1.0, 2.0, 3.0), 0.0, 0.0)
HISTORY = ex.history(beyond_3=1, beyond_5=1, within=2)
EMPTY_HISTORY = CalibrationHistory.empty(32)

Case = tuple[str, Callable[[], object], str, object]

REJECTIONS: list[Case] = [
    # AxisAssessment
    ('axis level out of catalogue', lambda: ex.axis(), 'level', 3),
    ('axis level is a bool', lambda: ex.axis(), 'level', True),
    ('axis max_std negative', lambda: ex.axis(), 'max_std', -0.1),
    ('axis max_std NaN', lambda: ex.axis(), 'max_std', NAN),
    ('axis max_std inf', lambda: ex.axis(), 'max_std', INF),
    ('axis reason uppercase', lambda: ex.axis(), 'reason', 'Within'),
    ('axis reason empty', lambda: ex.axis(), 'reason', ''),
    ('axis reason 65 chars', lambda: ex.axis(), 'reason', 'a' * 65),
    ('axis reason leading digit', lambda: ex.axis(), 'reason', '1abc'),
    # BeliefSelfAssessment
    ('raw stamp negative', lambda: ex.raw(), 'stamp_ns', -1),
    ('raw stamp float', lambda: ex.raw(), 'stamp_ns', 1.5),
    ('raw stamp beyond int32 seconds', lambda: ex.raw(), 'stamp_ns', MAX_STAMP_NS + 1),
    ('raw frame_id not a string', lambda: ex.raw(), 'frame_id', None),
    ('raw overall not the worst block', lambda: ex.raw(), 'overall_level',
     SelfAssessmentLevel.UNCERTAIN),
    ('raw overall out of catalogue', lambda: ex.raw(), 'overall_level', 7),
    ('raw block not an AxisAssessment', lambda: ex.raw(), 'velocity', 'known'),
    ('raw thresholds sha uppercase', lambda: ex.raw(), 'thresholds_sha256', 'A' * 64),
    ('raw thresholds sha short', lambda: ex.raw(), 'thresholds_sha256', 'abc'),
    ('raw assessor_id malformed', lambda: ex.raw(), 'assessor_id', 'Not-ok'),
    ('raw schema_version', lambda: ex.raw(), 'schema_version', 2),
    # ForwardPrediction
    ('prediction target not after stamp', lambda: ex.prediction(), 'target_stamp_ns',
     ex.STAMP_NS - 100_000_000),
    ('prediction position NaN', lambda: ex.prediction(), 'predicted_position', (NAN, 0.0, 0.0)),
    ('prediction position 2-vector', lambda: ex.prediction(), 'predicted_position', (1.0, 2.0)),
    ('prediction covariance inf', lambda: ex.prediction(), 'position_covariance',
     (INF,) + (0.0,) * 8),
    ('prediction covariance 8 values', lambda: ex.prediction(), 'position_covariance',
     (0.0,) * 8),
    ('prediction model_id empty', lambda: ex.prediction(), 'model_id', ''),
    ('prediction schema_version', lambda: ex.prediction(), 'schema_version', 0),
    # PredictionOutcome
    ('outcome position distance NaN', lambda: ex.outcome(), 'position_mahalanobis', NAN),
    ('outcome position distance negative', lambda: ex.outcome(), 'position_mahalanobis', -1.0),
    ('outcome orientation distance NaN', lambda: ex.outcome(), 'orientation_mahalanobis', NAN),
    ('outcome status outside catalogue', lambda: ex.outcome(), 'status', 'guessed'),
    ('outcome status malformed', lambda: ex.outcome(), 'status', 'Paired'),
    ('outcome paired but not observed', lambda: ex.outcome(), 'observed', False),
    ('outcome unpaired but observed', lambda: UNOBSERVED, 'observed', True),
    ('outcome unobserved with a distance', lambda: UNOBSERVED, 'position_mahalanobis', 1.0),
    ('outcome unobserved with orientation distance', lambda: UNOBSERVED,
     'orientation_mahalanobis', 2.0),
    ('outcome without prediction but a prediction stamp', lambda: NO_PREDICTION,
     'prediction_stamp_ns', 5),
    ('outcome without prediction but a predicted position', lambda: NO_PREDICTION,
     'predicted_position', (1.0, 0.0, 0.0)),
    ('outcome without observation but an observed position', lambda: UNOBSERVED,
     'observed_position', (1.0, 0.0, 0.0)),
    ('outcome prediction later than outcome', lambda: ex.outcome(), 'prediction_stamp_ns',
     ex.STAMP_NS + 1),
    ('outcome observed position NaN', lambda: ex.outcome(), 'observed_position',
     (NAN, 0.0, 0.0)),
    # CalibrationHistory
    ('history outcomes negative', lambda: EMPTY_HISTORY, 'outcomes_considered', -1),
    ('history within negative', lambda: HISTORY, 'count_within_1_std', -1),
    ('history beyond_1 negative', lambda: HISTORY, 'count_beyond_1_std', -1),
    ('history beyond_3 negative', lambda: HISTORY, 'count_beyond_3_std', -1),
    ('history beyond_5 negative', lambda: HISTORY, 'count_beyond_5_std', -1),
    ('history count not an int', lambda: HISTORY, 'count_beyond_5_std', 1.0),
    ('history bins do not sum', lambda: HISTORY, 'outcomes_considered', 5),
    ('history worst position NaN', lambda: HISTORY, 'worst_position_mahalanobis', NAN),
    ('history worst position negative', lambda: HISTORY, 'worst_position_mahalanobis', -0.5),
    ('history worst orientation NaN', lambda: HISTORY, 'worst_orientation_mahalanobis', NAN),
    ('history empty with a worst value', lambda: EMPTY_HISTORY, 'worst_position_mahalanobis',
     1.0),
    ('history empty with a stamp', lambda: EMPTY_HISTORY, 'most_recent_observed_stamp_ns', 5),
    ('history outcomes without a stamp', lambda: HISTORY, 'most_recent_observed_stamp_ns', None),
    ('history stamp negative', lambda: HISTORY, 'most_recent_observed_stamp_ns', -1),
    ('history window zero', lambda: HISTORY, 'window_size', 0),
    ('history schema_version', lambda: HISTORY, 'schema_version', 3),
    # CalibratedSelfAssessment
    ('calibrated raw sha empty', lambda: ex.calibrated(), 'raw_assessment_sha256', ''),
    ('calibrated raw sha uppercase', lambda: ex.calibrated(), 'raw_assessment_sha256',
     'F' * 64),
    ('calibrated raw not an assessment', lambda: ex.calibrated(), 'raw_assessment', {}),
    ('calibrated raw of another cycle', lambda: ex.calibrated(), 'raw_assessment',
     ex.raw(stamp_ns=ex.STAMP_NS + 1)),
    ('calibrated history from the future', lambda: ex.calibrated(), 'calibration_history',
     ex.history(stamp_ns=ex.STAMP_NS + 1)),
    ('calibrated history not a history', lambda: ex.calibrated(), 'calibration_history', None),
    ('calibrated level out of catalogue', lambda: ex.calibrated(), 'adjusted_overall_level', 3),
    ('calibrated policy id malformed', lambda: ex.calibrated(), 'adjustment_policy_id',
     'Mahalanobis'),
    ('calibrated reason too long', lambda: ex.calibrated(), 'adjustment_reason', 'r' * 65),
    ('calibrated M zero', lambda: ex.calibrated(), 'min_outcomes', 0),
    ('calibrated K zero', lambda: ex.calibrated(), 'downgrade_threshold', 0),
    ('calibrated schema_version', lambda: ex.calibrated(), 'schema_version', 2),
    # Decision
    ('decision kind out of catalogue', lambda: ex.decision(), 'kind', 7),
    ('decision kind negative', lambda: ex.decision(), 'kind', -1),
    ('decision stamp negative', lambda: ex.decision(), 'decision_stamp_ns', -5),
    ('decision reason free text', lambda: ex.decision(), 'reason', 'because I said so'),
    # DecisionRationale
    ('rationale decision of another stamp', lambda: ex.rationale(), 'decision',
     ex.decision(stamp_ns=ex.STAMP_NS + 1)),
    ('rationale raw sha empty string', lambda: ex.rationale(), 'self_assessment_sha256', ''),
    ('rationale calibrated sha uppercase', lambda: ex.rationale(),
     'calibrated_assessment_sha256', 'B' * 64),
    ('rationale calibrated without raw', lambda: ex.rationale(), 'self_assessment_sha256', None),
    ('rationale policy id malformed', lambda: ex.rationale(), 'policy_id', 'UPPER'),
    ('rationale schema_version', lambda: ex.rationale(), 'schema_version', 0),
    # ActuatorCommand
    ('command kind out of catalogue', lambda: ActuatorCommand(ActuatorCommandKind.NONE),
     'kind', 9),
    ('command velocity on HOLD_POSITION',
     lambda: ActuatorCommand(ActuatorCommandKind.HOLD_POSITION), 'linear_velocity',
     (1.0, 0.0, 0.0)),
    ('command angular velocity on CONTINUE_MISSION',
     lambda: ActuatorCommand(ActuatorCommandKind.CONTINUE_MISSION), 'angular_velocity',
     (0.0, 0.0, 0.1)),
    ('command setpoint NaN', lambda: ActuatorCommand(ActuatorCommandKind.VELOCITY_SETPOINT),
     'linear_velocity', (NAN, 0.0, 0.0)),
    # ActionEmission
    ('emission decision of another stamp', lambda: ex.emission(), 'decision',
     ex.decision(stamp_ns=0)),
    ('emission rationale sha absent', lambda: ex.emission(), 'rationale_sha256', None),
    ('emission rationale sha empty', lambda: ex.emission(), 'rationale_sha256', ''),
    ('emission contract id empty', lambda: ex.emission(), 'contract_id', ''),
    ('emission command not a command', lambda: ex.emission(), 'command', 2),
    ('emission schema_version', lambda: ex.emission(), 'schema_version', 2),
]


@pytest.mark.parametrize(('case', 'valid', 'field', 'bad'), REJECTIONS,
                         ids=[case[0] for case in REJECTIONS])
def test_invariant_violation_is_rejected_naming_the_field(
    case: str, valid: Callable[[], object], field: str, bad: object
) -> None:
    """Replacing one field by a bad value raises ContractError naming that field."""
    contract = valid()
    with pytest.raises(ContractError) as caught:
        dataclasses.replace(contract, **{field: bad})  # type: ignore[type-var]
    assert field in str(caught.value)
    assert type(contract).__name__ in str(caught.value)


def test_contract_error_is_a_value_error_and_a_ghost_error() -> None:
    """ContractError can be caught as ValueError or as the package's GhostError."""
    assert issubclass(ContractError, ValueError)
    assert issubclass(ContractError, GhostError)


def test_error_message_shows_the_bad_value() -> None:
    """The message quotes the offending value, not only the field."""
    with pytest.raises(ContractError, match=r"reason.*'Bad Reason'"):
        dataclasses.replace(ex.axis(), reason='Bad Reason')


def test_contracts_are_frozen() -> None:
    """Contracts cannot be mutated after construction."""
    with pytest.raises(dataclasses.FrozenInstanceError):
        ex.raw().stamp_ns = 5  # type: ignore[misc]


def test_infinite_mahalanobis_is_legitimate() -> None:
    """+inf distances are accepted in outcomes and as history worst values."""
    outcome = ex.outcome(distance=INF)
    assert outcome.position_mahalanobis == INF
    history = dataclasses.replace(HISTORY, worst_position_mahalanobis=INF,
                                  worst_orientation_mahalanobis=INF)
    assert history.worst_orientation_mahalanobis == INF


def test_stamp_boundaries_are_accepted() -> None:
    """Stamp 0 and the largest stamp builtin_interfaces/Time can carry are accepted."""
    assert ex.raw(stamp_ns=0).stamp_ns == 0
    assert ex.raw(stamp_ns=MAX_STAMP_NS).stamp_ns == MAX_STAMP_NS


def test_taxonomy_length_boundaries_are_accepted() -> None:
    """Taxonomy strings of exactly 1 and exactly 64 characters are accepted."""
    assert dataclasses.replace(ex.axis(), reason='a').reason == 'a'
    assert dataclasses.replace(ex.axis(), reason='a' * 64).reason == 'a' * 64


def test_empty_history_is_valid_and_has_no_stamp() -> None:
    """A window with no observed outcome has zero counts, zero worst values and no stamp."""
    assert EMPTY_HISTORY.outcomes_considered == 0
    assert not EMPTY_HISTORY.has_observed_stamp
    assert EMPTY_HISTORY.most_recent_observed_stamp_ns is None


def test_window_size_one_is_accepted() -> None:
    """window_size exactly 1 is the smallest window."""
    assert dataclasses.replace(HISTORY, window_size=1).window_size == 1


def test_rationale_may_claim_no_assessment() -> None:
    """Both sha fields absent (None) is the explicit 'no assessment claimed' case."""
    rationale = dataclasses.replace(ex.rationale(), self_assessment_sha256=None,
                                    calibrated_assessment_sha256=None)
    assert rationale.self_assessment_sha256 is None


def test_velocity_setpoint_may_carry_a_velocity() -> None:
    """Only VELOCITY_SETPOINT carries a non-zero velocity."""
    command = ActuatorCommand(ActuatorCommandKind.VELOCITY_SETPOINT, (1.0, 0.0, 0.0),
                              (0.0, 0.0, 0.5))
    assert command.linear_velocity == (1.0, 0.0, 0.0)


def test_fields_are_normalised_to_exact_types() -> None:
    """Ints become floats, lists become tuples and ints become enum members."""
    axis = dataclasses.replace(ex.axis(), max_std=1, level=1)
    assert type(axis.max_std) is float
    assert axis.level is SelfAssessmentLevel.UNCERTAIN
    prediction = dataclasses.replace(ex.prediction(), predicted_position=[1, 2, 3])
    assert prediction.predicted_position == (1.0, 2.0, 3.0)
    assert all(type(x) is float for x in prediction.predicted_position)


def test_emission_requires_a_command() -> None:
    """ActionEmission carries an ActuatorCommand (field command)."""
    assert isinstance(ex.emission().command, ActuatorCommand)
    assert isinstance(ex.emission(), ActionEmission)


def test_context_from_calibrated_carries_the_raw_assessment() -> None:
    """A context built from a calibrated assessment has its raw one and acts on its level."""
    calibrated = dataclasses.replace(ex.calibrated(),
                                     adjusted_overall_level=SelfAssessmentLevel.UNCERTAIN)
    context = DecisionContext.from_calibrated(calibrated, None)
    assert context.self_assessment == calibrated.raw_assessment
    assert context.effective_level is SelfAssessmentLevel.UNCERTAIN
    filled = DecisionContext(ex.STAMP_NS, 'map', *ex.UNKNOWN_VEHICLE,
                             calibrated_assessment=calibrated)
    assert filled.self_assessment == calibrated.raw_assessment


def test_context_rejects_an_assessment_of_another_cycle() -> None:
    """A context's assessments are of its own cycle."""
    with pytest.raises(ContractError, match='self_assessment'):
        DecisionContext(ex.STAMP_NS + 1, 'map', *ex.UNKNOWN_VEHICLE, ex.raw())


def test_context_rejects_a_raw_assessment_other_than_the_calibrated_one() -> None:
    """The raw assessment of a calibrated context is the one it carries inline."""
    other = ex.raw(SelfAssessmentLevel.UNKNOWN)
    with pytest.raises(ContractError, match='self_assessment'):
        DecisionContext(ex.STAMP_NS, 'map', *ex.UNKNOWN_VEHICLE, other, ex.calibrated())


def test_context_without_assessment_has_no_level() -> None:
    """Without introspection the context has no level to act on."""
    assert DecisionContext(ex.STAMP_NS, 'map', *ex.UNKNOWN_VEHICLE).effective_level is None


def test_a_contract_field_without_a_check_is_refused_naming_it() -> None:
    """Every field of a Contract names its check; one that does not fails, named, at first use."""
    @dataclasses.dataclass(frozen=True, slots=True)
    class Unchecked(Contract):
        stamp_ns: StampNs
        count: int

    with pytest.raises(TypeError, match=r'Unchecked\.count: a contract field names its check'):
        Unchecked(1, 2)

    @dataclasses.dataclass(frozen=True, slots=True)
    class Checked(Contract):
        stamp_ns: StampNs
        level: Annotated[int, lambda owner, name, value: value * 2]

    assert Checked(1, 2).level == 4  # the named check ran and normalised the field
    with pytest.raises(ContractError, match=r'Checked\.stamp_ns must be'):
        Checked(-1, 2)


def test_a_subclass_of_a_contract_checks_its_own_fields() -> None:
    """A contract's compiled checks are its own: a subclass with more fields gets its own."""
    ex.axis()  # the base class is compiled first

    @dataclasses.dataclass(frozen=True, slots=True)
    class NamedAxis(type(ex.axis())):  # type: ignore[misc]
        name: Taxonomy = 'axis'

    assert NamedAxis(SelfAssessmentLevel.KNOWN, 0.1, 'within_known_threshold').name == 'axis'
    with pytest.raises(ContractError, match=r'NamedAxis\.name must be a taxonomy string'):
        NamedAxis(SelfAssessmentLevel.KNOWN, 0.1, 'within_known_threshold', 'Not A Taxonomy')
    with pytest.raises(ContractError, match=r'NamedAxis\.max_std'):
        NamedAxis(SelfAssessmentLevel.KNOWN, -1.0, 'within_known_threshold')
    assert type(ex.axis()).__name__ == 'AxisAssessment'  # the base is unaffected
    with pytest.raises(ContractError, match=r'AxisAssessment\.max_std'):
        type(ex.axis())(SelfAssessmentLevel.KNOWN, -1.0, 'within_known_threshold')
