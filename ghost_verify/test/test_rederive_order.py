"""Re-derivation when the agent received its inputs in another order than the recorder.

DDS orders one topic, not two: under load a fix reaches the outcome evaluator or the
self-assessor before or after a belief or a prediction in another order than the recorder's.
Each bag here is recorded as such a run is: the Ghost messages are the agent's over *its* order
of arrival, the inputs are in the recorder's. Each message names the inputs it was computed
from (SPEC 5 v1.3): the re-derivation re-computes it from exactly those, in one pass, and
EVIDENCE-v1 judges on the recorder's log times whether the node can have had them (lateness
within the transport bound is admitted and counted; beyond it, a violation).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from bags import write_bag  # noqa: F401 - the test folder's helpers are importable
from run_bags import (
    OBSERVATIONS,
    RecordedInput,
    run_config,
    run_messages,
    scenario_inputs,
    write_run_bag,
    Written,
)

from ghost_core.contracts import PredictionOutcome
from ghost_core.pipeline import Pipeline, PipelineConfig
from ghost_core.scenarios import generate_scenario
from ghost_verify.rederive import rederive
from ghost_verify.verify import verify_all


def _stamp_ns(item: RecordedInput) -> int:
    stamp = item.msg['header']['stamp']
    return stamp['sec'] * 1_000_000_000 + stamp['nanosec']


def _fixes_late(inputs: list[RecordedInput], from_ns: int, delay_ns: int) -> list[RecordedInput]:
    """`inputs` with every fix stamped from `from_ns` on received `delay_ns` later.

    One topic is FIFO: delaying a fix delays the ones after it.
    """
    moved = [replace(item, log_time_ns=item.log_time_ns + delay_ns)
             if item.topic == OBSERVATIONS[0] and _stamp_ns(item) >= from_ns else item
             for item in inputs]
    return sorted(moved, key=lambda item: item.log_time_ns)


def _recorded_run(path: Path, agent: list[RecordedInput], recorder: list[RecordedInput],
                  config: PipelineConfig, pipeline: Pipeline | None = None) -> Path:
    """A bag whose Ghost messages are the agent's over `agent`, its inputs `recorder`."""
    written, _ = run_messages(agent, config, pipeline)
    ghost = [item for item in written if item.stamp_ns is not None]
    inputs = [Written(item.topic, item.type_name, item.msg, item.log_time_ns)
              for item in recorder]
    return write_run_bag(path, sorted([*ghost, *inputs], key=lambda item: item.log_time_ns),
                         run_config(config))


def _nominal(horizon_ns: int = 0) -> tuple[PipelineConfig, list[RecordedInput], int]:
    """The nominal scenario (100 cycles, a fix each), and the stamp of its cycle 40."""
    scenario = generate_scenario('nominal')
    config = scenario.parameters.pipeline_config()
    if horizon_ns:
        config = replace(config, thresholds=replace(config.thresholds,
                                                    unconfirmed_horizon_ns=horizon_ns))
    return config, scenario_inputs(scenario), scenario.cycles[40].belief.stamp_ns


def test_fixes_late_at_the_agent_beyond_the_transport_bound_are_claimed_late(
        tmp_path: Path) -> None:
    """Every fix from cycle 40 on reached the evaluator 400 ms late: not believed (v1.3).

    Beyond the 250 ms lag its outcomes are unobserved, while the recorder logged each fix
    well before anything could close its cycle: a lateness claim beyond the transport bound
    is a violation, whatever order of arrival would explain it.
    """
    config, inputs, from_ns = _nominal()
    bag = _recorded_run(tmp_path / 'bag', _fixes_late(inputs, from_ns, 400_000_000), inputs,
                        config)
    result = verify_all(bag)
    assert result.evidence is not None
    assert dict(result.evidence.by_kind).get('input_claimed_late', 0) > 0
    assert not result.holds


def test_fixes_late_at_the_recorder_beyond_the_bound_are_from_the_future(
        tmp_path: Path) -> None:
    """The recorder logged the fixes 400 ms after the outcomes naming them: a violation."""
    config, inputs, from_ns = _nominal()
    bag = _recorded_run(tmp_path / 'bag', inputs, _fixes_late(inputs, from_ns, 400_000_000),
                        config)
    result = verify_all(bag)
    assert result.evidence is not None
    assert dict(result.evidence.by_kind).get('named_input_from_the_future', 0) > 0
    assert not result.holds


def test_fixes_late_at_the_agent_within_the_bound_are_admitted(tmp_path: Path) -> None:
    """100 ms late at the evaluator (inside the bound): admitted, counted, and it verifies."""
    config, inputs, from_ns = _nominal()
    bag = _recorded_run(tmp_path / 'bag', _fixes_late(inputs, from_ns, 100_000_000), inputs,
                        config)
    result = verify_all(bag)
    assert result.evidence is not None and result.evidence.holds, result.evidence.summary()
    assert result.holds, result.failures()


def test_fixes_far_later_at_the_recorder_are_not_re_derived_and_fail(tmp_path: Path) -> None:
    """Fixes 1.5 s late at the recorder: the outcomes naming them are not re-derived: a failure.

    Not possible for those outcomes only: every other message is still compared, and the
    verdict fails (it is not a limit of the recording: the bag holds the inputs, too late).
    """
    config, inputs, from_ns = _nominal()
    late = _fixes_late(inputs, from_ns, 1_500_000_000)
    replay = rederive(_recorded_run(tmp_path / 'bag', inputs, late, config))
    assert replay.violated and not replay.holds and replay.possible
    found = replay.first_not_rederived()
    assert found is not None and found[0] == 'outcome' and found[1] >= from_ns
    assert 'does not hold within the transport bound' in found[2]
    assert {topic.kind: topic.compared for topic in replay.topics}['actuation'] > 0


def test_a_confirmation_late_at_the_assessor_beyond_the_bound_is_claimed_late(
        tmp_path: Path) -> None:
    """The assessor got the fixes 500 ms late: its older confirmations are not believed.

    Unconfirmed horizon 300 ms: its raw assessments are capped; the recorder logged newer
    fixes more than the transport bound before their beliefs.
    """
    config, inputs, from_ns = _nominal(horizon_ns=300_000_000)
    agent = _fixes_late(inputs, from_ns, 500_000_000)
    written, traces = run_messages(agent, config)
    assert any(trace.raw.position.reason == 'unconfirmed_beyond_horizon' for trace in traces)
    result = verify_all(_recorded_run(tmp_path / 'bag', agent, inputs, config))
    assert result.evidence is not None
    assert dict(result.evidence.by_kind).get('input_claimed_late', 0) > 0


class _PredictionLateAt(Pipeline):
    """An honest agent whose evaluator got the prediction for one cycle after its grace."""

    def __init__(self, config: PipelineConfig, stamp_ns: int, lie: float = 0.0) -> None:
        super().__init__(config)
        self._late_ns, self._lie = stamp_ns, lie

    def evaluate(self, stamp_ns: int, frame_id: str, prediction: Any,
                 observation: Any) -> PredictionOutcome:
        if stamp_ns != self._late_ns:
            return super().evaluate(stamp_ns, frame_id, prediction, observation)
        outcome = super().evaluate(stamp_ns, frame_id, None, observation)
        x, y, z = outcome.observed_position
        return replace(outcome, observed_position=(x + self._lie, y, z))


def test_a_prediction_late_at_the_evaluator_is_taken_and_a_forged_outcome_is_not(
        tmp_path: Path) -> None:
    """Cycle 40's outcome pairs no prediction (it came after the grace): re-derived so.

    The same outcome with a made-up fix position is not what its named inputs give.
    """
    config, inputs, stamp_ns = _nominal()
    honest = _recorded_run(tmp_path / 'late', inputs, inputs, config,
                           _PredictionLateAt(config, stamp_ns))
    replay = rederive(honest)
    assert replay.holds, replay.summary()
    forged = _recorded_run(tmp_path / 'forged', inputs, inputs, config,
                           _PredictionLateAt(config, stamp_ns, lie=0.5))
    replay = rederive(forged)
    assert replay.violated
    first = replay.first_difference()
    assert first is not None and first[0] == 'outcome' and first[1].cycle_stamp_ns == stamp_ns


def test_a_confirmation_whose_effect_the_hysteresis_hides_is_followed(tmp_path: Path) -> None:
    """The first fix reached the assessor a belief late, under a held UNKNOWN: hidden, then not.

    The position is UNKNOWN (a 10 m sigma) until cycle 38, and no fix comes before cycle 40
    (horizon 300 ms). The first fix, and those after it, reached the assessor 150 ms late:
    belief 40 is capped (unconfirmed) there and confirmed in the recorder's order, published
    alike (held UNKNOWN by hysteresis), but the recovery's dwell starts a belief later, and
    so does the release. The raw assessment names the confirmation it had (SPEC 5 v1.3), so
    the re-run follows it in one pass: no assessor state is searched for.
    """
    config, inputs, from_ns = _nominal(horizon_ns=300_000_000)
    unknown_until = from_ns - 200_000_000
    changed = []
    for item in inputs:
        if item.topic == OBSERVATIONS[0] and _stamp_ns(item) < from_ns:
            continue
        if item.topic != OBSERVATIONS[0] and _stamp_ns(item) < unknown_until:
            covariance = list(item.msg['pose']['covariance'])
            for index in (0, 7, 14):
                covariance[index] = 100.0
            item = replace(item, msg={**item.msg, 'pose': {**item.msg['pose'],
                                                             'covariance': covariance}})
        changed.append(item)
    agent = _fixes_late(changed, from_ns, 150_000_000)
    _, late = run_messages(agent, config)
    _, on_time = run_messages(changed, config)
    first = next(a for a, b in zip(late, on_time, strict=True) if a != b)
    assert first.stamp_ns >= from_ns  # from belief 40 on: another confirmation named
    result = verify_all(_recorded_run(tmp_path / 'bag', agent, changed, config))
    replay = result.replay
    assert replay is not None and replay.holds, (replay.summary(), replay.notes())
    assert result.evidence is not None and result.evidence.holds, result.evidence.summary()
