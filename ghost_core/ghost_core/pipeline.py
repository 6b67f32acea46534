"""The whole agent as one pure object over its inputs: assess, predict, evaluate, loop step."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from ghost_core.assessment import SelfAssessor, ThresholdsConfig
from ghost_core.contracts import (
    ActionEmission,
    BeliefSelfAssessment,
    CalibratedSelfAssessment,
    DecisionRationale,
    ForwardPrediction,
    PredictionOutcome,
)
from ghost_core.errors import ConfigError
from ghost_core.loop import closed_loop_step, CycleResult, LoopConfig
from ghost_core.prediction import EvaluatorConfig, outcome_for_cycle, prediction_from_belief
from ghost_core.samples import BeliefSample, Observation
from ghost_core.sequencing import CycleInputs, OutcomeSequencer

__all__ = ['AgentInput', 'CycleTrace', 'Pipeline', 'PipelineConfig', 'iter_pipeline',
           'run_pipeline']


@dataclass(frozen=True, slots=True)
class PipelineConfig:
    """Everything the agent is configured with: period, Q, thresholds, evaluator, M/K/W.

    `grace_cycles` bounds the wait for a prediction that never comes (a non-finite belief
    predicts nothing), as the outcome evaluator node does.
    """

    period_ns: int = 100_000_000
    process_noise_q: float = 0.05
    loop: LoopConfig = field(default_factory=LoopConfig)
    thresholds: ThresholdsConfig = field(default_factory=ThresholdsConfig)
    evaluator: EvaluatorConfig = field(default_factory=EvaluatorConfig)
    grace_cycles: int = 3

    def __post_init__(self) -> None:
        """Enforce the invariants above, normalising field types."""
        if (isinstance(self.period_ns, bool) or not isinstance(self.period_ns, int)
                or self.period_ns < 1):
            raise ConfigError(f'PipelineConfig.period_ns must be an integer >= 1, '
                              f'got {self.period_ns!r}')
        q = self.process_noise_q
        if isinstance(q, bool) or not isinstance(q, (int, float)) or not 0.0 <= q < float('inf'):
            raise ConfigError(f'PipelineConfig.process_noise_q must be a finite number >= 0, '
                              f'got {q!r}')
        grace = self.grace_cycles
        if isinstance(grace, bool) or not isinstance(grace, int) or grace < 1:
            raise ConfigError(f'PipelineConfig.grace_cycles must be an integer >= 1, '
                              f'got {grace!r}')

    def to_dict(self) -> dict[str, object]:
        """Return the whole configuration as a plain dict (what a replay needs to re-run)."""
        return {
            'evaluator': self.evaluator.to_dict(),
            'grace_cycles': self.grace_cycles,
            'loop': {'downgrade_threshold': self.loop.downgrade_threshold,
                     'max_history': self.loop.max_history,
                     'min_outcomes': self.loop.min_outcomes},
            'period_ns': self.period_ns,
            'process_noise_q': float(self.process_noise_q),
            'thresholds': self.thresholds.to_dict(),
        }


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


#: One input of the agent: a belief (/state/nav) or a position fix (/observations).
AgentInput = BeliefSample | Observation


class Pipeline:
    """The whole agent as one pure, incremental object: feed inputs, get finished cycles.

    Inputs come in arrival order (the order a live graph would receive them; a bag's log-time
    order). Per belief t: the self-assessor (with its hysteresis state) judges it and the
    predictor predicts from it at once; the cycle is finished once its outcome is known (the
    same OutcomeSequencer the outcome evaluator node uses decides when), and then calibrated
    with the outcomes up to and including t, decided and emitted. `late_observations` and
    `superseded_observations` count fixes that were not used. Pure: same inputs in the same
    order, same outputs.
    """

    def __init__(self, config: PipelineConfig | None = None) -> None:
        self.config = PipelineConfig() if config is None else config
        self._assessor = SelfAssessor(self.config.thresholds)
        self._sequencer: OutcomeSequencer[ForwardPrediction, Observation] = OutcomeSequencer(
            self.config.grace_cycles, self.config.evaluator.max_observation_lag_ns)
        self._cycles: dict[int, tuple[BeliefSample, BeliefSelfAssessment,
                                      ForwardPrediction | None]] = {}
        # Only the last W observed outcomes can ever enter a history, so that is all we keep.
        self._observed: deque[PredictionOutcome] = deque(maxlen=self.config.loop.max_history)
        self._last_belief_ns: int | None = None

    @property
    def late_observations(self) -> int:
        """Fixes that arrived after their cycle was finished (not used)."""
        return self._sequencer.late

    @property
    def superseded_observations(self) -> int:
        """Fixes replaced by a later fix of the same cycle (not used)."""
        return self._sequencer.superseded

    def feed(self, item: AgentInput) -> list[CycleTrace]:
        """Take one input; return the cycles it finishes, in cycle order."""
        if isinstance(item, Observation):
            return self._finish(self._sequencer.on_observation(item.stamp_ns, item))
        if not isinstance(item, BeliefSample):
            raise ConfigError(f'Pipeline.feed takes a BeliefSample or an Observation, '
                              f'got {type(item).__name__}')
        if self._last_belief_ns is not None and item.stamp_ns <= self._last_belief_ns:
            return []  # an old or repeated belief is not a new cycle (as the nodes do)
        self._last_belief_ns = item.stamp_ns
        raw = self._assessor.assess(item)
        prediction = prediction_from_belief(item, self.config.period_ns,
                                            self.config.process_noise_q)
        self._cycles[item.stamp_ns] = (item, raw, prediction)
        done = self._sequencer.on_belief(item.stamp_ns)
        if prediction is not None:
            done += self._sequencer.on_prediction(item.stamp_ns, prediction)
        return self._finish(done)

    def finish(self) -> list[CycleTrace]:
        """End of input: finish every pending cycle with what has arrived."""
        return self._finish(self._sequencer.flush())

    def _finish(self, resolved: list[CycleInputs[ForwardPrediction, Observation]]
                ) -> list[CycleTrace]:
        traces: list[CycleTrace] = []
        for cycle in resolved:
            belief, raw, prediction = self._cycles.pop(cycle.stamp_ns)
            outcome = outcome_for_cycle(cycle.stamp_ns, belief.frame_id, cycle.prediction,
                                        cycle.observation, self.config.evaluator)
            if outcome.observed:
                self._observed.append(outcome)
            result = closed_loop_step(raw, self._observed, self.config.loop)
            traces.append(CycleTrace(cycle.stamp_ns, raw, prediction, outcome, result))
        return traces


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
