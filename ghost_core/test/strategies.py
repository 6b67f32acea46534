"""Hypothesis strategies for every ghost_core contract (the one place tests draw inputs from)."""

from __future__ import annotations

from dataclasses import dataclass, replace
import math

from hypothesis import strategies as st

from ghost_core._checks import MAX_STAMP_NS
from ghost_core.contracts import (
    ActionEmission,
    ActuatorCommand,
    AxisAssessment,
    BeliefSelfAssessment,
    CalibratedSelfAssessment,
    CalibrationHistory,
    ConfigurationChange,
    Decision,
    DecisionRationale,
    ForwardPrediction,
    GATE_MODES,
    GateEmission,
    PredictionOutcome,
    STATUS_INVALID_OBSERVATION,
    STATUS_NO_OBSERVATION,
    STATUS_NO_PREDICTION,
    STATUS_PAIRED,
    VehicleStatus,
)
from ghost_core.distances import normalised_distance
from ghost_core.gate import (
    ARDUPILOT_MODES,
    gate_verdict,
    GateAction,
    GateReason,
    LatestActuation,
    VEHICLE_CMD_NAV_LAND,
    VEHICLE_CMD_NAV_RETURN_TO_LAUNCH,
)
from ghost_core.gate_property import CitedActuationView
from ghost_core.levels import (
    ActuatorCommandKind,
    DecisionKind,
    FlightStatus,
    MissionStatus,
    SelfAssessmentLevel,
    worst_level,
)
from ghost_core.properties import ActuationView, CalibratedView

ZERO3 = (0.0, 0.0, 0.0)

levels = st.sampled_from(list(SelfAssessmentLevel))
decision_kinds = st.sampled_from(list(DecisionKind))
flight_statuses = st.sampled_from(list(FlightStatus))
mission_statuses = st.sampled_from(list(MissionStatus))
command_kinds = st.sampled_from(list(ActuatorCommandKind))
stamps = st.integers(min_value=0, max_value=MAX_STAMP_NS)
frame_ids = st.sampled_from(['map', 'odom', 'base_link', '', 'mapa_ñ'])
taxonomies = st.from_regex(r'[a-z][a-z0-9_]{0,63}', fullmatch=True)
shas = st.text(alphabet='0123456789abcdef', min_size=64, max_size=64)
optional_shas = st.none() | shas
finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
non_negative = st.floats(min_value=0.0, max_value=1e6, allow_nan=False, allow_infinity=False)
vec3s = st.tuples(finite, finite, finite)
mat3s = st.tuples(*[finite] * 9)

#: Mahalanobis distances: >= 0, +inf legitimate, with the bin edges and their neighbours.
BIN_EDGES = (0.0, 1.0, 3.0, 5.0)
distances = st.one_of(
    st.sampled_from([
        *BIN_EDGES,
        *(math.nextafter(edge, math.inf) for edge in BIN_EDGES),
        math.inf,
    ]),
    st.floats(min_value=0.0, max_value=20.0, allow_nan=False),
)


@st.composite
def axis_assessments(draw: st.DrawFn, level: SelfAssessmentLevel | None = None) -> AxisAssessment:
    """Draw an AxisAssessment (of the given level, if any)."""
    return AxisAssessment(draw(levels) if level is None else level, draw(non_negative),
                          draw(taxonomies))


@st.composite
def belief_self_assessments(
    draw: st.DrawFn,
    stamp_ns: int | None = None,
    overall: SelfAssessmentLevel | None = None,
) -> BeliefSelfAssessment:
    """Draw a raw assessment (with the given stamp / overall level, if any)."""
    if overall is None:
        axes = [draw(axis_assessments()) for _ in range(3)]
    else:
        worst_index = draw(st.integers(0, 2))
        axes = [
            draw(axis_assessments(overall)) if i == worst_index
            else draw(axis_assessments(SelfAssessmentLevel(draw(st.integers(0, int(overall))))))
            for i in range(3)
        ]
    return BeliefSelfAssessment(
        stamp_ns=draw(stamps) if stamp_ns is None else stamp_ns,
        frame_id=draw(frame_ids),
        overall_level=worst_level(*(axis.level for axis in axes)),
        position=axes[0],
        velocity=axes[1],
        orientation=axes[2],
        thresholds_sha256=draw(shas),
        assessor_id=draw(taxonomies),
    )


@st.composite
def forward_predictions(draw: st.DrawFn) -> ForwardPrediction:
    """Draw a ForwardPrediction."""
    stamp_ns = draw(st.integers(0, MAX_STAMP_NS - 1))
    return ForwardPrediction(
        stamp_ns=stamp_ns,
        frame_id=draw(frame_ids),
        target_stamp_ns=draw(st.integers(stamp_ns + 1, MAX_STAMP_NS)),
        predicted_position=draw(vec3s),
        position_covariance=draw(mat3s),
        model_id=draw(taxonomies),
        origin_position=draw(vec3s),
        velocity=draw(vec3s),
        origin_position_covariance=draw(mat3s),
        velocity_covariance=draw(mat3s),
        process_noise=draw(st.floats(0.0, 10.0)),
    )


@st.composite
def prediction_outcomes(
    draw: st.DrawFn, stamp_ns: int | None = None, observed: bool | None = None
) -> PredictionOutcome:
    """Draw a PredictionOutcome of any status (observed or not, if given)."""
    stamp = draw(stamps) if stamp_ns is None else stamp_ns
    if observed is None:
        status = draw(st.sampled_from([STATUS_PAIRED, STATUS_NO_OBSERVATION,
                                       STATUS_NO_PREDICTION, STATUS_INVALID_OBSERVATION]))
    elif observed:
        status = STATUS_PAIRED
    else:
        status = draw(st.sampled_from([STATUS_NO_OBSERVATION, STATUS_NO_PREDICTION,
                                       STATUS_INVALID_OBSERVATION]))
    paired = status == STATUS_PAIRED
    has_prediction = status != STATUS_NO_PREDICTION
    has_observation = status in (STATUS_PAIRED, STATUS_NO_PREDICTION)
    distance = draw(distances) if paired else 0.0
    axes = draw(st.integers(1, 3)) if paired else 0
    fix_stamp = draw(st.integers(0, stamp)) if status != STATUS_NO_OBSERVATION else 0
    return PredictionOutcome(
        stamp_ns=stamp,
        frame_id=draw(frame_ids),
        prediction_stamp_ns=draw(st.integers(0, stamp)) if has_prediction else 0,
        observed=paired,
        status=status,
        predicted_position=draw(vec3s) if has_prediction else ZERO3,
        observed_position=draw(vec3s) if has_observation else ZERO3,
        position_mahalanobis=distance,
        orientation_mahalanobis=draw(distances | st.just(0.0)) if paired else 0.0,
        observation_stamp_ns=fix_stamp,
        position_axes_compared=axes,
        position_normalised_distance=normalised_distance(distance, axes),
    )


@st.composite
def outcome_sequences(draw: st.DrawFn, max_size: int = 60) -> list[PredictionOutcome]:
    """Draw a chronological list of outcomes (strictly increasing stamps, mixed statuses)."""
    steps = draw(st.lists(st.integers(1, 10**9), max_size=max_size))
    outcomes = []
    stamp = draw(st.integers(0, 10**12))
    for step in steps:
        stamp += step
        outcomes.append(draw(prediction_outcomes(stamp_ns=stamp)))
    return outcomes


@st.composite
def calibration_histories(
    draw: st.DrawFn, max_stamp_ns: int = MAX_STAMP_NS
) -> CalibrationHistory:
    """Draw a synthetic, internally consistent history (any counts, any window >= 1)."""
    bins = draw(st.lists(st.integers(0, 40), min_size=4, max_size=4))
    total = sum(bins)
    empty = total == 0
    return CalibrationHistory(
        outcomes_considered=total,
        count_within_1_std=bins[0],
        count_beyond_1_std=bins[1],
        count_beyond_3_std=bins[2],
        count_beyond_5_std=bins[3],
        worst_position_mahalanobis=0.0 if empty else draw(distances),
        worst_orientation_mahalanobis=0.0 if empty else draw(distances),
        most_recent_observed_stamp_ns=None if empty else draw(st.integers(0, max_stamp_ns)),
        window_size=draw(st.integers(1, 200)),
    )


@st.composite
def calibrated_assessments(draw: st.DrawFn) -> CalibratedSelfAssessment:
    """Draw a CalibratedSelfAssessment with arbitrary (valid) field values."""
    raw = draw(belief_self_assessments())
    return CalibratedSelfAssessment(
        stamp_ns=raw.stamp_ns,
        frame_id=draw(frame_ids),
        raw_assessment=raw,
        raw_assessment_sha256=draw(shas),
        calibration_history=draw(calibration_histories(max_stamp_ns=raw.stamp_ns)),
        adjusted_overall_level=draw(levels),
        adjustment_policy_id=draw(taxonomies),
        adjustment_reason=draw(taxonomies),
        min_outcomes=draw(st.integers(1, 2**32 - 1)),
        downgrade_threshold=draw(st.integers(1, 2**32 - 1)),
    )


@st.composite
def decisions(draw: st.DrawFn, stamp_ns: int | None = None) -> Decision:
    """Draw a Decision (with the given stamp, if any)."""
    return Decision(draw(decision_kinds), draw(stamps) if stamp_ns is None else stamp_ns,
                    draw(taxonomies))


@st.composite
def decision_rationales(draw: st.DrawFn) -> DecisionRationale:
    """Draw a DecisionRationale (a calibrated sha only alongside a raw one)."""
    stamp_ns = draw(stamps)
    raw_sha = draw(optional_shas)
    return DecisionRationale(
        stamp_ns=stamp_ns,
        frame_id=draw(frame_ids),
        decision=draw(decisions(stamp_ns)),
        self_assessment_sha256=raw_sha,
        calibrated_assessment_sha256=None if raw_sha is None else draw(optional_shas),
        policy_id=draw(taxonomies),
        flight_status=draw(flight_statuses),
        mission_status=draw(mission_statuses),
        perception_mode=draw(st.none() | taxonomies),
    )


@st.composite
def vehicle_statuses(draw: st.DrawFn) -> VehicleStatus:
    """Draw a VehicleStatus (any flight and mission status, perception mode or none)."""
    return VehicleStatus(
        stamp_ns=draw(stamps), frame_id=draw(frame_ids), flight_status=draw(flight_statuses),
        mission_status=draw(mission_statuses), source=draw(taxonomies),
        perception_mode=draw(st.none() | taxonomies))


@st.composite
def configuration_changes(draw: st.DrawFn) -> ConfigurationChange:
    """Draw a ConfigurationChange (any node name, boundary >= -1 and configuration text)."""
    return ConfigurationChange(
        stamp_ns=draw(stamps), frame_id=draw(frame_ids),
        node=draw(st.sampled_from(['/calibrator', '/uav1/self_assessor', ''])),
        in_force_after_stamp_ns=draw(st.integers(-1, 2**63 - 1)),
        configuration=draw(st.sampled_from(['{"process_noise_q":0.5}', '{}', 'ñ'])))


@st.composite
def actuator_commands(draw: st.DrawFn) -> ActuatorCommand:
    """Draw an ActuatorCommand (non-zero velocity only for VELOCITY_SETPOINT)."""
    kind = draw(command_kinds)
    if kind == ActuatorCommandKind.VELOCITY_SETPOINT:
        return ActuatorCommand(kind, draw(vec3s), draw(vec3s))
    return ActuatorCommand(kind)


@st.composite
def action_emissions(draw: st.DrawFn) -> ActionEmission:
    """Draw an ActionEmission."""
    stamp_ns = draw(stamps)
    return ActionEmission(
        stamp_ns=stamp_ns,
        frame_id=draw(frame_ids),
        decision=draw(decisions(stamp_ns)),
        rationale_sha256=draw(shas),
        command=draw(actuator_commands()),
        contract_id=draw(taxonomies),
    )


#: A PX4 setpoint value: a float32, or not controlled (given as None or NaN, stored as None).
setpoint_values = st.one_of(
    st.sampled_from([None, math.nan, 0.0, -0.0]),
    st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False, width=32),
)


def _mode_answer(draw: st.DrawFn) -> dict[str, int]:
    """An ardupilot record's mode switch: none asked yet, or a mode asked and any answer."""
    asked = draw(st.sampled_from([0, *sorted(ARDUPILOT_MODES)]))
    if asked == 0:
        return {}
    return {'mode_asked': asked, 'mode_answer': draw(st.integers(0, 3)),
            'vehicle_mode': draw(st.integers(0, 255))}


@st.composite
def gate_emissions(draw: st.DrawFn) -> GateEmission:
    """Draw a GateEmission: any action and reason, with or without an actuation, any mode.

    The other mode's fields are zero; without an actuation its fields are zero / empty; the
    kinds are any uint8 (the gate records what it received).
    """
    action = draw(st.sampled_from(list(GateAction)))
    mode = draw(st.sampled_from(GATE_MODES))
    position = velocity = linear = angular = ZERO3
    yaw: float | None = 0.0
    if mode == 'px4':
        position = draw(st.tuples(setpoint_values, setpoint_values, setpoint_values))
        velocity = draw(st.tuples(setpoint_values, setpoint_values, setpoint_values))
        yaw = draw(setpoint_values)
    else:
        linear, angular = draw(vec3s), draw(vec3s)
    emission = GateEmission(
        stamp_ns=draw(stamps),
        frame_id=draw(frame_ids),
        action=action,
        reason=draw(st.sampled_from(list(GateReason))),
        mode=mode,
        output_topic=draw(st.sampled_from(['/fmu/in/trajectory_setpoint',
                                           '/fmu/in/vehicle_command', '/cmd_vel', '/a/cmd_vel'])),
        timeout_s=draw(st.floats(min_value=1e-9, max_value=3600.0)),
        position=position,
        velocity=velocity,
        yaw=yaw,
        twist_linear=linear,
        twist_angular=angular,
        vehicle_command=draw(st.sampled_from(
            sorted(ARDUPILOT_MODES) if mode == 'ardupilot'
            else [VEHICLE_CMD_NAV_LAND, VEHICLE_CMD_NAV_RETURN_TO_LAUNCH]))
        if action is GateAction.VEHICLE_COMMAND else 0,
        **(_mode_answer(draw) if mode == 'ardupilot' else {}),
    )
    if not draw(st.booleans()):
        return emission
    return replace(
        emission,
        has_actuation=True,
        actuation_stamp_ns=draw(stamps),
        rationale_sha256=draw(shas),
        decision_kind=draw(st.one_of(decision_kinds, st.integers(0, 255))),
        command_kind=draw(st.one_of(command_kinds, st.integers(0, 255))),
        actuation_received_ns=draw(stamps),
    )


#: Every ghost message type name -> a strategy drawing its contract.
MESSAGE_STRATEGIES = {
    'ActionEmission': action_emissions(),
    'ActuatorCommand': actuator_commands(),
    'AxisAssessment': axis_assessments(),
    'BeliefSelfAssessment': belief_self_assessments(),
    'CalibratedSelfAssessment': calibrated_assessments(),
    'CalibrationHistory': calibration_histories(),
    'ConfigurationChange': configuration_changes(),
    'Decision': decisions(),
    'DecisionRationale': decision_rationales(),
    'ForwardPrediction': forward_predictions(),
    'GateEmission': gate_emissions(),
    'PredictionOutcome': prediction_outcomes(),
    'VehicleStatus': vehicle_statuses(),
}

messages = st.one_of(*MESSAGE_STRATEGIES.values())


@st.composite
def calibrated_views(draw: st.DrawFn, stamp_ns: int = 0, min_outcomes: int = 4,
                     downgrade_threshold: int = 2) -> CalibratedView:
    """What the property judges read of a calibrated assessment, around the drift boundary."""
    return CalibratedView(
        stamp_ns=stamp_ns,
        raw_overall_level=draw(levels),
        adjusted_overall_level=draw(levels),
        outcomes_considered=draw(st.integers(0, 8)),
        count_beyond_3_std=draw(st.integers(0, 3)),
        count_beyond_5_std=draw(st.integers(0, 3)),
        min_outcomes=min_outcomes,
        downgrade_threshold=downgrade_threshold,
    )


@st.composite
def actuation_views(draw: st.DrawFn, stamp_ns: int = 0) -> ActuationView:
    """An actuation: any decision, any command (a few outside the catalogue)."""
    command = draw(st.one_of(command_kinds, st.integers(7, 255)))
    return ActuationView(stamp_ns, draw(decision_kinds), int(command))


@st.composite
def live_streams(draw: st.DrawFn, max_cycles: int = 12) -> tuple[
        list[tuple[CalibratedView, list[ActuationView]]],
        list[CalibratedView | ActuationView]]:
    """Cycles (a calibrated assessment, 0-2 actuations each) and one arrival order of them.

    Each stream keeps its own order, as DDS does for one writer: calibrated assessments in
    cycle order, actuations in cycle order; how the two interleave is drawn.
    """
    count = draw(st.integers(1, max_cycles))
    cycles = []
    for index in range(count):
        stamp = (index + 1) * 100_000_000
        cycles.append((draw(calibrated_views(stamp)),
                       draw(st.lists(actuation_views(stamp), max_size=2))))
    calibrated = [c for c, _ in cycles]
    actuations = [a for _, acts in cycles for a in acts]
    order: list[CalibratedView | ActuationView] = []
    while calibrated or actuations:
        take_calibrated = bool(calibrated) and (not actuations or draw(st.booleans()))
        order.append(calibrated.pop(0) if take_calibrated else actuations.pop(0))
    return cycles, order


@dataclass(frozen=True, slots=True)
class GateRecordView:
    """A gate record reduced to what the GATE-v1 judge reads (a ``GateRecordFacts``)."""

    gate: str
    stamp_ns: int
    action: int
    reason: str = ''
    mode: str = 'px4'
    output_topic: str = ''
    has_actuation: bool = False
    actuation_stamp_ns: int = 0
    rationale_sha256: str = ''
    decision_kind: int = 0
    command_kind: int = 0
    actuation_received_ns: int = 0
    timeout_s: float = 0.0
    velocity: tuple[float, ...] = (0.0, 0.0, 0.0)
    twist_linear: tuple[float, ...] = (0.0, 0.0, 0.0)
    twist_angular: tuple[float, ...] = (0.0, 0.0, 0.0)
    vehicle_command: int = 0
    #: When the recorder logged it (None: not recorded; the judge then uses none).
    log_time_ns: int | None = None


@dataclass(frozen=True)
class GateRun:
    """A command gate's run: the actuations it received and the records of what it sent."""

    #: cycle stamp -> the actuation recorded for it (one per cycle)
    actuations: dict[int, tuple[CitedActuationView, ...]]
    records: list[GateRecordView]
    timeout_ns: int


@st.composite
def gate_runs(draw: st.DrawFn, max_actuations: int = 8, max_outputs: int = 24) -> GateRun:
    """A gate that applies ``ghost_core.gate.gate_verdict`` to every output it sends.

    Actuations (any decision, any command) arrive in cycle order, each a little after its
    cycle; outputs happen at drawn times, from before the first actuation to long after the
    last (stale). Holds are zero velocity (NaN on some axes: not controlled) or a zero twist;
    passed outputs carry any mission velocity. The recorder logs every actuation and record
    when the gate receives or sends it.
    """
    timeout_ns = draw(st.integers(10_000_000, 1_000_000_000))
    mode = draw(st.sampled_from(['px4', 'twist']))
    actuations: dict[int, tuple[CitedActuationView, ...]] = {}
    received: list[tuple[int, int, LatestActuation, str]] = []
    for index in range(draw(st.integers(0, max_actuations))):
        stamp = 1_000_000_000 + index * 100_000_000
        decision, command = draw(decision_kinds), draw(command_kinds)
        sha = f'{index + 1:064x}'
        arrival = stamp + draw(st.integers(0, 50_000_000))
        actuations[stamp] = (CitedActuationView(decision, command, sha, arrival),)
        received.append((arrival, stamp, LatestActuation(decision, command, arrival), sha))
    end = 1_000_000_000 + (max_actuations + 1) * 100_000_000 + 2 * timeout_ns
    times = sorted(draw(st.lists(st.integers(900_000_000, end), max_size=max_outputs)))
    speeds = st.floats(-20.0, 20.0, allow_nan=False)
    records = []
    for now in times:
        latest = [item for item in received if item[0] <= now]
        verdict = gate_verdict(latest[-1][2] if latest else None, now, timeout_ns)
        velocity = twist = ZERO3
        if verdict.action is GateAction.PASSED:
            moving = draw(st.tuples(speeds, speeds, speeds))
            velocity, twist = (moving, ZERO3) if mode == 'px4' else (ZERO3, moving)
        elif verdict.action is GateAction.HELD and mode == 'px4':
            velocity = draw(st.tuples(*[st.sampled_from([0.0, math.nan])] * 3))
        record = GateRecordView(
            gate='/ghost/gate', stamp_ns=now, action=verdict.action, reason=verdict.reason,
            mode=mode, timeout_s=timeout_ns / 1e9, velocity=velocity, twist_linear=twist,
            vehicle_command=verdict.vehicle_command, log_time_ns=now)
        if latest:
            _, stamp, actuation, sha = latest[-1]
            record = replace(record, has_actuation=True, actuation_stamp_ns=stamp,
                             rationale_sha256=sha, decision_kind=actuation.decision_kind,
                             command_kind=actuation.command_kind,
                             actuation_received_ns=actuation.received_ns)
        records.append(record)
    return GateRun(actuations, records, timeout_ns)


# --- RECOVERY-v1: a self-assessor's inputs as it and the recorder received them ------------


@dataclass(frozen=True)
class RecoveryTrace:
    """Inputs as the assessor received them, and what the recorder kept of them.

    `assessor_inputs`: (arrival, order, sample) in the assessor's arrival order. `recorded`:
    (log time, sample) in record order. `assessor_lost`: stamps of beliefs the recorder holds
    but the assessor never received (best effort). The recorder keeps every Ghost message
    (reliable). `recovery_from`: with ``recovering``, the first stamp of the final segment
    (KNOWN, confirmed, nothing lost).
    """

    config: object  # a ghost_core.pipeline.PipelineConfig
    assessor_inputs: tuple[tuple[int, int, object], ...]
    recorded: tuple[tuple[int, object], ...]
    assessor_lost: frozenset[int]
    recovery_from: int | None


def _diagonal6(position_std: float, velocity_std: float,
               orientation_std: float) -> tuple[tuple[float, ...], tuple[float, ...]]:
    pose, twist = [0.0] * 36, [0.0] * 36
    for i in range(3):
        pose[i * 7] = position_std ** 2
        pose[(i + 3) * 7] = orientation_std ** 2
        twist[i * 7] = velocity_std ** 2
        twist[(i + 3) * 7] = 0.01
    return tuple(pose), tuple(twist)


@st.composite
def recovery_configs(draw: st.DrawFn) -> object:
    """A pipeline configuration with any hysteresis, horizon and lag (period 100 ms)."""
    from ghost_core.assessment import HysteresisConfig, ThresholdsConfig
    from ghost_core.pipeline import PipelineConfig
    from ghost_core.prediction import EvaluatorConfig

    ms = 1_000_000
    hysteresis = HysteresisConfig(
        recovery_margin=draw(st.sampled_from([0.0, 0.2, 0.5, 0.9])),
        recovery_dwell_ns=draw(st.sampled_from([0, 300 * ms, 2000 * ms])),
        min_level_interval_ns=draw(st.sampled_from([0, 500 * ms, 5000 * ms])),
        recovery_bound_ns=draw(st.sampled_from([0, 100 * ms, 700 * ms, 1500 * ms])))
    thresholds = ThresholdsConfig(
        hysteresis=hysteresis,
        no_covariance_level=draw(st.sampled_from([SelfAssessmentLevel.UNKNOWN,
                                                  SelfAssessmentLevel.UNCERTAIN])),
        unconfirmed_horizon_ns=draw(st.sampled_from([0, 250 * ms, 600 * ms, 3100 * ms])))
    return PipelineConfig(period_ns=100 * ms, thresholds=thresholds, evaluator=EvaluatorConfig(
        max_observation_lag_ns=draw(st.sampled_from([0, 50 * ms, 250 * ms]))))


@st.composite
def recovery_traces(draw: st.DrawFn, max_cycles: int = 80, recovering: bool = False,
                    ) -> RecoveryTrace:
    """A self-assessor's inputs, as it and the recorder received them.

    Beliefs every period, their position std in segments crossing the thresholds (inside
    the margin band, at the threshold, UNCERTAIN, UNKNOWN, no covariance, NaN position),
    fixes in bursts with outages, received by the recorder late (up to past the lag) and by
    the assessor up to the lag later than by the recorder; the recorder loses some beliefs
    and fixes, the assessor some beliefs; gaps of a few periods; beliefs out of order.

    With `recovering`, one bad segment, then a last one KNOWN, confirmed every period and
    lost by nobody, that lasts at least R plus the lag plus three periods.
    """
    from ghost_core.pipeline import PipelineConfig
    from ghost_core.samples import BeliefSample, Observation

    config = draw(recovery_configs())
    assert isinstance(config, PipelineConfig)
    period = config.period_ns
    thresholds = config.thresholds
    lag = config.evaluator.max_observation_lag_ns
    known, uncertain = thresholds.position.known_max_std, thresholds.position.uncertain_max_std
    margin = 1.0 - thresholds.hysteresis.recovery_margin
    stds = st.sampled_from([0.5 * known * margin, 0.99 * known, known, 0.5 * (known + uncertain),
                            2.0 * uncertain, 0.0, math.nan])
    segments: list[tuple[int, float, bool]] = []  # (cycles, position std, fixes on)
    while sum(length for length, _, _ in segments) < max_cycles and (
            not segments or draw(st.booleans())):
        segments.append((draw(st.integers(1, 25)), draw(stds), draw(st.booleans())))
    recovery_cycles = bad_cycles = 0
    if recovering:
        bad_cycles = draw(st.integers(1, 10))
        segments.append((bad_cycles, 0.5 * (known + uncertain), True))
        # Long enough to be shown confirmed (fixes a lag old), then to last R.
        recovery_cycles = ((thresholds.hysteresis.recovery_bound_ns + lag) // period + 3
                           + draw(st.integers(0, 10)))
        segments.append((recovery_cycles, 0.5 * known * margin, True))
    assessor: list[tuple[int, int, object]] = []
    recorded: list[tuple[int, int, object]] = []
    assessor_lost: set[int] = set()
    total = sum(length for length, _, _ in segments)
    index = skipped = 0  # index: beliefs drawn; skipped: periods the estimator was silent
    recovery_from = None
    for length, std, fixes_on in segments:
        for _ in range(length):
            stamp = 1_000_000_000 + (index + skipped) * period
            # The bad segment and the recovery are received and recorded as they are.
            protected = recovering and index >= total - recovery_cycles - bad_cycles
            final = recovering and index >= total - recovery_cycles
            if final and recovery_from is None:
                recovery_from = stamp
            position = (float(index), 0.0, 10.0)
            if math.isnan(std):
                position = (math.nan, 0.0, 10.0)
            pose, twist = _diagonal6(0.0 if math.isnan(std) else std, 0.1, 0.05)
            if std == 0.0:
                pose = tuple(0.0 for _ in pose)
            belief = BeliefSample(stamp_ns=stamp, frame_id='map', position=position,
                                  velocity=(1.0, 0.0, 0.0), pose_covariance=pose,
                                  twist_covariance=twist, orientation_xyzw=(0.0, 0.0, 0.0, 1.0))
            arrival = stamp
            if not protected and draw(st.integers(0, 19)) == 0:
                arrival += period + period // 2  # after the next belief: out of order
            assessor.append((arrival, 1, belief))
            lost = not protected and draw(st.integers(0, 19)) == 0
            if not lost:
                recorded.append((arrival, 1, belief))
            elif draw(st.booleans()):
                assessor_lost.add(stamp)
                recorded.append((arrival, 1, belief))
            if fixes_on and (final or draw(st.integers(0, 3))):
                fix_stamp = stamp - draw(st.integers(0, period - 1))
                fix = Observation(fix_stamp, 'map', (float(index), 0.0, 10.0),
                                  (0.25, 0.0, 0.0, 0.0, 0.25, 0.0, 0.0, 0.0, 0.25))
                log = fix_stamp + (0 if final else draw(st.integers(0, lag + 2 * period)))
                # The assessor receives it up to the lag after the recorder (or sooner).
                late = draw(st.integers(-period, max(lag - 1, 0))) if lag else -1
                assessor.append((log + late, 0, fix))
                if final or draw(st.integers(0, 19)):
                    recorded.append((log, 0, fix))
            index += 1
            if not protected and draw(st.integers(0, 19)) == 0:
                skipped += draw(st.integers(1, 5))  # the estimator published nothing: a gap
    assessor.sort(key=lambda item: (item[0], item[1]))
    recorded.sort(key=lambda item: (item[0], item[1]))
    return RecoveryTrace(config, tuple(assessor), tuple((log, s) for log, _, s in recorded),
                         frozenset(assessor_lost), recovery_from)
