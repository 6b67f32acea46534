"""EVIDENCE-v1: named inputs judged on the recorder's log times (SPEC 5, v1.3).

Each attack is built as an outside audit builds it: the agent's run is recorded, then only
what Ghost's own nodes publish is changed (their hashes chained again as the agent would),
and the bag is signed again as the recorder would sign it. Each must fail verify_all by
default; the honest runs must verify.
"""

from __future__ import annotations

from dataclasses import replace
import json
from pathlib import Path
from typing import Any

import pytest
from run_bags import (
    configuration_change,
    GHOST_TOPIC,
    LyingEvaluator,
    run_bag,
    run_config,
    run_messages,
    scenario_inputs,
    write_run_bag,
    Written,
)

from ghost_core.hashing import content_address
from ghost_core.pipeline import Pipeline
from ghost_core.scenarios import generate_scenario
from ghost_core.wire import ns_to_stamp
from ghost_verify.run_parameters import load_run_parameters
from ghost_verify.verify import verify_all

pytestmark = pytest.mark.bag


def _messages(name: str, pipeline: type[Pipeline] | None = None
              ) -> tuple[list[Written], Any]:
    scenario = generate_scenario(name)
    config = scenario.parameters.pipeline_config()
    written, _ = run_messages(scenario_inputs(scenario), config,
                              None if pipeline is None else pipeline(config))
    return written, config


def _rechain(written: list[Written]) -> list[Written]:
    """Re-hash what cites a changed message, as the agent's own nodes would (SPEC 4)."""
    raw: dict[int, dict[str, Any]] = {}
    addresses: dict[tuple[str, int], str] = {}
    out = []
    for item in written:
        msg = item.msg
        if item.topic == GHOST_TOPIC['raw_assessment']:
            raw[item.stamp_ns or 0] = msg
        elif item.topic == GHOST_TOPIC['calibrated']:
            inline = raw[item.stamp_ns or 0]
            msg = {**msg, 'raw_assessment': inline,
                   'raw_assessment_sha256': content_address(inline)}
        elif item.topic == GHOST_TOPIC['rationale']:
            msg = {**msg, 'self_assessment_sha256': content_address(raw[item.stamp_ns or 0]),
                   'calibrated_assessment_sha256': addresses[('calibrated', item.stamp_ns or 0)]}
        elif item.topic == GHOST_TOPIC['actuation']:
            msg = {**msg, 'rationale_sha256': addresses[('rationale', item.stamp_ns or 0)]}
        for kind in ('calibrated', 'rationale'):
            if item.topic == GHOST_TOPIC[kind]:
                addresses[(kind, item.stamp_ns or 0)] = content_address(msg)
        out.append(replace(item, msg=msg))
    return out


def _verify(tmp_path: Path, written: list[Written], config: Any) -> Any:
    bag = write_run_bag(tmp_path / 'bag', written, run_config(config))
    return verify_all(bag)


@pytest.mark.parametrize('name', ['smoke', 'drift_then_recovery', 'dropout'])
def test_honest_runs_hold(tmp_path: Path, name: str) -> None:
    scenario = generate_scenario(name)
    bag, _ = run_bag(tmp_path / 'bag', scenario_inputs(scenario),
                     scenario.parameters.pipeline_config())
    result = verify_all(bag)
    assert result.evidence is not None and result.evidence.checked
    assert result.evidence.holds, result.evidence.summary()
    assert result.evidence.names_checked > 0
    assert result.verdict_line().startswith('VERIFIED'), result.verdict_line()


class _ClaimsEveryFixLate(Pipeline):
    """The outcome evaluator says no fix ever arrived in its cycle's window."""

    def evaluate(self, stamp_ns: int, frame_id: str, prediction: Any,
                 observation: Any) -> Any:
        return super().evaluate(stamp_ns, frame_id, prediction, None)


def test_an_evaluator_that_claims_every_fix_late_fails(tmp_path: Path) -> None:
    """The audit's first class: no drift enters a history; every fix was logged long before."""
    written, config = _messages('drift_then_recovery', _ClaimsEveryFixLate)
    result = _verify(tmp_path, written, config)
    assert result.evidence is not None and not result.evidence.holds
    assert dict(result.evidence.by_kind).get('input_claimed_late', 0) > 0
    assert not result.holds
    assert result.verdict_line().startswith('NOT VERIFIED')


def test_an_outcome_naming_a_prediction_the_bag_lacks_fails(tmp_path: Path) -> None:
    """One bad reference is a violation of its own, not a switch that turns checking off."""
    written, config = _messages('drift_then_recovery')
    outcomes = [i for i, item in enumerate(written) if item.topic == GHOST_TOPIC['outcome']
                and item.msg['status'] == 'paired']
    target = written[outcomes[5]]
    forged = {**target.msg, 'prediction_stamp': ns_to_stamp(
        (target.stamp_ns or 0) - 37_000_000)}
    written[outcomes[5]] = replace(target, msg=forged)
    result = _verify(tmp_path, written, config)
    assert result.evidence is not None
    assert dict(result.evidence.by_kind).get('named_input_missing', 0) == 1
    assert not result.holds
    # Not a switch either for the re-derivation: that one outcome is not re-derived (a
    # failure), and every other message, before and after it, is still compared.
    replay = result.replay
    assert replay is not None and replay.violated and replay.messages_differing == 0
    assert replay.messages_not_rederived == 1
    assert replay.messages_compared == sum(1 for item in written if item.stamp_ns) - 1


def test_an_evaluator_lying_after_a_bad_reference_is_still_re_derived(tmp_path: Path) -> None:
    """The audit's second class: one outcome names a missing prediction, every later one lies."""
    written, config = _messages('drift_then_recovery', LyingEvaluator)
    honest, _ = _messages('drift_then_recovery')
    outcomes = [i for i, item in enumerate(written) if item.topic == GHOST_TOPIC['outcome']]
    target = written[outcomes[3]]
    written[outcomes[3]] = replace(target, msg={**target.msg, 'prediction_stamp': ns_to_stamp(
        (target.stamp_ns or 0) - 37_000_000)})
    assert written[outcomes[-1]].msg != honest[outcomes[-1]].msg  # it lies to the end
    replay = _verify(tmp_path, written, config).replay
    assert replay is not None and replay.violated
    outcome = {topic.kind: topic for topic in replay.topics}['outcome']
    lies_before = sum(written[i].msg != honest[i].msg for i in outcomes[:3])
    lies_after = sum(written[i].msg != honest[i].msg for i in outcomes[4:])
    assert outcome.not_rederived == 1 and lies_after > 0
    assert outcome.differing == lies_before + lies_after  # every lie, before and after it


def test_a_confirmation_from_the_future_fails(tmp_path: Path) -> None:
    """A raw assessment naming a fix the recorder logged seconds later is caught."""
    written, config = _messages('drift_then_recovery')
    fixes = [item for item in written if item.topic == '/observations']
    late_fix = fixes[-1]
    raws = [i for i, item in enumerate(written) if item.topic == GHOST_TOPIC['raw_assessment']]
    index = raws[3]
    target = written[index]
    assert late_fix.log_time_ns - target.log_time_ns > 1_000_000_000
    stamp = late_fix.msg['header']['stamp']
    written[index] = replace(target, msg={**target.msg, 'has_confirmation': True,
                                          'confirmation_stamp': stamp})
    result = _verify(tmp_path, _rechain(written), config)
    assert result.evidence is not None
    assert 'named_input_from_the_future' in dict(result.evidence.by_kind)
    assert not result.holds


def test_a_window_that_leaves_out_a_recorded_outcome_fails(tmp_path: Path) -> None:
    """The calibrated assessment's window must be the recorded outcomes, not a chosen few."""
    written, config = _messages('drift_then_recovery')
    calibrated = [i for i, item in enumerate(written) if item.topic == GHOST_TOPIC['calibrated']
                  and len(item.msg['window_outcome_stamps_ns']) >= 3]
    index = calibrated[2]
    target = written[index]
    window = list(target.msg['window_outcome_stamps_ns'])
    written[index] = replace(target, msg={**target.msg,
                                          'window_outcome_stamps_ns': window[:-2] + window[-1:]})
    result = _verify(tmp_path, _rechain(written), config)
    assert result.evidence is not None
    assert dict(result.evidence.by_kind).get('window_not_the_recorded_one') == 1
    assert not result.holds


def test_a_bag_without_inputs_is_verified_with_limits(tmp_path: Path) -> None:
    """Not checked is not passed: the verdict names the check that could not run."""
    written, config = _messages('smoke')
    ghost_only = [item for item in written if item.stamp_ns is not None]
    result = _verify(tmp_path, ghost_only, config)
    assert result.evidence is not None and not result.evidence.checked
    assert result.verdict_line().startswith('VERIFIED WITH LIMITS: evidence not checked')


_START_PARTS = {
    '/self_assessor': ('thresholds', 'assessor_id'),
    '/forward_predictor': ('process_noise_q', 'period_ns', 'model_id'),
    '/outcome_evaluator': ('evaluator', 'grace_cycles', 'idle_flush_ns'),
    '/calibrator': ('loop', 'adjustment_policy_id'),
    '/decision_policy': ('policy_id',),
    '/action_emitter': ('contract_id',),
}


def _start_records(config: Any) -> list[Written]:
    """Each agent node's start part on ghost/configuration, as GhostNode publishes it."""
    document = config.to_dict()
    records = []
    for node, keys in _START_PARTS.items():
        section: dict[str, Any] = {key: document[key] for key in keys if key in document}
        policies = {key: document['policies'][key] for key in keys
                    if key in document['policies']}
        if policies:
            section['policies'] = policies
        records.append(configuration_change(node, -1, section, 1 + len(records)))
    return records


def _record_a_shaped(tmp_path: Path, written: list[Written], config: Any) -> Path:
    """A bag as `ros2 bag record -a` leaves it: every topic, no manifest.json beside it."""
    return write_run_bag(tmp_path / 'bag', [*_start_records(config), *written], None,
                         manifest=False)


def test_the_configuration_travels_in_the_bag(tmp_path: Path) -> None:
    """No side file: the start configuration comes from the latched records."""
    written, config = _messages('drift_then_recovery')
    bag = _record_a_shaped(tmp_path, written, config)
    parameters = load_run_parameters(bag)
    assert parameters.timeline is not None, parameters.missing or parameters.problem
    assert parameters.timeline.start == config
    result = verify_all(bag)
    assert result.replay is not None and result.replay.replayed, result.replay
    assert result.holds, result.failures()


def test_tampered_inputs_in_a_record_a_shaped_bag_fail(tmp_path: Path) -> None:
    """The audit's case: belief covariance x400 on 5 cycles, no manifest.json: NOT VERIFIED."""
    written, config = _messages('drift_then_recovery')
    beliefs = [i for i, item in enumerate(written) if item.topic == '/state/nav']
    for index in beliefs[20:25]:
        item = written[index]
        pose = item.msg['pose']
        written[index] = replace(item, msg={**item.msg, 'pose': {
            **pose, 'covariance': [value * 400.0 for value in pose['covariance']]}})
    result = verify_all(_record_a_shaped(tmp_path, written, config))
    assert not result.holds
    assert result.verdict_line().startswith('NOT VERIFIED')


def test_a_second_start_part_with_other_values_is_refused(tmp_path: Path) -> None:
    """A node's change of a read-only parameter (the evaluator's lag) is a failure."""
    written, config = _messages('smoke')
    records = _start_records(config)
    evaluator = next(r for r in records if r.msg['node'] == '/outcome_evaluator')
    section = json.loads(evaluator.msg['configuration'])
    section['evaluator']['max_observation_lag_ns'] *= 100
    late = configuration_change('/outcome_evaluator', -1, section, written[-1].log_time_ns)
    bag = write_run_bag(tmp_path / 'bag', [*records, *written, late], None, manifest=False)
    parameters = load_run_parameters(bag)
    assert 'read-only parameter changed' in parameters.problem
    assert not verify_all(bag).holds


def test_the_recovery_line_states_every_r_in_force() -> None:
    """A recorded change of R is reported on the RECOVERY-v1 line, not hidden by the start's."""
    from ghost_core.pipeline import PipelineConfig
    from ghost_core.run_configuration import change_in_force, ConfigurationTimeline
    from ghost_verify.recovery import _recovery_changes, RecoveryReport

    start = PipelineConfig()
    thresholds = start.to_dict()['thresholds']
    assert isinstance(thresholds, dict)
    changed = {**thresholds, 'hysteresis': {**thresholds['hysteresis'],
                                            'recovery_bound_ns': 2_000_000_000}}
    timeline = ConfigurationTimeline(start, [change_in_force(
        '/self_assessor', 7_000_000_000, json.dumps({'thresholds': changed}))])
    changes = _recovery_changes(timeline)
    assert changes == ((7_000_000_000, 2_000_000_000),)
    report = RecoveryReport('', None, 5_000_000_000, (), changes)
    assert report.to_json()['recovery_changes'] == [
        {'after_stamp_ns': 7_000_000_000, 'recovery_time_ns': 2_000_000_000}]
