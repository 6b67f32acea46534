"""ghost_core.rederive and the recorded configuration: what a replay re-runs, how it compares."""

from __future__ import annotations

import json
import math

import pytest

from ghost_core.assessment import BlockThresholds, HysteresisConfig, ThresholdsConfig
from ghost_core.errors import ConfigError
from ghost_core.levels import SelfAssessmentLevel
from ghost_core.loop import LoopConfig
from ghost_core.pipeline import Pipeline, PipelineConfig, REFERENCE_POLICY_IDS
from ghost_core.prediction import EvaluatorConfig
from ghost_core.rederive import (
    ABSENT,
    first_difference,
    RecordedParameters,
    Replay,
    TimedInput,
    trace_messages,
)
from ghost_core.samples import Observation
from ghost_core.scenarios import generate_scenario, run_scenario

CONFIGS = [
    PipelineConfig(),
    PipelineConfig(period_ns=50_000_000, process_noise_q=0.3,
                   loop=LoopConfig(3, 1, 7),
                   thresholds=ThresholdsConfig(
                       position=BlockThresholds(0.25, 0.75),
                       no_covariance_level=SelfAssessmentLevel.UNCERTAIN,
                       hysteresis=HysteresisConfig(0.0, 0, 0)),
                   evaluator=EvaluatorConfig(5e3, 0), grace_cycles=1, idle_flush_ns=0),
]


@pytest.mark.parametrize('config', CONFIGS)
def test_the_recorded_configuration_reads_back_exactly(config: PipelineConfig) -> None:
    """to_dict -> JSON -> from_dict gives the same configuration and thresholds_sha256."""
    document = json.loads(json.dumps(config.to_dict()))
    again = PipelineConfig.from_dict(document)
    assert again == config
    assert again.thresholds.sha256 == config.thresholds.sha256
    assert document['policies'] == dict(REFERENCE_POLICY_IDS)


@pytest.mark.parametrize(('change', 'message'), [
    (lambda d: d.pop('idle_flush_ns'), 'run configuration lacks idle_flush_ns'),
    (lambda d: d.update(extra=1), 'has keys this pipeline does not know: extra'),
    (lambda d: d['loop'].update(min_outcomes=4.0), 'loop.min_outcomes must be an integer'),
    (lambda d: d['loop'].update(min_outcomes=True), 'loop.min_outcomes must be an integer'),
    (lambda d: d['policies'].update(policy_id='always_proceed_v1'),
     "policies.policy_id is 'always_proceed_v1', which has no reference implementation"),
    (lambda d: d['thresholds'].update(no_covariance_level='known'),
     'ThresholdsConfig.no_covariance_level must be UNCERTAIN or UNKNOWN'),
    (lambda d: d['thresholds']['position'].update(known_max_std='0.5'),
     'thresholds.position.known_max_std must be a number'),
])
def test_a_recorded_configuration_is_never_guessed(change, message: str) -> None:
    """A key missing, unknown, of another type, or an id with no implementation: refused."""
    document = json.loads(json.dumps(PipelineConfig().to_dict()))
    change(document)
    with pytest.raises(ConfigError, match=message.replace('(', r'\(')):
        PipelineConfig.from_dict(document)


def test_recorded_parameters_follow_each_cycle_and_list_the_runs() -> None:
    """Values hold from their cycle on; before the first record the configuration's."""
    params = RecordedParameters(PipelineConfig(loop=LoopConfig(4, 2)))
    params.record(10, min_outcomes=4, downgrade_threshold=2, process_noise_q=0.05)
    params.record(20, min_outcomes=4, downgrade_threshold=2)
    params.record(30, min_outcomes=4, downgrade_threshold=7, process_noise_q=0.5)
    params.record(40, min_outcomes=4, downgrade_threshold=7)
    assert params.loop_parameters(5) == (4, 2)
    assert params.loop_parameters(29) == (4, 2) and params.loop_parameters(35) == (4, 7)
    assert params.process_noise_q(25) == 0.05 and params.process_noise_q(99) == 0.5
    runs = [(r.parameter, r.value, r.first_cycle_stamp_ns, r.cycles) for r in params.runs()]
    assert runs == [('min_outcomes', 4, 10, 4), ('downgrade_threshold', 2, 10, 2),
                    ('downgrade_threshold', 7, 30, 2), ('process_noise_q', 0.05, 10, 1),
                    ('process_noise_q', 0.5, 30, 1)]
    assert params.changed
    with pytest.raises(ValueError, match='record cycles in stamp order'):
        params.record(15, min_outcomes=4)


def test_first_difference_is_exact_and_names_the_field() -> None:
    """The canonical JSON decides: -0.0 is not 0.0, 1 is not 1.0, NaN equals NaN."""
    base = {'header': {'stamp': {'sec': 1, 'nanosec': 0}}, 'value': 0.0, 'cov': [1.0, 2.0],
            'n': 1, 'd': math.nan}
    assert first_difference(base, json.loads(json.dumps(base))) is None
    for path, changed, recorded, recomputed in [
        ('value', {**base, 'value': -0.0}, 0.0, -0.0),
        ('n', {**base, 'n': 1.0}, 1, 1.0),
        ('cov[1]', {**base, 'cov': [1.0, 2.0000000000000004]}, 2.0, 2.0000000000000004),
        ('cov[2]', {**base, 'cov': [1.0, 2.0, 3.0]}, ABSENT, 3.0),
        ('header.stamp.nanosec', {**base, 'header': {'stamp': {'sec': 1, 'nanosec': 1}}}, 0, 1),
        ('extra', {**base, 'extra': True}, ABSENT, True),
    ]:
        found = first_difference(base, changed)
        assert found is not None and (found.field, found.recorded, found.recomputed) == (
            path, recorded, recomputed), path


def test_a_replay_of_a_scenario_is_the_scenario_run() -> None:
    """Replay without pauses is the pipeline; trace_messages are its six message dicts."""
    scenario = generate_scenario('dropout')
    config = scenario.parameters.pipeline_config()
    timed = [TimedInput(item.stamp_ns, item) for item in scenario.inputs()]
    traces = Replay(config, idle_flush=True).run(timed)
    assert tuple(traces) == run_scenario(scenario)
    kinds = [kind for kind, _ in trace_messages(traces[3])]
    assert kinds == ['raw_assessment', 'prediction', 'outcome', 'calibrated', 'rationale',
                     'actuation']


def test_the_idle_flush_resolves_pending_cycles_before_a_late_input() -> None:
    """A pause of idle_flush_ns in the receipt times finishes what is pending, as the node.

    The inputs pause for 2 s right after the third belief, whose fix is the first input after
    the pause: the node has flushed that cycle by then (no observation, the fix is late); a
    replay that ignored the receipt times would use the fix.
    """
    scenario = generate_scenario('smoke')
    config = PipelineConfig(evaluator=EvaluatorConfig(max_observation_lag_ns=250_000_000))
    third = scenario.cycles[2].belief
    items = [item for item in scenario.inputs()
             if not (isinstance(item, Observation) and item.stamp_ns == third.stamp_ns)]
    fix = next(c.observation for c in scenario.cycles if c.belief is third)
    assert fix is not None
    pause = 2_000_000_000
    before = [TimedInput(item.stamp_ns, item) for item in items
              if item.stamp_ns <= third.stamp_ns]
    after = [TimedInput(item.stamp_ns + pause, item) for item in items
             if item.stamp_ns > third.stamp_ns]
    timed = [*before, TimedInput(third.stamp_ns + pause, fix), *after]
    flushed = Replay(config, idle_flush=True)
    plain = Replay(config)
    with_flush, without = flushed.run(timed), plain.run(timed)
    assert flushed.idle_flushes == 1 and plain.idle_flushes == 0
    assert not with_flush[2].outcome.observed and without[2].outcome.observed
    assert flushed.pipeline.late_observations == 1
    assert Replay(PipelineConfig(idle_flush_ns=0), idle_flush=True).run(timed)[2].outcome.observed


def test_a_pipeline_follows_per_cycle_parameters() -> None:
    """The CycleParameters hook: M/K at calibration and Q at prediction, per cycle."""
    scenario = generate_scenario('smoke')
    config = scenario.parameters.pipeline_config()
    params = RecordedParameters(config)
    switch = scenario.cycles[6].belief.stamp_ns
    params.record(switch, min_outcomes=1, downgrade_threshold=9, process_noise_q=1.0)
    traces = Replay(config, params).run(
        TimedInput(item.stamp_ns, item) for item in scenario.inputs())
    assert [t.calibrated.downgrade_threshold for t in traces] == [2] * 6 + [9] * 4
    assert [t.prediction.process_noise for t in traces if t.prediction] == [
        config.process_noise_q] * 6 + [1.0] * 4
    assert isinstance(Replay(config, params).pipeline, Pipeline)
