"""Re-derivation from the inputs: re-run the agent on recorded inputs, compare field by field.

The pure half of ``verify_all``'s re-derivation (``ghost_verify.rederive`` reads the bag)
and of ``ghost_replay`` (``ghost.replay`` writes one):

- ``Replay`` feeds recorded inputs (beliefs and fixes, in the order they were received) to the
  very ``Pipeline`` the nodes' functions make up, applying the outcome evaluator's idle flush
  on the recorded receipt times when asked to;
- ``NamedRerun`` re-computes each node's output from the inputs its recorded message names
  (SPEC 5, v1.3): the raw assessment from its belief and named confirmation, the outcome from
  its named prediction and fix, the calibrated assessment from its raw assessment and named
  window, the rationale from its calibrated assessment and named vehicle status, with the
  configuration in force at the cycle. No order of arrival is searched: whether a named input
  is one the node can have had is EVIDENCE-v1's to judge, on the recorder's log times;
- ``trace_messages`` turns a re-run cycle into the SPEC section 4 message dicts of the six
  Ghost streams, and ``first_difference`` compares a recorded message dict with a re-derived
  one exactly (the canonical JSON of SPEC section 4, so floats bit for bit, ``-0.0`` is not
  ``0.0`` and NaN equals NaN), naming the first field that differs.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
import json
from types import MappingProxyType

from ghost_core.assessment import SelfAssessor
from ghost_core.contracts import (
    ActionEmission,
    BeliefSelfAssessment,
    CalibratedSelfAssessment,
    DecisionRationale,
    ForwardPrediction,
    PredictionOutcome,
    VehicleStatus,
)
from ghost_core.hashing import canonical_json
from ghost_core.loop import calibrate, decide, emit
from ghost_core.pipeline import AgentInput, CycleParameters, CycleTrace, Pipeline, PipelineConfig
from ghost_core.prediction import outcome_for_cycle, prediction_from_belief
from ghost_core.run_configuration import ConfigurationTimeline
from ghost_core.samples import BeliefSample, Observation
from ghost_core.sequencing import CycleInputs
from ghost_core.wire import to_msg_dict

__all__ = [
    'ABSENT',
    'MESSAGE_KINDS',
    'TYPE_NAMES',
    'FieldDifference',
    'NamedRerun',
    'Replay',
    'TimedInput',
    'first_difference',
    'trace_contracts',
    'trace_messages',
]

#: The six Ghost streams of a cycle, in the order the pipeline produces them (the verifier's
#: ``GhostTopicKind`` values).
MESSAGE_KINDS = ('raw_assessment', 'prediction', 'outcome', 'calibrated', 'rationale',
                 'actuation')
#: The message type of each stream.
TYPE_NAMES: Mapping[str, str] = MappingProxyType({
    'raw_assessment': 'ghost_interfaces/msg/BeliefSelfAssessment',
    'prediction': 'ghost_interfaces/msg/ForwardPrediction',
    'outcome': 'ghost_interfaces/msg/PredictionOutcome',
    'calibrated': 'ghost_interfaces/msg/CalibratedSelfAssessment',
    'rationale': 'ghost_interfaces/msg/DecisionRationale',
    'actuation': 'ghost_interfaces/msg/ActionEmission',
})
#: What ``first_difference`` reports for a field one of the two messages does not have.
ABSENT = '<absent>'

_Contract = (BeliefSelfAssessment | ForwardPrediction | PredictionOutcome
             | CalibratedSelfAssessment | DecisionRationale | ActionEmission)


def trace_contracts(trace: CycleTrace) -> tuple[tuple[str, _Contract | None], ...]:
    """Every message the agent publishes for one cycle, by stream (None: not published)."""
    return (('raw_assessment', trace.raw), ('prediction', trace.prediction),
            ('outcome', trace.outcome), ('calibrated', trace.calibrated),
            ('rationale', trace.rationale), ('actuation', trace.emission))


def trace_messages(trace: CycleTrace) -> tuple[tuple[str, dict[str, object]], ...]:
    """The SPEC section 4 message dicts of one cycle, by stream (only those published)."""
    return tuple((kind, to_msg_dict(contract)) for kind, contract in trace_contracts(trace)
                 if contract is not None)


@dataclass(frozen=True, slots=True)
class TimedInput:
    """One recorded input and when it was received (its log time, integer nanoseconds)."""

    log_time_ns: int
    sample: AgentInput


class Replay:
    """The agent re-run on recorded inputs, fed in the order they were received.

    With ``idle_flush``, the outcome evaluator's wall-clock flush is applied on the receipt
    times: before an input received ``config.idle_flush_ns`` or more after the previous one,
    the pending cycles are finished with what has arrived, as the node does when its inputs
    pause (``idle_flush_s``). That is right for a recording's own log times (the recorder's
    clock, beside the nodes'); ``ghost_replay`` replays an input bag whose log times were
    never a run's, and leaves it off. ``pipeline`` substitutes another Pipeline (a test's).
    """

    def __init__(self, config: PipelineConfig, parameters: CycleParameters | None = None,
                 *, idle_flush: bool = False, pipeline: Pipeline | None = None) -> None:
        self.pipeline = pipeline if pipeline is not None else Pipeline(config, parameters)
        self._idle_ns = config.idle_flush_ns if idle_flush else 0
        self._last_log_ns: int | None = None
        #: How many idle flushes were applied.
        self.idle_flushes = 0

    def feed(self, item: TimedInput) -> list[CycleTrace]:
        """Take one input; return the cycles it (or an idle flush before it) finishes."""
        return [self.pipeline.complete(cycle) for cycle in self.resolve(item)]

    def finish(self) -> list[CycleTrace]:
        """End of the input: finish every pending cycle (the node's idle flush at the end)."""
        return self.pipeline.finish()

    def resolve(self, item: TimedInput) -> list[CycleInputs[ForwardPrediction, Observation]]:
        """As ``feed``, leaving each resolved cycle to ``pipeline.complete``."""
        done: list[CycleInputs[ForwardPrediction, Observation]] = []
        last = self._last_log_ns
        if (self._idle_ns and last is not None and item.log_time_ns - last >= self._idle_ns
                and self.pipeline.pending_cycles):
            done += self.pipeline.resolve_pending()
            self.idle_flushes += 1
        self._last_log_ns = item.log_time_ns
        done += self.pipeline.resolve(item.sample)
        return done

    def run(self, inputs: Iterable[TimedInput]) -> list[CycleTrace]:
        """Feed every input, then finish; return every cycle in cycle order."""
        traces: list[CycleTrace] = []
        for item in inputs:
            traces += self.feed(item)
        return traces + self.finish()


class NamedRerun:
    """Each node's output re-computed from the inputs its recorded message names.

    One deterministic pass in cycle order, with the configuration in force at each cycle
    (``ConfigurationTimeline``). The self-assessor is the one stateful node (its hysteresis):
    ``raw`` is called in belief order for every belief the assessor judged, and starts a new
    assessor where a recorded change of the self-assessor's parameters is in force, as the
    node rebuilds its assessor on a parameter change. Everything else is a pure function of
    what it is given.
    """

    def __init__(self, timeline: ConfigurationTimeline) -> None:
        self._timeline = timeline
        # The cycle stamps after which a change of the self-assessor's thresholds is in force.
        self._restarts = [change.in_force_after_stamp_ns for change in timeline.changes
                          if 'thresholds' in change.section]
        self._assessor: SelfAssessor | None = None
        self._epoch = -1

    def raw(self, belief: BeliefSample, confirmation_ns: int | None) -> BeliefSelfAssessment:
        """The raw assessment of `belief`, judged with the confirmation it names."""
        epoch = bisect_left(self._restarts, belief.stamp_ns)
        if self._assessor is None or epoch != self._epoch:
            self._assessor = SelfAssessor(self._timeline.config_at(belief.stamp_ns).thresholds)
            self._epoch = epoch
        return self._assessor.assess_confirmed(belief, confirmation_ns)

    def restart(self) -> None:
        """The assessor the next ``raw`` judges with starts anew (the node restarted)."""
        self._assessor = None

    def prediction(self, belief: BeliefSample) -> ForwardPrediction | None:
        """The prediction made from `belief` (None for a belief that is not finite)."""
        config = self._timeline.config_at(belief.stamp_ns)
        return prediction_from_belief(belief, config.period_ns, config.process_noise_q)

    def outcome(self, stamp_ns: int, frame_id: str, prediction: ForwardPrediction | None,
                observation: Observation | None) -> PredictionOutcome:
        """The outcome of cycle `stamp_ns` from the prediction and fix it names."""
        return outcome_for_cycle(stamp_ns, frame_id, prediction, observation,
                                 self._timeline.config_at(stamp_ns).evaluator)

    def calibrated(self, raw: BeliefSelfAssessment,
                   window: Sequence[PredictionOutcome]) -> CalibratedSelfAssessment:
        """`raw` calibrated with the window of outcomes it names, under the M, K, W in force."""
        return calibrate(raw, window, self._timeline.config_at(raw.stamp_ns).loop)

    @staticmethod
    def rationale(calibrated: CalibratedSelfAssessment,
                  status: VehicleStatus | None) -> DecisionRationale:
        """The decision on `calibrated`, in the context of the vehicle status it names."""
        return decide(calibrated, vehicle=status)

    @staticmethod
    def actuation(rationale: DecisionRationale) -> ActionEmission:
        """The actuation of `rationale`."""
        return emit(rationale)


def _same(a: object, b: object) -> bool:
    """Equal in the canonical JSON form (exact floats; 1 is not 1.0)."""
    return json.dumps(a) == json.dumps(b)


@dataclass(frozen=True, slots=True)
class FieldDifference:
    """The first field in which a recorded message and the re-derived one differ.

    `field` is its path (``calibration_history.count_beyond_3_std``,
    ``position_covariance[4]``; '' for the whole message); `recorded` and `recomputed` are
    the two values (``ABSENT`` for a field one message does not have).
    """

    field: str
    recorded: object
    recomputed: object


def first_difference(recorded: Mapping[str, object],
                     recomputed: Mapping[str, object]) -> FieldDifference | None:
    """The first differing field (in the recorded message's field order), or None if equal.

    Equal means equal canonical JSON (SPEC section 4), i.e. the same content address.
    """
    if canonical_json(dict(recorded)) == canonical_json(dict(recomputed)):
        return None
    found = _walk(recorded, recomputed, '')
    return found if found is not None else FieldDifference('', dict(recorded),
                                                           dict(recomputed))


def _walk(recorded: object, recomputed: object, path: str) -> FieldDifference | None:
    if isinstance(recorded, Mapping) and isinstance(recomputed, Mapping):
        keys = [*recorded, *(key for key in recomputed if key not in recorded)]
        for key in keys:
            where = f'{path}.{key}' if path else str(key)
            if key not in recorded or key not in recomputed:
                return FieldDifference(where, recorded.get(key, ABSENT),
                                       recomputed.get(key, ABSENT))
            found = _walk(recorded[key], recomputed[key], where)
            if found is not None:
                return found
        return None
    if (isinstance(recorded, Sequence) and isinstance(recomputed, Sequence)
            and not isinstance(recorded, str) and not isinstance(recomputed, str)):
        for index in range(max(len(recorded), len(recomputed))):
            where = f'{path}[{index}]'
            if index >= len(recorded) or index >= len(recomputed):
                return FieldDifference(
                    where, recorded[index] if index < len(recorded) else ABSENT,
                    recomputed[index] if index < len(recomputed) else ABSENT)
            found = _walk(recorded[index], recomputed[index], where)
            if found is not None:
                return found
        return None
    return None if _same(recorded, recomputed) else FieldDifference(path, recorded, recomputed)
