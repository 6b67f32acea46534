"""The whole agent as one pure function over cycles: assess, evaluate, loop step, predict."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from ghost_core.assessment import assess_belief_sample, ThresholdsConfig
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
from ghost_core.prediction import outcome_for_cycle, prediction_from_belief
from ghost_core.samples import BeliefSample, Observation

__all__ = ['CycleTrace', 'PipelineConfig', 'run_pipeline']


@dataclass(frozen=True, slots=True)
class PipelineConfig:
    """Everything the agent is configured with: period, process noise, thresholds, M/K/W."""

    period_ns: int = 100_000_000
    process_noise_q: float = 0.05
    loop: LoopConfig = field(default_factory=LoopConfig)
    thresholds: ThresholdsConfig = field(default_factory=ThresholdsConfig)

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


def run_pipeline(
    cycles: Iterable[tuple[BeliefSample, Observation | None]],
    config: PipelineConfig | None = None,
) -> tuple[CycleTrace, ...]:
    """Run the agent over chronological (belief, observation) pairs and return every cycle.

    Per cycle t (the belief stamp): raw = assess_belief; the outcome of t pairs the prediction
    whose target is t with t's observation (or says why it cannot); the closed-loop step
    calibrates raw with the outcomes up to and including t, decides and emits; finally the
    prediction for t + period is made from the belief. The observation is taken to be in the
    belief's frame. Pure: same inputs, same outputs.
    """
    settings = PipelineConfig() if config is None else config
    pending: dict[int, ForwardPrediction] = {}
    # Only the last W observed outcomes can ever enter a history, so that is all we keep.
    observed: deque[PredictionOutcome] = deque(maxlen=settings.loop.max_history)
    traces: list[CycleTrace] = []
    for belief, observation in cycles:
        stamp_ns, frame_id = belief.stamp_ns, belief.frame_id
        raw = assess_belief_sample(belief, settings.thresholds)
        outcome = outcome_for_cycle(stamp_ns, frame_id, pending.pop(stamp_ns, None),
                                    observation)
        # A prediction whose target has passed unpaired can never be paired any more.
        pending = {target: p for target, p in pending.items() if target > stamp_ns}
        if outcome.observed:
            observed.append(outcome)
        result = closed_loop_step(raw, observed, settings.loop)
        prediction = prediction_from_belief(belief, settings.period_ns,
                                            settings.process_noise_q)
        if prediction is not None:
            pending[prediction.target_stamp_ns] = prediction
        traces.append(CycleTrace(stamp_ns, raw, prediction, outcome, result))
    return tuple(traces)
