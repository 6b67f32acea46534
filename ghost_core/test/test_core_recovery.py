"""RECOVERY-v1: the reference assessor comes back within R; one that never upgrades does not."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ghost_core_test.strategies import recovery_traces, RecoveryTrace
from hypothesis import assume, given, settings
import pytest

from ghost_core.assessment import (
    HysteresisConfig,
    REASON_HYSTERESIS,
    SelfAssessor,
    ThresholdsConfig,
)
from ghost_core.contracts import BeliefSelfAssessment
from ghost_core.levels import SelfAssessmentLevel
from ghost_core.pipeline import PipelineConfig
from ghost_core.recovery import (
    NO_LEVEL,
    PublishedLevels,
    recovery_time_ns,
    RecoveryJudge,
    RecoveryVerdict,
    RunBreak,
)
from ghost_core.samples import BeliefSample, Observation

KNOWN, UNCERTAIN = SelfAssessmentLevel.KNOWN, SelfAssessmentLevel.UNCERTAIN
MS = 1_000_000

Assess = Callable[[SelfAssessor, BeliefSample], BeliefSelfAssessment]


def _reference(assessor: SelfAssessor, belief: BeliefSample) -> BeliefSelfAssessment:
    return assessor.assess(belief)


class _Trap:
    """An assessor that never upgrades (the hysteresis trap).

    After its first level worse than KNOWN, at best UNCERTAIN for ever.
    """

    def __init__(self) -> None:
        self.degraded = False

    def __call__(self, assessor: SelfAssessor, belief: BeliefSample) -> BeliefSelfAssessment:
        published = assessor.assess(belief)
        self.degraded = self.degraded or published.overall_level != KNOWN
        if self.degraded and published.overall_level == KNOWN:
            held = replace(published.position, level=UNCERTAIN, reason=REASON_HYSTERESIS)
            return replace(published, position=held, overall_level=UNCERTAIN)
        return published


def _run(trace: RecoveryTrace, assess: Assess) -> RecoveryVerdict:
    """The assessor over its inputs, then RECOVERY-v1 over what the recorder kept.

    The assessor as the node runs it: fixes observed, old stamps dropped.
    """
    config = trace.config
    assert isinstance(config, PipelineConfig)
    assessor = SelfAssessor(config.thresholds)
    stamps, levels = [], []
    newest = None
    for _, _, sample in trace.assessor_inputs:
        if isinstance(sample, Observation):
            assessor.observe(sample.stamp_ns, sample.position)
            continue
        assert isinstance(sample, BeliefSample)
        if sample.stamp_ns in trace.assessor_lost or (
                newest is not None and sample.stamp_ns <= newest):
            continue  # the node's StampGuard
        newest = sample.stamp_ns
        published = assess(assessor, sample)
        stamps.append(sample.stamp_ns)  # every Ghost message is recorded (reliable)
        levels.append(int(published.overall_level))
    judge = RecoveryJudge(PublishedLevels(stamps, levels), lambda _: config)
    for log, sample in trace.recorded:
        if isinstance(sample, BeliefSample):
            judge.belief(log, sample)
        else:
            assert isinstance(sample, Observation)
            judge.fix(log, sample)
    return judge.verdict()


@settings(max_examples=300, deadline=None)
@given(trace=recovery_traces())
def test_the_reference_assessor_always_comes_back_within_r(trace: RecoveryTrace) -> None:
    """On any trace the reference assessor holds RECOVERY-v1.

    Any hysteresis, horizon and lag; covariances crossing the thresholds; gaps; beliefs lost
    by the recorder or by the assessor; late, lost and missing fixes; beliefs out of order.
    """
    verdict = _run(trace, _reference)
    assert verdict.holds, verdict.violations[:3]


@settings(max_examples=150, deadline=None)
@given(trace=recovery_traces(recovering=True))
def test_a_recovering_run_is_judged_and_holds_only_for_the_reference(
        trace: RecoveryTrace) -> None:
    """A recovery long enough is judged: the reference holds, the trap assessor fails.

    Degraded, then KNOWN and confirmed for R plus the lag plus three periods.
    """
    config = trace.config
    assert isinstance(config, PipelineConfig)
    horizon = config.thresholds.unconfirmed_horizon_ns
    # A horizon shorter than the lag plus a period cannot be shown confirmed (docs).
    assume(horizon == 0 or horizon >= config.evaluator.max_observation_lag_ns
           + 2 * config.period_ns)
    honest = _run(trace, _reference)
    assert honest.holds and honest.cycles_evaluated >= 1, honest
    trapped = _run(trace, _Trap())
    assert not trapped.holds
    first = trapped.violations[0]
    # At the latest R after the recovery was shown confirmed (its fixes a lag old).
    assert trace.recovery_from is not None and first.cycle_stamp_ns <= (
        trace.recovery_from + recovery_time_ns(config.thresholds)
        + config.evaluator.max_observation_lag_ns + 2 * config.period_ns)
    assert first.published_level == UNCERTAIN
    assert first.cycle_stamp_ns - first.recovered_since_ns >= recovery_time_ns(
        config.thresholds)


def _belief(stamp: int, std: float) -> BeliefSample:
    pose, twist = [0.0] * 36, [0.0] * 36
    for i in range(3):
        pose[i * 7], pose[(i + 3) * 7] = std ** 2, 0.0025
        twist[i * 7], twist[(i + 3) * 7] = 0.01, 0.01
    return BeliefSample(stamp_ns=stamp, frame_id='map', position=(0.0, 0.0, 0.0),
                        velocity=(0.0, 0.0, 0.0), pose_covariance=tuple(pose),
                        twist_covariance=tuple(twist), orientation_xyzw=(0.0, 0.0, 0.0, 1.0))


CONFIG = PipelineConfig(thresholds=ThresholdsConfig(hysteresis=HysteresisConfig(
    recovery_margin=0.2, recovery_dwell_ns=200 * MS, min_level_interval_ns=5000 * MS,
    recovery_bound_ns=1000 * MS)))


def _judge(levels: dict[int, int], beliefs: list[BeliefSample],
           config: PipelineConfig = CONFIG) -> RecoveryVerdict:
    judge = RecoveryJudge(PublishedLevels(list(levels), list(levels.values())),
                          lambda _: config)
    for belief in beliefs:
        judge.belief(belief.stamp_ns, belief)
    return judge.verdict()


def test_r_is_the_hysteresis_bound_and_the_margin_band_reaches_it() -> None:
    """R is the bound: a std in the margin band is published KNOWN exactly R after the run.

    Inside the KNOWN threshold but not the margin; RECOVERY-v1 judges exactly from there.
    """
    assert recovery_time_ns(CONFIG.thresholds) == 1000 * MS
    assessor = SelfAssessor(CONFIG.thresholds)
    beliefs = [_belief(i * 100 * MS, 1.0 if i < 3 else 0.45) for i in range(30)]
    levels = {b.stamp_ns: int(assessor.assess(b).overall_level) for b in beliefs}
    first_known = min(stamp for stamp, level in levels.items()
                      if level == KNOWN and stamp > 0)
    assert first_known == 300 * MS + 1000 * MS  # no sooner: the margin is not met
    verdict = _judge(levels, beliefs)
    assert verdict.holds and verdict.first_evaluated_stamp_ns == first_known
    assert verdict.cycles_evaluated == 30 - 13
    held = {**levels, first_known: int(UNCERTAIN)}
    violated = _judge(held, beliefs)
    assert [(v.cycle_stamp_ns, v.recovered_since_ns) for v in violated.violations] == [
        (first_known, 300 * MS)]
    assert violated.violations[0].to_json()['observed'] == {
        'published_level': 'UNCERTAIN', 'recovered_since_ns': 300 * MS,
        'recovered_for_ns': 1000 * MS, 'recovery_time_ns': 1000 * MS}


@pytest.mark.parametrize('case', ['gap', 'unrecorded', 'out_of_order'])
def test_a_belief_the_bag_may_lack_restarts_the_run(case: str) -> None:
    """A belief the agent saw and the bag lacks, or one out of order, restarts the run.

    A gap alone (nobody received a belief there) continues it.
    """
    beliefs = [_belief(i * 100 * MS, 0.1) for i in range(30)]
    levels = {b.stamp_ns: int(KNOWN) for b in beliefs}
    if case == 'gap':  # nothing at 1.0 s and 1.1 s
        beliefs = beliefs[:10] + beliefs[12:]
        del levels[1000 * MS], levels[1100 * MS]
        breaks, evaluated = {}, 18  # 1.2 s .. 2.9 s
    elif case == 'unrecorded':  # a cycle at 1.05 s whose belief the bag lacks
        levels[1050 * MS] = int(KNOWN)
        breaks, evaluated = {RunBreak.UNRECORDED_BELIEF: 1}, 1 + 9  # 1.0 s; 2.1 .. 2.9 s
    else:  # 1.1 s recorded before 1.0 s
        beliefs = beliefs[:10] + [beliefs[11], beliefs[10]] + beliefs[12:]
        # At 1.1 s the agent's cycle 1.0 s has no belief yet: the run restarts, then 1.0 s
        # arrives out of order and ends it.
        breaks = {RunBreak.UNRECORDED_BELIEF: 1, RunBreak.OUT_OF_ORDER: 1}
        evaluated = 8  # 2.2 .. 2.9 s
    verdict = _judge(levels, beliefs)
    assert dict(verdict.breaks) == breaks
    assert verdict.holds and verdict.cycles_evaluated == evaluated


def test_beliefs_that_are_never_known_put_nothing_under_the_precondition() -> None:
    """No covariance, a NaN position, UNCERTAIN std: never recovered, never judged."""
    beliefs = []
    for i in range(40):
        fields = _fields(_belief(i * 100 * MS, 0.1))
        if i % 3 == 0:
            fields['pose_covariance'] = (0.0,) * 36
        elif i % 3 == 1:
            fields['position'] = (float('nan'), 0.0, 0.0)
        else:
            fields = _fields(_belief(i * 100 * MS, 1.0))
        beliefs.append(BeliefSample(**fields))  # type: ignore[arg-type]
    verdict = _judge({b.stamp_ns: int(UNCERTAIN) for b in beliefs}, beliefs)
    assert verdict.holds and verdict.cycles_evaluated == 0
    assert verdict.beliefs == 40


def _fields(belief: BeliefSample) -> dict[str, object]:
    return {name: getattr(belief, name) for name in (
        'stamp_ns', 'frame_id', 'position', 'velocity', 'pose_covariance', 'twist_covariance',
        'orientation_xyzw')}


def test_confirmation_counts_only_fixes_received_a_lag_before_the_belief() -> None:
    """A fix confirms a belief once recorded a lag before it, and until the horizon.

    Horizon 1 s, lag 250 ms: a fix recorded less than the lag before a belief does not
    confirm it yet (the assessor may not have had it); one older than the horizon, never.
    """
    config = PipelineConfig(thresholds=ThresholdsConfig(
        hysteresis=HysteresisConfig(recovery_bound_ns=0), unconfirmed_horizon_ns=1000 * MS))
    judge = RecoveryJudge(PublishedLevels([0, 100 * MS, 1300 * MS], [0, 0, 1]),
                          lambda _: config)
    fix = Observation(0, 'map', (0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0))
    judge.fix(0, fix)
    judge.belief(100 * MS, _belief(0, 0.1))        # the fix came 100 ms before: not yet
    judge.belief(300 * MS, _belief(100 * MS, 0.1))  # 300 ms: confirmed, published KNOWN
    judge.belief(1400 * MS, _belief(1300 * MS, 0.1))  # the fix is 1.3 s old: unconfirmed
    verdict = judge.verdict()
    assert verdict.holds and verdict.cycles_evaluated == 1
    assert verdict.first_evaluated_stamp_ns == 100 * MS
    assert dict(verdict.breaks) == {RunBreak.UNCONFIRMED: 1}


def test_published_levels_take_the_worst_and_say_which_cycles_have_none() -> None:
    """Two raw assessments at one stamp: the worse counts; a cycle without one: NO_LEVEL."""
    levels = PublishedLevels([5, 3, 5, 9], [0, 0, 2, NO_LEVEL])
    assert (levels.level_at(5), levels.level_at(3), levels.level_at(9)) == (2, 0, NO_LEVEL)
    assert levels.level_at(4) is None and len(levels) == 3
    assert levels.any_between(3, 9) and not levels.any_between(5, 9)
    with pytest.raises(ValueError, match='2 stamps but 1 levels'):
        PublishedLevels([1, 2], [0])
