"""Re-derivation from the inputs: re-run the agent on recorded inputs, compare field by field.

The pure half of ``verify_all``'s re-derivation (``ghost_verify.rederive`` reads the bag)
and of ``ghost_replay`` (``ghost.replay`` writes one):

- ``Replay`` feeds recorded inputs (beliefs and fixes, in the order they were received) to the
  very ``Pipeline`` the nodes' functions make up, applying the outcome evaluator's idle flush
  on the recorded receipt times when asked to;
- ``RecordedParameters`` gives the pipeline, cycle by cycle, the M and K recorded on each
  calibrated assessment and the Q recorded on each prediction, so that a ``ros2 param set``
  mid-run is followed rather than guessed;
- ``trace_messages`` turns a re-run cycle into the SPEC section 4 message dicts of the six
  Ghost streams, and ``first_difference`` compares a recorded message dict with a re-derived
  one exactly (the canonical JSON of SPEC section 4, so floats bit for bit, ``-0.0`` is not
  ``0.0`` and NaN equals NaN), naming the first field that differs.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
import json
from types import MappingProxyType

from ghost_core.contracts import (
    ActionEmission,
    BeliefSelfAssessment,
    CalibratedSelfAssessment,
    DecisionRationale,
    ForwardPrediction,
    PredictionOutcome,
)
from ghost_core.hashing import canonical_json
from ghost_core.pipeline import AgentInput, CycleParameters, CycleTrace, Pipeline, PipelineConfig
from ghost_core.properties import JsonValue
from ghost_core.samples import Observation
from ghost_core.sequencing import CycleInputs
from ghost_core.wire import to_msg_dict

__all__ = [
    'RACE_WINDOW_NS',
    'ABSENT',
    'MESSAGE_KINDS',
    'PARAMETERS_FOLLOWED',
    'TYPE_NAMES',
    'FieldDifference',
    'ParameterRun',
    'RecordedParameters',
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
#: The values a replay follows cycle by cycle, as the run recorded them on its messages.
PARAMETERS_FOLLOWED = ('min_outcomes', 'downgrade_threshold', 'process_noise_q')
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


#: Inputs a recorder received within this long of each other may have reached a node in the
#: other order (DDS orders one topic, not two; a loaded machine delays one subscription more
#: than another). A re-derivation takes a recorded message that is exactly the node's own
#: function of such an order as recorded, and counts it.
RACE_WINDOW_NS = 1_000_000_000


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


@dataclass(frozen=True, slots=True)
class ParameterRun:
    """A run of consecutive recorded messages that carry one value of a followed parameter."""

    parameter: str
    value: int | float
    first_cycle_stamp_ns: int
    cycles: int
    #: The value of the recorded run configuration.
    configured: int | float

    def to_json(self) -> dict[str, JsonValue]:
        """Return the run as a JSON object."""
        return {'parameter': self.parameter, 'value': self.value,
                'first_cycle_stamp_ns': self.first_cycle_stamp_ns, 'cycles': self.cycles,
                'configured': self.configured}


class RecordedParameters:
    """M, K and Q per cycle, as the run recorded them; the configuration's before any record.

    ``record`` is called in increasing stamp order with what one cycle's messages carry (M
    and K from its calibrated assessment, Q from its prediction); a cycle that recorded none
    takes the last value recorded before it. A ``CycleParameters`` for the Pipeline.
    """

    def __init__(self, config: PipelineConfig) -> None:
        self._configured: dict[str, int | float] = {
            'min_outcomes': config.loop.min_outcomes,
            'downgrade_threshold': config.loop.downgrade_threshold,
            'process_noise_q': float(config.process_noise_q)}
        # parameter -> change points (stamps, values) and the runs for the report
        self._stamps: dict[str, list[int]] = {name: [] for name in PARAMETERS_FOLLOWED}
        self._values: dict[str, list[int | float]] = {name: [] for name in PARAMETERS_FOLLOWED}
        self._runs: dict[str, list[list[int | float]]] = {name: [] for name in
                                                          PARAMETERS_FOLLOWED}
        self._last_ns: dict[str, int] = {}

    def record(self, stamp_ns: int, *, min_outcomes: int | None = None,
               downgrade_threshold: int | None = None,
               process_noise_q: float | None = None) -> None:
        """Take the values one cycle's messages carry (None: that message is not recorded)."""
        for name, value in (('min_outcomes', min_outcomes),
                            ('downgrade_threshold', downgrade_threshold),
                            ('process_noise_q', process_noise_q)):
            if value is not None:
                self._record(name, stamp_ns, value)

    def _record(self, name: str, stamp_ns: int, value: int | float) -> None:
        stamps, values, runs = self._stamps[name], self._values[name], self._runs[name]
        last = self._last_ns.get(name)
        if last is not None and stamp_ns < last:
            raise ValueError(f'RecordedParameters.record: stamp {stamp_ns} before {last} '
                             f'({name}); record cycles in stamp order')
        self._last_ns[name] = stamp_ns
        if last == stamp_ns:  # a second message of the same cycle: the last one counts
            if stamps[-1] == stamp_ns:
                values[-1] = value
                runs[-1][0] = value
                return
            if _same(values[-1], value):
                return
            runs[-1][2] -= 1  # the cycle's first message had continued the previous run
        if values and _same(values[-1], value):
            runs[-1][2] += 1
            return
        stamps.append(stamp_ns)
        values.append(value)
        runs.append([value, stamp_ns, 1])

    def _at(self, name: str, stamp_ns: int) -> int | float:
        index = bisect_right(self._stamps[name], stamp_ns) - 1
        return self._values[name][index] if index >= 0 else self._configured[name]

    def loop_parameters(self, stamp_ns: int) -> tuple[int, int]:
        """M and K recorded for the cycle (or the last recorded before it)."""
        return int(self._at('min_outcomes', stamp_ns)), int(
            self._at('downgrade_threshold', stamp_ns))

    def process_noise_q(self, stamp_ns: int) -> float:
        """Q recorded on the prediction made at the cycle (or the last one before it)."""
        return float(self._at('process_noise_q', stamp_ns))

    def runs(self) -> tuple[ParameterRun, ...]:
        """Every run of one recorded value, per parameter, in stamp order."""
        return tuple(ParameterRun(name, run[0], int(run[1]), int(run[2]),
                                  self._configured[name])
                     for name in PARAMETERS_FOLLOWED for run in self._runs[name])

    @property
    def changed(self) -> bool:
        """True when some recorded value is not the run configuration's."""
        return any(not _same(run.value, run.configured) for run in self.runs())


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
