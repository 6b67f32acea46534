"""Run bags for the replay tests: recorded inputs, the agent's messages and manifest.json.

A "run" here is what Ghost's recorder leaves: the two inputs (/state/nav, /observations) as
they were received, every Ghost message the agent published right after the input that
finished its cycle, and manifest.json with the run configuration. The agent is the pure
pipeline (ghost_core.rederive.Replay), possibly with a lying component substituted: the bag
is then self-consistent (hashes, histories, policies), and only a re-derivation from the
inputs can tell.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from bags import shared_typestore
from rosbags.typesys.store import Typestore

from ghost_bag.manifest import bag_file_digests, ManifestBuilder, write_manifest
from ghost_bag.recorded_inputs import STATUS_TYPE
from ghost_bag.write import GhostBagWriter
from ghost_core.assessment import SelfAssessor, ThresholdsConfig
from ghost_core.contracts import AxisAssessment, BeliefSelfAssessment, PredictionOutcome
from ghost_core.distances import normalised_distance
from ghost_core.levels import SelfAssessmentLevel, worst_level
from ghost_core.pipeline import CycleTrace, Pipeline, PipelineConfig
from ghost_core.rederive import Replay, TimedInput, trace_messages, TYPE_NAMES
from ghost_core.ros_inputs import belief_sample, observation_of
from ghost_core.samples import BeliefSample, Observation
from ghost_core.scenarios import Scenario
from ghost_core.wire import ns_to_stamp, parse_vehicle_status

STATE = ('/state/nav', 'nav_msgs/msg/Odometry')
OBSERVATIONS = ('/observations', 'geometry_msgs/msg/PoseWithCovarianceStamped')
GHOST_TOPIC = {
    'raw_assessment': '/self_assessment',
    'prediction': '/predictions',
    'outcome': '/prediction_outcomes',
    'calibrated': '/self_assessment/calibrated',
    'rationale': '/decisions',
    'actuation': '/actuations',
}


def odometry_dict(belief: BeliefSample) -> dict[str, Any]:
    """The nav_msgs/Odometry of a belief (its velocity written as the body twist)."""
    x, y, z = belief.position
    qx, qy, qz, qw = belief.orientation_xyzw
    vx, vy, vz = belief.velocity
    return {
        'header': {'stamp': ns_to_stamp(belief.stamp_ns), 'frame_id': belief.frame_id},
        'child_frame_id': 'base_link',
        'pose': {'pose': {'position': {'x': x, 'y': y, 'z': z},
                          'orientation': {'x': qx, 'y': qy, 'z': qz, 'w': qw}},
                 'covariance': [float(v) for v in belief.pose_covariance]},
        'twist': {'twist': {'linear': {'x': vx, 'y': vy, 'z': vz},
                            'angular': {'x': 0.0, 'y': 0.0, 'z': 0.0}},
                  'covariance': [float(v) for v in belief.twist_covariance]},
    }


def pose_dict(observation: Observation) -> dict[str, Any]:
    """The geometry_msgs/PoseWithCovarianceStamped of a fix."""
    x, y, z = observation.position
    cov = [0.0] * 36
    for i in range(3):
        for j in range(3):
            cov[i * 6 + j] = float(observation.covariance[i * 3 + j])
    return {
        'header': {'stamp': ns_to_stamp(observation.stamp_ns), 'frame_id': observation.frame_id},
        'pose': {'pose': {'position': {'x': x, 'y': y, 'z': z},
                          'orientation': {'x': 0.0, 'y': 0.0, 'z': 0.0, 'w': 1.0}},
                 'covariance': cov},
    }


def _attributes(value: Any) -> Any:
    """A message dict as an attribute object (what a decoded bag message looks like)."""
    if isinstance(value, dict):
        return SimpleNamespace(**{key: _attributes(item) for key, item in value.items()})
    return value


@dataclass(frozen=True)
class RecordedInput:
    """One input as the recorder received it: log time, topic, type and message dict."""

    log_time_ns: int
    topic: str
    type_name: str
    msg: dict[str, Any]

    def timed(self) -> TimedInput:
        """What the agent takes from it (converted as ghost_core.ros_inputs converts)."""
        if self.type_name == STATUS_TYPE:
            return TimedInput(self.log_time_ns, parse_vehicle_status(self.msg))
        message = _attributes(self.msg)
        sample = (belief_sample(message) if self.type_name == STATE[1]
                  else observation_of(message))
        return TimedInput(self.log_time_ns, sample)


def scenario_inputs(scenario: Scenario, fix_delay_ns: int = 0,
                    log_offset_ns: int = 0) -> list[RecordedInput]:
    """A scenario's inputs as received: beliefs at their stamp, fixes `fix_delay_ns` late.

    At equal log times the fix comes first, as the scenario node publishes it.
    """
    items = []
    for cycle in scenario.cycles:
        if cycle.observation is not None:
            items.append((cycle.observation.stamp_ns + fix_delay_ns, 0, RecordedInput(
                0, *OBSERVATIONS, pose_dict(cycle.observation))))
        items.append((cycle.belief.stamp_ns, 1, RecordedInput(0, *STATE,
                                                              odometry_dict(cycle.belief))))
    items.sort(key=lambda item: (item[0], item[1]))
    return [replace(entry, log_time_ns=log + log_offset_ns) for log, _, entry in items]


@dataclass(frozen=True)
class Written:
    """One message of a run bag: topic, type, message dict, log time and cycle stamp."""

    topic: str
    type_name: str
    msg: dict[str, Any]
    log_time_ns: int
    stamp_ns: int | None = None  # None for an input


def run_messages(inputs: Sequence[RecordedInput], config: PipelineConfig,
                 pipeline: Pipeline | None = None,
                 topic_prefix: str = '') -> tuple[list[Written], list[CycleTrace]]:
    """The agent over `inputs`: every input and Ghost message, in the order recorded.

    Each cycle's six messages follow the input that finished it, 1 µs apart, and the
    recorder's log times only increase (two inputs logged at one time finish their cycles
    one after the other).
    """
    replay = Replay(config, idle_flush=True, pipeline=pipeline)
    written: list[Written] = []
    traces: list[CycleTrace] = []
    next_free = [0]

    def emit(done: list[CycleTrace], log_ns: int) -> None:
        logged = max(log_ns + 1000, next_free[0])
        for trace in done:
            traces.append(trace)
            for kind, msg in trace_messages(trace):
                written.append(Written(topic_prefix + GHOST_TOPIC[kind], TYPE_NAMES[kind], msg,
                                       logged, trace.stamp_ns))
                logged += 1000
        next_free[0] = max(next_free[0], logged)

    last = 0
    for item in inputs:
        written.append(Written(topic_prefix + item.topic, item.type_name, item.msg,
                               item.log_time_ns))
        emit(replay.feed(item.timed()), item.log_time_ns)
        last = item.log_time_ns
    emit(replay.finish(), last + 1_000_000)
    return written, traces


def write_run_bag(path: Path, written: Iterable[Written], config: dict[str, Any] | None,
                  manifest: bool = True, chunk_size: int | None = None,
                  typestore: Typestore | None = None) -> Path:
    """Write the messages as a rosbag2 bag with manifest.json holding `config`."""
    builder = ManifestBuilder(config or {}, {'ghost': 'test'})
    options: dict[str, Any] = {} if chunk_size is None else {'chunk_size': chunk_size}
    with GhostBagWriter(path, typestore=typestore or shared_typestore(), **options) as writer:
        for item in written:
            data = writer.serialize(item.type_name, item.msg)
            writer.write(item.topic, item.type_name, data, item.log_time_ns)
            builder.add(item.topic, item.type_name, item.log_time_ns, data)
    if manifest:
        write_manifest(path, builder.document(bag_file_digests(path)))
    return path


def run_config(config: PipelineConfig, topic_prefix: str = '') -> dict[str, Any]:
    """The run configuration the recorder writes (ghost.bringup's run_config)."""
    document: dict[str, Any] = json.loads(json.dumps(config.to_dict()))
    document['input_topics'] = {'state': topic_prefix + STATE[0],
                                'observations': topic_prefix + OBSERVATIONS[0]}
    return document


def run_bag(path: Path, inputs: Sequence[RecordedInput], config: PipelineConfig,
            pipeline: Pipeline | None = None,
            changes: Sequence[Written] = (),
            chunk_size: int | None = None) -> tuple[Path, list[CycleTrace]]:
    """An honest (or, with `pipeline`, a lying) run recorded to `path`.

    `changes` (``configuration_change``) are recorded where their log time puts them.
    """
    written, traces = run_messages(inputs, config, pipeline)
    written = sorted([*written, *changes], key=lambda item: item.log_time_ns)
    return write_run_bag(path, written, run_config(config), chunk_size=chunk_size), traces


CONFIGURATION = ('/ghost/configuration', 'ghost_interfaces/msg/ConfigurationChange')


def configuration_change(node: str, after_ns: int, section: dict[str, Any],
                         log_time_ns: int) -> Written:
    """The ConfigurationChange a node publishes after a ``ros2 param set`` (see node_base)."""
    return Written(CONFIGURATION[0], CONFIGURATION[1], {
        'header': {'stamp': ns_to_stamp(log_time_ns), 'frame_id': ''}, 'node': node,
        'in_force_after_stamp_ns': after_ns,
        'configuration': json.dumps(section, sort_keys=True, separators=(',', ':'))},
        log_time_ns)


# --- lying components ---------------------------------------------------------------------


class LyingEvaluator(Pipeline):
    """Reports every observed position error as within one sigma (at most 0.8).

    The normalised distance is recomputed from the lied raw one, so each outcome keeps its
    contract and every history built on them is consistent: a drift is simply never seen.
    """

    CAP = 0.8

    def evaluate(self, stamp_ns: int, frame_id: str, prediction: Any,
                 observation: Any) -> PredictionOutcome:
        outcome = super().evaluate(stamp_ns, frame_id, prediction, observation)
        if not outcome.observed or outcome.position_mahalanobis <= self.CAP:
            return outcome
        small = self.CAP
        return replace(outcome, position_mahalanobis=small,
                       position_normalised_distance=normalised_distance(
                           small, outcome.position_axes_compared))


class UpgradingAssessor(Pipeline):
    """Claims KNOWN for every block the reference judged UNCERTAIN (a better level)."""

    def assess(self, belief: BeliefSample) -> BeliefSelfAssessment:
        raw = super().assess(belief)

        def better(block: AxisAssessment) -> AxisAssessment:
            if block.level != SelfAssessmentLevel.UNCERTAIN:
                return block
            return replace(block, level=SelfAssessmentLevel.KNOWN,
                           reason='within_known_threshold')

        blocks = {name: better(getattr(raw, name))
                  for name in ('position', 'velocity', 'orientation')}
        return replace(raw, **blocks, overall_level=worst_level(
            *(block.level for block in blocks.values())))


class ShrinkingAssessor(Pipeline):
    """Publishes half the position standard deviation it judged (a smaller covariance)."""

    def assess(self, belief: BeliefSample) -> BeliefSelfAssessment:
        raw = super().assess(belief)
        return replace(raw, position=replace(raw.position,
                                             max_std=raw.position.max_std / 2.0))


class ThresholdsChangedAt(Pipeline):
    """An honest assessor whose thresholds are changed at `stamp_ns` (ros2 param set)."""

    def __init__(self, config: PipelineConfig, stamp_ns: int,
                 thresholds: ThresholdsConfig) -> None:
        super().__init__(config)
        self._switch_ns = stamp_ns
        self._changed = SelfAssessor(thresholds)

    def observe(self, observation: Observation) -> None:
        super().observe(observation)  # a fix is an input: both assessors have it
        self._changed.observe(observation.stamp_ns, observation.position)

    def assess(self, belief: BeliefSample) -> BeliefSelfAssessment:
        if belief.stamp_ns >= self._switch_ns:
            return self._changed.assess(belief)
        return super().assess(belief)


@dataclass(frozen=True)
class ParametersFrom:
    """M, K and Q as a `ros2 param set` at `stamp_ns` leaves them (a CycleParameters)."""

    config: PipelineConfig
    from_ns: int
    new_m: int
    new_k: int
    new_q: float | None = None

    def loop_parameters(self, stamp_ns: int) -> tuple[int, int]:
        """M and K of the cycle."""
        if stamp_ns >= self.from_ns:
            return self.new_m, self.new_k
        return self.config.loop.min_outcomes, self.config.loop.downgrade_threshold

    def process_noise_q(self, stamp_ns: int) -> float:
        """Q of the prediction made at the cycle."""
        if stamp_ns >= self.from_ns and self.new_q is not None:
            return self.new_q
        return self.config.process_noise_q

    def recorded(self, log_time_ns: int) -> list[Written]:
        """The ConfigurationChange messages the nodes publish for this change."""
        loop = {'downgrade_threshold': self.new_k, 'max_history': self.config.loop.max_history,
                'min_outcomes': self.new_m}
        changes = [configuration_change('/calibrator', self.from_ns - 1, {'loop': loop},
                                        log_time_ns)]
        if self.new_q is not None:
            changes.append(configuration_change('/forward_predictor', self.from_ns - 1,
                                                {'process_noise_q': float(self.new_q)},
                                                log_time_ns))
        return changes


class TrappedAssessor(Pipeline):
    """An assessor that never upgrades (the hysteresis trap); every contract holds.

    After its first level worse than KNOWN, it publishes at best UNCERTAIN (held by
    hysteresis) for ever, whatever its belief does.
    """

    def __init__(self, config: PipelineConfig) -> None:
        super().__init__(config)
        self._degraded = False

    def assess(self, belief: BeliefSample) -> BeliefSelfAssessment:
        raw = super().assess(belief)
        self._degraded = self._degraded or raw.overall_level != SelfAssessmentLevel.KNOWN
        if not self._degraded or raw.overall_level != SelfAssessmentLevel.KNOWN:
            return raw
        held = replace(raw.position, level=SelfAssessmentLevel.UNCERTAIN,
                       reason='held_by_hysteresis')
        return replace(raw, position=held, overall_level=SelfAssessmentLevel.UNCERTAIN)
