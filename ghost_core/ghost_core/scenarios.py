"""Seeded, deterministic scenarios of SPEC section 7: beliefs and observations per cycle."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
import math
import random

from ghost_core.assessment import ThresholdsConfig
from ghost_core.contracts import Vec3, VehicleStatus
from ghost_core.errors import ConfigError
from ghost_core.levels import FlightStatus, MissionStatus
from ghost_core.loop import LoopConfig
from ghost_core.pipeline import CycleTrace, PipelineConfig, run_pipeline
from ghost_core.samples import BeliefSample, Observation

__all__ = [
    'DEFAULT_FRAME_ID',
    'GNSS_OUTAGE_FIRST_CYCLE',
    'GNSS_OUTAGE_LAST_CYCLE',
    'GNSS_OUTAGE_Q',
    'SCENARIO_DOWNGRADE_THRESHOLD',
    'SCENARIO_MIN_OUTCOMES',
    'SCENARIO_NAMES',
    'SCENARIO_SOURCE',
    'START_STAMP_NS',
    'Scenario',
    'ScenarioCycle',
    'ScenarioParameters',
    'generate_scenario',
    'run_scenario',
]

SCENARIO_NAMES: tuple[str, ...] = ('smoke', 'drift_then_recovery', 'nominal', 'dropout',
                                   'gnss_outage')

#: Simulation time of cycle 1 (1 s, so that no cycle stamp is the zero "no stamp" value).
START_STAMP_NS = 1_000_000_000
DEFAULT_FRAME_ID = 'map'
#: VehicleStatus.source of a scenario's vehicle status.
SCENARIO_SOURCE = 'scenario'

# Noise model shared by every scenario (1-sigma per axis). The belief declares exactly these
# values (a consistent estimator) unless the scenario makes it drift.
POSITION_STD = 0.05  # m, belief position noise and declared std
VELOCITY_STD = 0.05  # m/s, belief velocity noise and declared std
ORIENTATION_STD = 0.01  # rad, declared only (orientation is not predicted)
ANGULAR_RATE_STD = 0.01  # rad/s, declared only
OBSERVATION_STD = 0.05  # m, observation noise and declared std
#: Predictor process noise Q (m^2/s). With the stds above and 10 Hz, S = Σpred + Σobs is about
#: twice the true error covariance, so a consistent run exceeds 3 sigma with probability
#: ~5e-4 per outcome: drift (K=2 in a window) essentially never triggers on nominal data.
PROCESS_NOISE_Q = 0.05
DRIFT_RATE = 5.0  # m/s, the belief's drift away from truth (smoke, drift_then_recovery)
DRIFT_CYCLES = 10  # drift_then_recovery: cycles of drift before the estimator re-converges
#: gnss_outage: the first and the last cycle without a fix (at 10 Hz: 5 s of fixes, a 15 s
#: outage, then fixes again from cycle 201).
GNSS_OUTAGE_FIRST_CYCLE = 51
GNSS_OUTAGE_LAST_CYCLE = 200
#: gnss_outage: growth of the declared position variance while dead-reckoning (m²/s, per
#: axis): σ(τ)² = POSITION_STD² + q·τ, τ = time since the last fused fix. With q = 0.08, σ
#: passes the 0.5 m KNOWN threshold 3.1 s into the outage (first at cycle 81 at 10 Hz) and
#: reaches 1.10 m at its end; the 2.0 m UNCERTAIN threshold would need 50 s: never reached.
GNSS_OUTAGE_Q = 0.08
#: M and K every scenario is stated with (SPEC §7: "smoke ... M=4, K=2"), not the calibrator's
#: declared defaults (ghost_core.agent_parameters): config/scenarios/<name>.yaml sets the same.
SCENARIO_MIN_OUTCOMES = 4
SCENARIO_DOWNGRADE_THRESHOLD = 2


@dataclass(frozen=True, slots=True)
class ScenarioParameters:
    """The parameters a scenario is meant to be run with."""

    period_ns: int
    cycles: int
    max_history: int
    min_outcomes: int
    downgrade_threshold: int
    process_noise_q: float
    #: The scenario is built so that both BAUD-v1 and ERUR-v1 apply on some cycle (SPEC
    #: section 7): a run of it must cover both (``verify_all --require-coverage``).
    covers_both_properties: bool = False

    def loop_config(self) -> LoopConfig:
        """Return the closed-loop configuration (M, K, W) of the scenario."""
        return LoopConfig(self.min_outcomes, self.downgrade_threshold, self.max_history)

    def pipeline_config(self, thresholds: ThresholdsConfig | None = None) -> PipelineConfig:
        """Return the whole-agent configuration of the scenario (default thresholds if None)."""
        return PipelineConfig(self.period_ns, self.process_noise_q, self.loop_config(),
                              ThresholdsConfig() if thresholds is None else thresholds)


@dataclass(frozen=True, slots=True)
class ScenarioCycle:
    """One cycle: truth (for reference only), belief, observation if any, vehicle status.

    The status is the scenario's own: its simulated drone is airborne.
    """

    index: int
    stamp_ns: int
    truth_position: Vec3
    truth_velocity: Vec3
    belief: BeliefSample
    observation: Observation | None
    vehicle: VehicleStatus


@dataclass(frozen=True, slots=True)
class Scenario:
    """A generated scenario: its name, seed, recommended parameters and cycles (1-based)."""

    name: str
    seed: int
    frame_id: str
    parameters: ScenarioParameters
    cycles: tuple[ScenarioCycle, ...]

    def inputs(self) -> Iterator[BeliefSample | Observation | VehicleStatus]:
        """Yield the inputs the agent receives, in the order the scenario node publishes them.

        Per cycle: the vehicle status, the observation (if any), then the belief.
        """
        for cycle in self.cycles:
            yield cycle.vehicle
            if cycle.observation is not None:
                yield cycle.observation
            yield cycle.belief


def _vehicle(stamp_ns: int, mission: MissionStatus) -> VehicleStatus:
    """The scenario's vehicle status at a cycle: in the air (the truth flies at 10 m)."""
    return VehicleStatus(stamp_ns, DEFAULT_FRAME_ID, FlightStatus.IN_AIR, mission,
                         SCENARIO_SOURCE)


def _diagonal6(first: float, second: float) -> tuple[float, ...]:
    values = [0.0] * 36
    for i in range(6):
        values[i * 7] = first**2 if i < 3 else second**2
    return tuple(values)


def _diagonal3(std: float) -> tuple[float, ...]:
    variance = std**2
    return (variance, 0.0, 0.0, 0.0, variance, 0.0, 0.0, 0.0, variance)


def _gauss3(rng: random.Random, std: float) -> Vec3:
    return (rng.gauss(0.0, std), rng.gauss(0.0, std), rng.gauss(0.0, std))


def _scaled(v: Vec3, factor: float) -> Vec3:
    return (v[0] * factor, v[1] * factor, v[2] * factor)


def _add(*vectors: Vec3) -> Vec3:
    return (sum(v[0] for v in vectors), sum(v[1] for v in vectors), sum(v[2] for v in vectors))


def _build(
    name: str,
    seed: int,
    parameters: ScenarioParameters,
    truth_start: Vec3,
    truth_velocity: Vec3,
    drift_offset: Callable[[int, float], Vec3],
    has_observation: Callable[[int], bool],
    mission: MissionStatus = MissionStatus.ON_MISSION,
) -> Scenario:
    rng = random.Random(seed)
    period_s = parameters.period_ns / 1e9
    pose_cov = _diagonal6(POSITION_STD, ORIENTATION_STD)
    twist_cov = _diagonal6(VELOCITY_STD, ANGULAR_RATE_STD)
    observation_cov = _diagonal3(OBSERVATION_STD)
    cycles = []
    for index in range(1, parameters.cycles + 1):
        stamp_ns = START_STAMP_NS + (index - 1) * parameters.period_ns
        elapsed = (index - 1) * period_s
        truth = _add(truth_start, _scaled(truth_velocity, elapsed))
        # Draw every noise term every cycle, used or not, so that the random stream (hence
        # every other value) does not depend on which cycles have observations.
        position_noise = _gauss3(rng, POSITION_STD)
        velocity_noise = _gauss3(rng, VELOCITY_STD)
        observation_noise = _gauss3(rng, OBSERVATION_STD)
        belief = BeliefSample(
            stamp_ns=stamp_ns,
            frame_id=DEFAULT_FRAME_ID,
            position=_add(truth, drift_offset(index, period_s), position_noise),
            velocity=_add(truth_velocity, velocity_noise),
            pose_covariance=pose_cov,
            twist_covariance=twist_cov,
        )
        observation = (
            Observation(stamp_ns, DEFAULT_FRAME_ID, _add(truth, observation_noise),
                        observation_cov)
            if has_observation(index) else None
        )
        cycles.append(ScenarioCycle(index, stamp_ns, truth, truth_velocity, belief,
                                    observation, _vehicle(stamp_ns, mission)))
    return Scenario(name, seed, DEFAULT_FRAME_ID, parameters, tuple(cycles))


def _no_drift(index: int, period_s: float) -> Vec3:
    return (0.0, 0.0, 0.0)


def _steady_drift(index: int, period_s: float) -> Vec3:
    # Already drifting at cycle 1: the offset is DRIFT_RATE * index * period along +y.
    return (0.0, DRIFT_RATE * index * period_s, 0.0)


def _drift_then_converge(index: int, period_s: float) -> Vec3:
    return _steady_drift(index, period_s) if index <= DRIFT_CYCLES else (0.0, 0.0, 0.0)


def _always(index: int) -> bool:
    return True


def _in_outage(index: int) -> bool:
    return GNSS_OUTAGE_FIRST_CYCLE <= index <= GNSS_OUTAGE_LAST_CYCLE


def _build_gnss_outage(name: str, seed: int, parameters: ScenarioParameters) -> Scenario:
    """A consistent estimator whose declared (and true) error grows while fixes are missing.

    The belief's position error is a random walk that stays honest: N(0, POSITION_STD²) with
    fixes; from the last fused fix on, each cycle adds N(0, q·Δ) per axis, so the error at τ
    into the outage is N(0, σ(τ)²) with σ(τ)² = POSITION_STD² + q·τ, exactly what the belief
    declares. The truth flies on at constant velocity (it does not drift). On the first cycle
    with a fix again the EKF has fused it: σ and the error are back to POSITION_STD.
    """
    rng = random.Random(seed)
    period_s = parameters.period_ns / 1e9
    truth_start: Vec3 = (0.0, 0.0, 10.0)
    truth_velocity: Vec3 = (2.0, 0.0, 0.0)
    twist_cov = _diagonal6(VELOCITY_STD, ANGULAR_RATE_STD)
    observation_cov = _diagonal3(OBSERVATION_STD)
    last_fix_ns: int | None = None
    error: Vec3 = (0.0, 0.0, 0.0)
    cycles = []
    for index in range(1, parameters.cycles + 1):
        stamp_ns = START_STAMP_NS + (index - 1) * parameters.period_ns
        truth = _add(truth_start, _scaled(truth_velocity, (index - 1) * period_s))
        # Every noise term is drawn every cycle, used or not (as _build does): the random
        # stream does not depend on where the outage is.
        fresh_error = _gauss3(rng, POSITION_STD)
        walk_step = _gauss3(rng, 1.0)
        velocity_noise = _gauss3(rng, VELOCITY_STD)
        observation_noise = _gauss3(rng, OBSERVATION_STD)
        has_fix = not _in_outage(index) or index == parameters.cycles
        if has_fix or last_fix_ns is None:
            position_std = POSITION_STD
            error = fresh_error
            last_fix_ns = stamp_ns
        else:
            tau_s = (stamp_ns - last_fix_ns) / 1e9
            position_std = math.sqrt(POSITION_STD**2 + GNSS_OUTAGE_Q * tau_s)
            error = _add(error, _scaled(walk_step, math.sqrt(GNSS_OUTAGE_Q * period_s)))
        belief = BeliefSample(
            stamp_ns=stamp_ns,
            frame_id=DEFAULT_FRAME_ID,
            position=_add(truth, error),
            velocity=_add(truth_velocity, velocity_noise),
            pose_covariance=_diagonal6(position_std, ORIENTATION_STD),
            twist_covariance=twist_cov,
        )
        observation = (Observation(stamp_ns, DEFAULT_FRAME_ID, _add(truth, observation_noise),
                                   observation_cov) if has_fix else None)
        cycles.append(ScenarioCycle(index, stamp_ns, truth, truth_velocity, belief,
                                    observation,
                                    _vehicle(stamp_ns, MissionStatus.ON_MISSION)))
    return Scenario(name, seed, DEFAULT_FRAME_ID, parameters, tuple(cycles))


def generate_scenario(
    name: str,
    seed: int = 0,
    *,
    cycles: int | None = None,
    period_ns: int | None = None,
) -> Scenario:
    """Return the named scenario, generated deterministically from `seed` (pure).

    - smoke: 10 cycles at 10 Hz; truth flies at 1 m/s along x; the belief drifts from it at
      5 m/s along y (offset 0.5 m at cycle 1, growing) while declaring 5 cm; M=4, K=2, W=32.
    - drift_then_recovery: 30 cycles; the smoke drift for 10 cycles, then the estimator
      re-converges (no offset). W=8 so the bad outcomes (cycles 2-11) leave the window:
      PROCEED resumes at cycle 18.
    - nominal: 100 cycles of a consistent estimator (declared covariance = true noise).
    - dropout: 20 cycles of a consistent estimator hovering at rest; cycles whose index ends
      in 4, 7, 8 or 9 have no observation, except the last cycle, which always has one.
    - gnss_outage: 300 cycles (30 s at 10 Hz) of a consistent estimator flying at 2 m/s along
      x; fixes on cycles 1-50, none on cycles 51-200 (GNSS_OUTAGE_FIRST/LAST_CYCLE, a 15 s
      outage; the last cycle always has one), fixes again from cycle 201. While
      dead-reckoning the belief declares σ(τ) = sqrt(0.05² + 0.08·τ) m per position axis (τ
      = time since the last fix, GNSS_OUTAGE_Q) and its error is drawn from exactly that
      (honest: only the uncertainty grows, the truth does not drift); on cycle 201 it has
      fused the fix and is back to 0.05 m. σ exceeds the 0.5 m KNOWN threshold first on
      cycle 81 (τ = 3.1 s, σ = 0.5005 m) and ends the outage at 1.10 m (below the 2.0 m
      UNCERTAIN threshold). Expected with the default thresholds and hysteresis (margin 0.2,
      dwell 2 s, min interval 5 s): PROCEED on cycles 1-80; HOLD (raw UNCERTAIN) at once on
      cycle 81 through 220; the recovery starts on cycle 201 (σ = 0.05 <= 0.4 m) and the
      2 s dwell ends on cycle 221: PROCEED on cycles 221-300. No drift: the outcomes stay
      consistent, the history keeps the last 32 from before the outage. W=32.

    Every scenario's vehicle is in the air (IN_AIR) on a mission (ON_MISSION), except
    dropout's, which holds in place (HOLDING); each cycle carries that status.

    `cycles` and `period_ns` override the recommended values (both integers >= 1).
    """
    parameters = _parameters(name, seed, cycles, period_ns)
    if name == 'smoke':
        return _build(name, seed, parameters, (0.0, 0.0, 10.0), (1.0, 0.0, 0.0),
                      _steady_drift, _always)
    if name == 'drift_then_recovery':
        return _build(name, seed, parameters, (0.0, 0.0, 10.0), (1.0, 0.0, 0.0),
                      _drift_then_converge, _always)
    if name == 'nominal':
        return _build(name, seed, parameters, (0.0, 0.0, 10.0), (1.0, 0.5, 0.0),
                      _no_drift, _always)
    if name == 'gnss_outage':
        return _build_gnss_outage(name, seed, parameters)
    # dropout hovers at rest: the vehicle holds in place.
    return _build(name, seed, parameters, (0.0, 0.0, 10.0), (0.0, 0.0, 0.0), _no_drift,
                  lambda index: index == parameters.cycles or index % 10 not in (4, 7, 8, 9),
                  MissionStatus.HOLDING)


#: Each scenario's recommended cycle count and history window W, and whether it is built to
#: cover both properties: smoke (ERUR-v1 on cycles 1-4, BAUD-v1 on 5-10) and
#: drift_then_recovery do; the consistent estimators (nominal, dropout, gnss_outage) have no
#: drift, so BAUD-v1 may never apply on them.
_RECOMMENDED = {
    'smoke': (10, 32, True), 'drift_then_recovery': (30, 8, True), 'nominal': (100, 32, False),
    'dropout': (20, 32, False), 'gnss_outage': (300, 32, False),
}


def _parameters(name: str, seed: int, cycles: int | None,
                period_ns: int | None) -> ScenarioParameters:
    """The named scenario's parameters, with `cycles` and `period_ns` when given (checked)."""
    if name not in _RECOMMENDED:
        raise ConfigError(f'scenario name must be one of {list(SCENARIO_NAMES)}, got {name!r}')
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ConfigError(f'scenario seed must be an integer, got {seed!r}')
    default_cycles, max_history, covers = _RECOMMENDED[name]
    count = default_cycles if cycles is None else cycles
    period = 100_000_000 if period_ns is None else period_ns
    for label, value in (('cycles', count), ('period_ns', period)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(f'scenario {label} must be an integer >= 1, got {value!r}')
    return ScenarioParameters(period, count, max_history, SCENARIO_MIN_OUTCOMES,
                              SCENARIO_DOWNGRADE_THRESHOLD, PROCESS_NOISE_Q,
                              covers_both_properties=covers)


def run_scenario(
    scenario: Scenario, thresholds: ThresholdsConfig | None = None
) -> tuple[CycleTrace, ...]:
    """Run the pure agent over `scenario` with its recommended parameters."""
    return run_pipeline(scenario.inputs(), scenario.parameters.pipeline_config(thresholds))
