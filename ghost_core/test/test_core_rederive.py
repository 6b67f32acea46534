"""ghost_core.rederive and the recorded configuration: what a replay re-runs, how it compares."""

from __future__ import annotations

import json
import math

import pytest

from ghost_core.assessment import BlockThresholds, HysteresisConfig, ThresholdsConfig
from ghost_core.contracts import VehicleStatus
from ghost_core.errors import ConfigError
from ghost_core.levels import SelfAssessmentLevel
from ghost_core.loop import LoopConfig
from ghost_core.pipeline import Pipeline, PipelineConfig, REFERENCE_POLICY_IDS
from ghost_core.prediction import EvaluatorConfig
from ghost_core.rederive import (
    ABSENT,
    first_difference,
    NamedRerun,
    Replay,
    TimedInput,
    trace_messages,
)
from ghost_core.run_configuration import change_in_force, ConfigurationTimeline
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


@pytest.mark.parametrize('name', ['drift_then_recovery', 'dropout', 'gnss_outage'])
def test_a_named_rerun_gives_every_message_of_the_run_from_its_names(name: str) -> None:
    """Each message re-computed from the inputs it names is the one the pipeline published.

    One pass in cycle order, nothing searched: the raw assessment from its belief and named
    confirmation, the outcome from its named prediction (the belief it was made from) and
    fix, the calibrated assessment from its named window, the rationale from its named status.
    """
    scenario = generate_scenario(name)
    config = scenario.parameters.pipeline_config()
    traces = run_scenario(scenario)
    beliefs = {cycle.belief.stamp_ns: cycle.belief for cycle in scenario.cycles}
    fixes = {item.stamp_ns: item for item in scenario.inputs() if isinstance(item, Observation)}
    statuses = {item.stamp_ns: item for item in scenario.inputs()
                if isinstance(item, VehicleStatus)}
    rerun = NamedRerun(ConfigurationTimeline(config))
    outcomes = {}
    for trace in traces:
        belief = beliefs[trace.stamp_ns]
        assert rerun.raw(belief, trace.raw.confirmation_stamp_ns) == trace.raw
        assert rerun.prediction(belief) == trace.prediction
        named = trace.outcome
        made = None if not named.prediction_stamp_ns else rerun.prediction(
            beliefs[named.prediction_stamp_ns])
        fix = fixes[named.observation_stamp_ns] if named.observation_stamp_ns else None
        outcome = rerun.outcome(trace.stamp_ns, belief.frame_id, made, fix)
        assert outcome == named
        outcomes[trace.stamp_ns] = outcome
        window = [outcomes[stamp] for stamp in trace.calibrated.window_outcome_stamps_ns]
        calibrated = rerun.calibrated(trace.raw, window)
        assert calibrated == trace.calibrated
        named_status = trace.rationale.vehicle_status_stamp_ns
        rationale = rerun.rationale(calibrated, None if named_status is None
                                    else statuses[named_status])
        assert rationale == trace.rationale and rerun.actuation(rationale) == trace.emission


def test_a_named_rerun_starts_a_new_assessor_where_new_thresholds_are_in_force() -> None:
    """As the node rebuilds its assessor on a parameter change: the hysteresis starts again."""
    scenario = generate_scenario('drift_then_recovery')
    config = scenario.parameters.pipeline_config()
    beliefs = [cycle.belief for cycle in scenario.cycles]
    switch = beliefs[20].stamp_ns
    change = change_in_force('/self_assessor', switch,
                             json.dumps({'thresholds': config.thresholds.to_dict()}))
    rerun = NamedRerun(ConfigurationTimeline(config, [change]))
    raws = [rerun.raw(belief, belief.stamp_ns) for belief in beliefs]
    assert raws[20].previous_stamp_ns == beliefs[19].stamp_ns
    assert raws[21].previous_stamp_ns is None  # a new assessor: no belief judged before


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
    switch = scenario.cycles[5].belief.stamp_ns
    change = change_in_force('/calibrator', switch, json.dumps(
        {'loop': {'min_outcomes': 1, 'downgrade_threshold': 9,
                  'max_history': config.loop.max_history}, 'process_noise_q': 1.0}))
    params = ConfigurationTimeline(config, [change])
    traces = Replay(config, params).run(
        TimedInput(item.stamp_ns, item) for item in scenario.inputs())
    assert [t.calibrated.downgrade_threshold for t in traces] == [2] * 6 + [9] * 4
    assert [t.prediction.process_noise for t in traces if t.prediction] == [
        config.process_noise_q] * 6 + [1.0] * 4
    assert isinstance(Replay(config, params).pipeline, Pipeline)
