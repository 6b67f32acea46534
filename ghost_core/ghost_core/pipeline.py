"""The whole agent as one pure object over its inputs: assess, predict, evaluate, loop step.

One cohesive job, kept in one module: the agent and the configuration a replay reads back.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Protocol

from ghost_core.actions import REFERENCE_EMISSION_CONTRACT_ID
from ghost_core.agent_parameters import declared, MAX_PROCESS_NOISE
from ghost_core.assessment import (
    ASSESSOR_ID,
    BlockThresholds,
    HysteresisConfig,
    SelfAssessor,
    ThresholdsConfig,
)
from ghost_core.calibration import DOWNGRADE_POLICY_ID
from ghost_core.contracts import (
    ActionEmission,
    BeliefSelfAssessment,
    CalibratedSelfAssessment,
    DecisionRationale,
    ForwardPrediction,
    PredictionOutcome,
    VehicleStatus,
)
from ghost_core.decisions import REFERENCE_POLICY_ID
from ghost_core.errors import ConfigError
from ghost_core.levels import SelfAssessmentLevel
from ghost_core.loop import closed_loop_step, CycleResult, LoopConfig
from ghost_core.prediction import (
    EvaluatorConfig,
    MODEL_ID,
    outcome_for_cycle,
    prediction_from_belief,
)
from ghost_core.samples import BeliefSample, Observation
from ghost_core.sequencing import CycleInputs, OutcomeSequencer
from ghost_core.vehicle import VehicleStatusTracker

__all__ = ['REFERENCE_POLICY_IDS', 'AgentInput', 'CycleParameters', 'CycleTrace', 'Pipeline',
           'PipelineConfig', 'iter_pipeline', 'run_pipeline']

#: The implementation each stage of the pipeline runs, by the id it records on its messages:
#: part of the recorded configuration, so that a replay knows what it re-runs.
REFERENCE_POLICY_IDS: Mapping[str, str] = MappingProxyType({
    'assessor_id': ASSESSOR_ID,
    'model_id': MODEL_ID,
    'adjustment_policy_id': DOWNGRADE_POLICY_ID,
    'policy_id': REFERENCE_POLICY_ID,
    'contract_id': REFERENCE_EMISSION_CONTRACT_ID,
})
#: How long the outcome evaluator waits without any input before it resolves its pending
#: cycles with what has arrived (its declared ``idle_flush_s``).
DEFAULT_IDLE_FLUSH_NS = round(declared('outcome_evaluator', 'idle_flush_s') * 1e9)


@dataclass(frozen=True, slots=True)
class PipelineConfig:
    """Everything the agent is configured with: period, Q, thresholds, evaluator, M/K/W.

    `grace_cycles` bounds the wait for a prediction that never comes (a non-finite belief
    predicts nothing), as the outcome evaluator node does. `idle_flush_ns` is the outcome
    evaluator's wall-clock flush of pending cycles when no input arrives for that long (0 =
    never): the pipeline has no clock, so only a replay driven by a run's own receipt times
    (``ghost_core.rederive.Replay``) applies it.
    """

    period_ns: int = round(declared('forward_predictor', 'period_s') * 1e9)
    process_noise_q: float = declared('forward_predictor', 'process_noise')
    loop: LoopConfig = field(default_factory=LoopConfig)
    thresholds: ThresholdsConfig = field(default_factory=ThresholdsConfig)
    evaluator: EvaluatorConfig = field(default_factory=EvaluatorConfig)
    grace_cycles: int = declared('outcome_evaluator', 'grace_cycles')
    idle_flush_ns: int = DEFAULT_IDLE_FLUSH_NS

    def __post_init__(self) -> None:
        """Enforce the invariants above, normalising field types."""
        if (isinstance(self.period_ns, bool) or not isinstance(self.period_ns, int)
                or self.period_ns < 1):
            raise ConfigError(f'PipelineConfig.period_ns must be an integer >= 1, '
                              f'got {self.period_ns!r}')
        q = self.process_noise_q
        if isinstance(q, bool) or not isinstance(q, (int, float)) or not 0.0 <= q <= (
                MAX_PROCESS_NOISE):
            raise ConfigError(f'PipelineConfig.process_noise_q must be a number in [0, '
                              f'{MAX_PROCESS_NOISE:g}] (its declared bound), got {q!r}')
        grace = self.grace_cycles
        if isinstance(grace, bool) or not isinstance(grace, int) or grace < 1:
            raise ConfigError(f'PipelineConfig.grace_cycles must be an integer >= 1, '
                              f'got {grace!r}')
        idle = self.idle_flush_ns
        if isinstance(idle, bool) or not isinstance(idle, int) or idle < 0:
            raise ConfigError(f'PipelineConfig.idle_flush_ns must be an integer >= 0, '
                              f'got {idle!r}')

    def to_dict(self) -> dict[str, object]:
        """Return the whole configuration as a plain dict (what a replay needs to re-run).

        With the ids of the implementations the pipeline runs (``policies``), so that the
        recorded configuration says what would be re-run; ``from_dict`` reads it back.
        """
        return {
            'evaluator': self.evaluator.to_dict(),
            'grace_cycles': self.grace_cycles,
            'idle_flush_ns': self.idle_flush_ns,
            'loop': {'downgrade_threshold': self.loop.downgrade_threshold,
                     'max_history': self.loop.max_history,
                     'min_outcomes': self.loop.min_outcomes},
            'period_ns': self.period_ns,
            'policies': dict(REFERENCE_POLICY_IDS),
            'process_noise_q': float(self.process_noise_q),
            'thresholds': self.thresholds.to_dict(),
        }

    @classmethod
    def from_dict(cls, document: Mapping[str, object]) -> PipelineConfig:
        """The configuration ``to_dict`` wrote, exactly; ConfigError naming what is wrong.

        Strict, so that a replay never guesses: every key must be present with its type
        (integers as integers, floats as numbers), none may be unknown, and ``policies`` must
        name the implementations this pipeline runs (``REFERENCE_POLICY_IDS``).
        """
        d = _Fields(document, 'run configuration')
        d.keys({'evaluator', 'grace_cycles', 'idle_flush_ns', 'loop', 'period_ns', 'policies',
                'process_noise_q', 'thresholds'})
        _check_policies(d.mapping('policies'))
        loop = d.mapping('loop')
        loop.keys({'downgrade_threshold', 'max_history', 'min_outcomes'})
        evaluator = d.mapping('evaluator')
        evaluator.keys({'max_observation_lag_ns', 'unmeasured_variance_m2'})
        thresholds = d.mapping('thresholds')
        hysteresis, no_covariance_level = _threshold_fields(thresholds)
        return cls(
            period_ns=d.integer('period_ns'),
            process_noise_q=d.number('process_noise_q'),
            loop=LoopConfig(min_outcomes=loop.integer('min_outcomes'),
                            downgrade_threshold=loop.integer('downgrade_threshold'),
                            max_history=loop.integer('max_history')),
            thresholds=_thresholds_config(thresholds, hysteresis, no_covariance_level),
            evaluator=EvaluatorConfig(
                unmeasured_variance_m2=evaluator.number('unmeasured_variance_m2'),
                max_observation_lag_ns=evaluator.integer('max_observation_lag_ns')),
            grace_cycles=d.integer('grace_cycles'),
            idle_flush_ns=d.integer('idle_flush_ns'),
        )


def _check_policies(policies: _Fields) -> None:
    """The recorded ``policies`` must name the implementations this pipeline runs."""
    policies.keys(set(REFERENCE_POLICY_IDS))
    for name, reference in REFERENCE_POLICY_IDS.items():
        recorded = policies.text(name)
        if recorded != reference:
            raise ConfigError(f'run configuration: policies.{name} is {recorded!r}, which '
                              f'has no reference implementation here (this pipeline '
                              f'runs {reference!r})')


def _threshold_fields(thresholds: _Fields) -> tuple[_Fields, SelfAssessmentLevel]:
    """Check the keys of the recorded thresholds; their hysteresis and no-covariance level."""
    thresholds.keys({'accuracy_profile', 'hysteresis', 'no_covariance_level', 'orientation',
                     'position', 'unconfirmed_horizon_ns', 'velocity'})
    hysteresis = thresholds.mapping('hysteresis')
    hysteresis.keys({'min_level_interval_ns', 'recovery_bound_ns', 'recovery_dwell_ns',
                     'recovery_margin'})
    level = thresholds.text('no_covariance_level')
    levels = {lvl.name.lower(): lvl for lvl in SelfAssessmentLevel}
    if level not in levels:
        raise ConfigError(f'run configuration: thresholds.no_covariance_level {level!r} '
                          f'is not one of {sorted(levels)}')
    return hysteresis, levels[level]


def _thresholds_config(thresholds: _Fields, hysteresis: _Fields,
                       no_covariance_level: SelfAssessmentLevel) -> ThresholdsConfig:
    """The recorded thresholds (keys checked by _threshold_fields) as a ThresholdsConfig."""
    def block(name: str) -> BlockThresholds:
        entry = thresholds.mapping(name)
        entry.keys({'known_max_std', 'uncertain_max_std'})
        return BlockThresholds(entry.number('known_max_std'), entry.number('uncertain_max_std'))

    return ThresholdsConfig(
        position=block('position'), velocity=block('velocity'),
        orientation=block('orientation'), no_covariance_level=no_covariance_level,
        hysteresis=HysteresisConfig(
            recovery_margin=hysteresis.number('recovery_margin'),
            recovery_dwell_ns=hysteresis.integer('recovery_dwell_ns'),
            min_level_interval_ns=hysteresis.integer('min_level_interval_ns'),
            recovery_bound_ns=hysteresis.integer('recovery_bound_ns')),
        unconfirmed_horizon_ns=thresholds.integer('unconfirmed_horizon_ns'),
        accuracy_profile=thresholds.text('accuracy_profile'))


class _Fields:
    """Typed, named access to one mapping of a recorded configuration (for from_dict)."""

    def __init__(self, value: object, path: str) -> None:
        if not isinstance(value, Mapping):
            raise ConfigError(f'{path} must be a mapping, got {type(value).__name__}')
        self._value = value
        self._path = path

    def keys(self, expected: set[str]) -> None:
        present = set(self._value)
        missing = sorted(expected - present)
        if missing:
            raise ConfigError(f'{self._path} lacks {", ".join(missing)} (recorded by another '
                              'Ghost version?)')
        unknown = sorted(str(key) for key in present - expected)
        if unknown:
            raise ConfigError(f'{self._path} has keys this pipeline does not know: '
                              f'{", ".join(unknown)}')

    def _get(self, name: str) -> object:
        return self._value[name]

    def mapping(self, name: str) -> _Fields:
        return _Fields(self._get(name), f'{self._path}.{name}')

    def integer(self, name: str) -> int:
        value = self._get(name)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f'{self._path}.{name} must be an integer, got {value!r}')
        return value

    def number(self, name: str) -> float:
        value = self._get(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f'{self._path}.{name} must be a number, got {value!r}')
        return float(value)

    def text(self, name: str) -> str:
        value = self._get(name)
        if not isinstance(value, str):
            raise ConfigError(f'{self._path}.{name} must be a string, got {value!r}')
        return value


@dataclass(frozen=True, slots=True)
class CycleTrace:
    """What the agent published for one cycle (every message carries `stamp_ns`).

    `prediction` is the one made at this cycle for the next (None for a non-finite belief).
    """

    stamp_ns: int
    raw: BeliefSelfAssessment
    prediction: ForwardPrediction | None
    outcome: PredictionOutcome
    result: CycleResult

    @property
    def calibrated(self) -> CalibratedSelfAssessment:
        """The calibrated assessment of this cycle."""
        return self.result.calibrated

    @property
    def rationale(self) -> DecisionRationale:
        """The decision rationale of this cycle."""
        return self.result.rationale

    @property
    def emission(self) -> ActionEmission:
        """The actuation of this cycle."""
        return self.result.emission


#: One input of the agent: a belief (/state/nav), a position fix (/observations) or the
#: vehicle's status (/vehicle_status, recorded in the decisions' context).
AgentInput = BeliefSample | Observation | VehicleStatus


class CycleParameters(Protocol):
    """The values a running node may be given mid-run (``ros2 param set``), per cycle.

    A live run records them on its messages (M and K on each calibrated assessment, Q on each
    prediction); a replay that follows a recording gives the pipeline these values cycle by
    cycle (``ghost_core.rederive.RecordedParameters``). Without one, the configuration's
    values hold for every cycle.
    """

    def loop_parameters(self, stamp_ns: int) -> tuple[int, int]:
        """M and K the calibrator applied to the cycle stamped ``stamp_ns``."""

    def process_noise_q(self, stamp_ns: int) -> float:
        """Q the forward predictor used for the prediction made at ``stamp_ns``."""


class Pipeline:
    """The whole agent as one pure, incremental object: feed inputs, get finished cycles.

    Inputs come in arrival order (the order a live graph would receive them; a bag's log-time
    order). Per belief t: the predictor predicts from it at once; the cycle is finished once
    its outcome is known (the same OutcomeSequencer the outcome evaluator node uses decides
    when), and then judged by the self-assessor (with its hysteresis state, in belief order,
    with the confirmation it had when t arrived: what the node published at once), calibrated
    with the outcomes up to and including t, decided (with the vehicle status in force at t,
    the decision policy node's VehicleStatusTracker) and emitted. ``resolve`` and ``complete``
    are the two halves of ``feed`` (``Replay`` applies an idle flush between them).
    `late_observations` and `superseded_observations` count fixes that were not used. Pure:
    same inputs in the same order, same outputs.

    `parameters` gives M, K and Q per cycle (a replay following a recording's mid-run
    changes); W, the period and everything else are the configuration's. The three components
    are methods (``assess``, ``predict``, ``evaluate``) so that a test can substitute one (a
    lying assessor, say) and still run everything else as the nodes do.
    """

    def __init__(self, config: PipelineConfig | None = None,
                 parameters: CycleParameters | None = None) -> None:
        self.config = PipelineConfig() if config is None else config
        self._parameters = parameters
        self._loops: dict[tuple[int, int], LoopConfig] = {
            (self.config.loop.min_outcomes, self.config.loop.downgrade_threshold):
                self.config.loop}
        self._assessor = SelfAssessor(self.config.thresholds)
        self._sequencer: OutcomeSequencer[ForwardPrediction, Observation] = OutcomeSequencer(
            self.config.grace_cycles, self.config.evaluator.max_observation_lag_ns)
        # Per pending cycle: its belief, the assessor's confirmation when it arrived, and the
        # prediction made from it.
        self._cycles: dict[int, tuple[BeliefSample, int | None,
                                      ForwardPrediction | None]] = {}
        self._confirmation: int | None = None  # the one ``assess`` judges with
        # Only the last W observed outcomes can ever enter a history, so that is all we keep.
        self._observed: deque[PredictionOutcome] = deque(maxlen=self.config.loop.max_history)
        self._last_belief_ns: int | None = None
        self._vehicle = VehicleStatusTracker()

    @property
    def late_observations(self) -> int:
        """Fixes that arrived after their cycle was finished (not used)."""
        return self._sequencer.late

    @property
    def superseded_observations(self) -> int:
        """Fixes replaced by a later fix of the same cycle (not used)."""
        return self._sequencer.superseded

    @property
    def pending_cycles(self) -> int:
        """Beliefs whose cycle is not finished yet (waiting for its outcome's inputs)."""
        return self._sequencer.pending_cycles

    def assess(self, belief: BeliefSample) -> BeliefSelfAssessment:
        """The self-assessor's raw assessment of a belief (stateful: hysteresis).

        Judged with the confirmation the assessor had when the belief arrived (beliefs are
        judged in their order, when their cycle is finished).
        """
        return self._assessor.assess_confirmed(belief, self._confirmation)

    def observe(self, observation: Observation) -> None:
        """The self-assessor's view of a fix: it confirms the beliefs up to its stamp."""
        self._assessor.observe(observation.stamp_ns, observation.position)

    def predict(self, belief: BeliefSample, process_noise_q: float) -> ForwardPrediction | None:
        """The forward predictor's prediction from a belief (None when it is not finite)."""
        return prediction_from_belief(belief, self.config.period_ns, process_noise_q)

    def evaluate(self, stamp_ns: int, frame_id: str, prediction: ForwardPrediction | None,
                 observation: Observation | None) -> PredictionOutcome:
        """The outcome evaluator's outcome of one resolved cycle."""
        return outcome_for_cycle(stamp_ns, frame_id, prediction, observation,
                                 self.config.evaluator)

    def feed(self, item: AgentInput) -> list[CycleTrace]:
        """Take one input; return the cycles it finishes, in cycle order."""
        return [self.complete(cycle) for cycle in self.resolve(item)]

    def finish(self) -> list[CycleTrace]:
        """Finish every pending cycle with what has arrived; feeding may go on afterwards.

        The end of the input, or the outcome evaluator's idle flush in a replay.
        """
        return [self.complete(cycle) for cycle in self.resolve_pending()]

    def resolve(self, item: AgentInput) -> list[CycleInputs[ForwardPrediction, Observation]]:
        """Take one input; return the cycles whose outcome inputs it resolves.

        ``complete`` finishes each, in this order; ``feed`` is both.
        """
        if isinstance(item, Observation):
            self.observe(item)
            return self._sequencer.on_observation(item.stamp_ns, item)
        if isinstance(item, VehicleStatus):
            self._vehicle.on_status(item)
            return []
        if not isinstance(item, BeliefSample):
            raise ConfigError(f'Pipeline.feed takes a BeliefSample, an Observation or a '
                              f'VehicleStatus, got {type(item).__name__}')
        if self._last_belief_ns is not None and item.stamp_ns <= self._last_belief_ns:
            return []  # an old or repeated belief is not a new cycle (as the nodes do)
        self._last_belief_ns = item.stamp_ns
        q = (self.config.process_noise_q if self._parameters is None
             else self._parameters.process_noise_q(item.stamp_ns))
        prediction = self.predict(item, q)
        self._cycles[item.stamp_ns] = (item, self._assessor.confirmed_ns, prediction)
        done = self._sequencer.on_belief(item.stamp_ns)
        if prediction is not None:
            done += self._sequencer.on_prediction(item.stamp_ns, prediction)
        return done

    def resolve_pending(self) -> list[CycleInputs[ForwardPrediction, Observation]]:
        """Resolve every pending cycle with what has arrived (``finish`` without finishing)."""
        return self._sequencer.flush()

    def complete(self, cycle: CycleInputs[ForwardPrediction, Observation],
                 raw: BeliefSelfAssessment | None = None) -> CycleTrace:
        """Finish one resolved cycle: raw assessment (unless given), outcome, loop step."""
        belief, confirmation, prediction = self._cycles.pop(cycle.stamp_ns)
        if raw is None:
            self._confirmation = confirmation
            raw = self.assess(belief)
        outcome = self.evaluate(cycle.stamp_ns, belief.frame_id, cycle.prediction,
                                cycle.observation)
        if outcome.observed:
            self._observed.append(outcome)
        result = closed_loop_step(raw, self._observed, self._loop_config(cycle.stamp_ns),
                                  self._vehicle.at(cycle.stamp_ns))
        self._vehicle.forget_before(cycle.stamp_ns)
        return CycleTrace(cycle.stamp_ns, raw, prediction, outcome, result)

    def _loop_config(self, stamp_ns: int) -> LoopConfig:
        if self._parameters is None:
            return self.config.loop
        key = self._parameters.loop_parameters(stamp_ns)
        loop = self._loops.get(key)
        if loop is None:
            loop = self._loops[key] = LoopConfig(key[0], key[1], self.config.loop.max_history)
        return loop


def iter_pipeline(
    inputs: Iterable[AgentInput], config: PipelineConfig | None = None
) -> Iterator[CycleTrace]:
    """Yield every cycle of the agent over `inputs` (arrival order), finishing at the end."""
    pipeline = Pipeline(config)
    for item in inputs:
        yield from pipeline.feed(item)
    yield from pipeline.finish()


def run_pipeline(
    inputs: Iterable[AgentInput], config: PipelineConfig | None = None
) -> tuple[CycleTrace, ...]:
    """Run the agent over `inputs` (beliefs and fixes in arrival order); return every cycle."""
    return tuple(iter_pipeline(inputs, config))
