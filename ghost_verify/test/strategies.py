"""Hypothesis strategies for ghost_verify's tests (the one place tests draw inputs from)."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

from ghost_core.contracts import CalibrationHistory, PredictionOutcome
from ghost_core.levels import SelfAssessmentLevel
from ghost_core.loop import LoopConfig

#: One representative distance per exclusive bin (within_1, beyond_1, beyond_3, beyond_5).
BIN_DISTANCES = (0.5, 2.0, 4.0, 6.0)
STAMP_NS = 5_000_000_000
PERIOD_NS = 100_000_000

levels = st.sampled_from(list(SelfAssessmentLevel))


@dataclass(frozen=True)
class CycleCase:
    """One generated cycle: M, K, W, the history it sees and its raw level."""

    config: LoopConfig
    history: CalibrationHistory
    raw_level: SelfAssessmentLevel
    stamp_ns: int


def history_from_bins(bins: tuple[int, int, int, int], window: int,
                      stamp_ns: int, infinite: bool = False) -> CalibrationHistory:
    """Return the history whose four exclusive bins hold `bins` outcomes."""
    total = sum(bins)
    if total == 0:
        return CalibrationHistory.empty(window)
    worst = max(distance for count, distance in zip(bins, BIN_DISTANCES, strict=True) if count)
    if infinite and bins[3]:
        worst = float('inf')
    return CalibrationHistory(
        outcomes_considered=total,
        count_within_1_std=bins[0],
        count_beyond_1_std=bins[1],
        count_beyond_3_std=bins[2],
        count_beyond_5_std=bins[3],
        worst_position_mahalanobis=worst,
        worst_orientation_mahalanobis=0.0,
        most_recent_observed_stamp_ns=stamp_ns,
        window_size=window,
    )


@st.composite
def loop_configs(draw: st.DrawFn) -> LoopConfig:
    """M, K in [1, 8] and W in [1, 16]."""
    return LoopConfig(
        min_outcomes=draw(st.integers(1, 8)),
        downgrade_threshold=draw(st.integers(1, 8)),
        max_history=draw(st.integers(1, 16)),
    )


@st.composite
def cycle_cases(draw: st.DrawFn) -> CycleCase:
    """A cycle anywhere in the (drift?, raw KNOWN?) plane, boundaries included."""
    config = draw(loop_configs())
    window = config.max_history
    total = draw(st.integers(0, window))
    beyond_5 = draw(st.integers(0, total))
    beyond_3 = draw(st.integers(0, total - beyond_5))
    beyond_1 = draw(st.integers(0, total - beyond_5 - beyond_3))
    within_1 = total - beyond_5 - beyond_3 - beyond_1
    history = history_from_bins((within_1, beyond_1, beyond_3, beyond_5), window, STAMP_NS,
                                infinite=draw(st.booleans()))
    return CycleCase(config, history, draw(levels), STAMP_NS)


@st.composite
def boundary_cases(draw: st.DrawFn) -> CycleCase:
    """A cycle right at the M or K boundary of the drift condition (ADR-0032 section 4.3)."""
    m = draw(st.integers(1, 8))
    k = draw(st.integers(1, 8))
    beyond = draw(st.sampled_from([k - 1, k]))
    beyond_5 = draw(st.integers(0, beyond))
    considered = max(beyond, draw(st.sampled_from([m - 1, m])))
    window = max(considered, 1)
    bins = (considered - beyond, 0, beyond - beyond_5, beyond_5)
    history = history_from_bins(bins, window, STAMP_NS)
    return CycleCase(LoopConfig(m, k, window), history, draw(levels), STAMP_NS)


def outcome(index: int, distance: float | None) -> PredictionOutcome:
    """The outcome of cycle `index` (1-based); None is a cycle without observation."""
    stamp_ns = STAMP_NS + index * PERIOD_NS
    if distance is None:
        return PredictionOutcome(stamp_ns, 'map', stamp_ns - PERIOD_NS, False, 'no_observation',
                                 (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), 0.0, 0.0)
    return PredictionOutcome(stamp_ns, 'map', stamp_ns - PERIOD_NS, True, 'paired',
                             (1.0, 2.0, 3.0), (1.0, 2.0, 3.0), distance, 0.0)


@st.composite
def recovery_runs(draw: st.DrawFn) -> tuple[LoopConfig, list[float | None]]:
    """A burst of bad outcomes, then good ones for longer than the window: drift, recovery."""
    config = draw(loop_configs())
    bad = draw(st.lists(st.sampled_from([4.0, 6.0, float('inf')]),
                        min_size=config.downgrade_threshold,
                        max_size=config.downgrade_threshold + 3))
    lead = draw(st.lists(st.sampled_from([0.5, 2.0]), max_size=config.min_outcomes))
    good: list[float | None] = draw(st.lists(st.sampled_from([0.5, 2.0, None]),
                                             min_size=config.max_history + 1,
                                             max_size=config.max_history + 4))
    good.extend([0.5] * config.max_history)  # enough observed good outcomes to flush W
    distances: list[float | None] = [*lead, *bad, *good]
    return config, distances
