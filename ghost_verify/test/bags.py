"""Build ghost bags for tests: entries from the real ghost_core loop, then GhostBagWriter."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
import functools
from pathlib import Path
import shutil
from typing import Any, TYPE_CHECKING

from mcap.reader import make_reader

from ghost_bag.write import ghost_typestore, GhostBagWriter
from ghost_core.actions import emit_reference_action
from ghost_core.contracts import (
    AxisAssessment,
    BeliefSelfAssessment,
    CalibrationHistory,
    Decision,
    DecisionRationale,
    ForwardPrediction,
    PredictionOutcome,
)
from ghost_core.gate import gate_verdict, GateAction, LatestActuation
from ghost_core.hashing import content_address
from ghost_core.levels import DecisionKind, SelfAssessmentLevel
from ghost_core.loop import calibrate_from_history, CycleResult, decide, emit, LoopConfig
from ghost_core.pipeline import CycleTrace
from ghost_core.scenarios import generate_scenario, run_scenario
from ghost_core.wire import message_address, ns_to_stamp, to_msg_dict

if TYPE_CHECKING:  # the writer's type; the tests get rosbags through ghost_bag.write
    from rosbags.typesys.store import Typestore

HERE = Path(__file__).resolve().parent
#: ghost_interfaces/msg of this repository, found relative to this file (../../ghost_interfaces).
MSG_DIR = HERE.parents[1] / 'ghost_interfaces' / 'msg'
#: The real rosbag2 bags, beside the repository (../shared/fixtures/rosbag2 from its root).
FIXTURES = HERE.parents[2] / 'shared' / 'fixtures' / 'rosbag2'

RAW = ('/self_assessment', 'ghost_interfaces/msg/BeliefSelfAssessment')
PREDICTION = ('/predictions', 'ghost_interfaces/msg/ForwardPrediction')
OUTCOME = ('/prediction_outcomes', 'ghost_interfaces/msg/PredictionOutcome')
CALIBRATED = ('/self_assessment/calibrated', 'ghost_interfaces/msg/CalibratedSelfAssessment')
RATIONALE = ('/decisions', 'ghost_interfaces/msg/DecisionRationale')
ACTUATION = ('/actuations', 'ghost_interfaces/msg/ActionEmission')
STATE = ('/state/nav', 'nav_msgs/msg/Odometry')
GATE = ('/ghost/gate', 'ghost_interfaces/msg/GateEmission')

THRESHOLDS_SHA256 = content_address({'thresholds': 'ghost_verify tests'})


@functools.cache
def shared_typestore() -> Typestore:
    """ROS 2 Jazzy plus ghost_interfaces types, built once per test session."""
    return ghost_typestore(MSG_DIR)


@dataclass(frozen=True)
class Entry:
    """One message to write: topic, type, message dict (or CDR bytes) and log time."""

    topic: str
    type_name: str
    msg: Any
    log_time_ns: int
    stamp_ns: int


def odometry_dict(stamp_ns: int) -> dict[str, Any]:
    """Return a complete nav_msgs/Odometry message dict (a non-ghost /state/nav message)."""
    vector = {'x': 0.0, 'y': 0.0, 'z': 0.0}
    return {
        'header': {'stamp': ns_to_stamp(stamp_ns), 'frame_id': 'map'},
        'child_frame_id': 'base_link',
        'pose': {'pose': {'position': dict(vector),
                          'orientation': {'x': 0.0, 'y': 0.0, 'z': 0.0, 'w': 1.0}},
                 'covariance': [0.0] * 36},
        'twist': {'twist': {'linear': dict(vector), 'angular': dict(vector)},
                  'covariance': [0.0] * 36},
    }


def cycle_entries(
    stamp_ns: int,
    *,
    raw: BeliefSelfAssessment | None = None,
    outcome: PredictionOutcome | None = None,
    result: CycleResult | None = None,
    prediction: ForwardPrediction | None = None,
    with_state: bool = False,
) -> list[Entry]:
    """Return one cycle's messages in pipeline order, log times a few microseconds apart."""
    items: list[tuple[tuple[str, str], Any]] = []
    if with_state:
        items.append((STATE, odometry_dict(stamp_ns)))
    if raw is not None:
        items.append((RAW, to_msg_dict(raw)))
    if outcome is not None:
        items.append((OUTCOME, to_msg_dict(outcome)))
    if result is not None:
        items.append((CALIBRATED, to_msg_dict(result.calibrated)))
        items.append((RATIONALE, to_msg_dict(result.rationale)))
        items.append((ACTUATION, to_msg_dict(result.emission)))
    if prediction is not None:
        items.append((PREDICTION, to_msg_dict(prediction)))
    return [Entry(topic, type_name, msg, stamp_ns + 1000 * index, stamp_ns)
            for index, ((topic, type_name), msg) in enumerate(items)]


def step_from_history(raw: BeliefSelfAssessment, history: CalibrationHistory,
                      config: LoopConfig) -> CycleResult:
    """One loop step (calibrate, decide, emit) on `history` as given, not built from outcomes."""
    calibrated = calibrate_from_history(raw, history, config)
    rationale = decide(calibrated)
    return CycleResult(calibrated, rationale, emit(rationale))


def trace_entries(traces: Iterable[CycleTrace], *, with_state: bool = True) -> list[Entry]:
    """Return every message the agent published over the traced cycles, in stream order."""
    entries: list[Entry] = []
    for trace in traces:
        entries.extend(cycle_entries(
            trace.stamp_ns, raw=trace.raw, outcome=trace.outcome, result=trace.result,
            prediction=trace.prediction, with_state=with_state,
        ))
    return entries


def write_bag(
    path: Path,
    entries: Iterable[Entry],
    *,
    chunk_size: int | None = None,
    topic_map: dict[str, str] | None = None,
    chunk_crc: bool = True,
    typestore: Typestore | None = None,
) -> Path:
    """Write the entries as a rosbag2 MCAP bag at `path` (a new directory); return it."""
    options: dict[str, Any] = {'typestore': typestore or shared_typestore(),
                               'chunk_crc': chunk_crc}
    if chunk_size is not None:
        options['chunk_size'] = chunk_size
    with GhostBagWriter(path, **options) as writer:
        for entry in entries:
            topic = (topic_map or {}).get(entry.topic, entry.topic)
            writer.write(topic, entry.type_name, entry.msg, entry.log_time_ns)
    return path


@functools.cache
def scenario_traces(name: str, seed: int = 0) -> tuple[CycleTrace, ...]:
    """Return the named ghost_core scenario run through the real agent (cached)."""
    return run_scenario(generate_scenario(name, seed))


def with_policy(
    traces: Sequence[CycleTrace], kind: DecisionKind, policy_id: str
) -> list[CycleTrace]:
    """Return the traces with a degenerate decision policy that always decides `kind`.

    The hash chain stays intact (the rationale names the real assessments and the reference
    emitter executes it), so only the properties can catch the policy.
    """
    changed = []
    for trace in traces:
        calibrated = trace.calibrated
        rationale = DecisionRationale(
            stamp_ns=trace.stamp_ns,
            frame_id=calibrated.frame_id,
            decision=Decision(kind, trace.stamp_ns, f'always_{kind.name.lower()}'),
            self_assessment_sha256=calibrated.raw_assessment_sha256,
            calibrated_assessment_sha256=message_address(calibrated),
            policy_id=policy_id,
            flight_status=trace.rationale.flight_status,
            mission_status=trace.rationale.mission_status,
        )
        result = CycleResult(calibrated, rationale, emit_reference_action(rationale))
        changed.append(replace(trace, result=result))
    return changed


def raw_assessment(stamp_ns: int, level: SelfAssessmentLevel) -> BeliefSelfAssessment:
    """Return a raw assessment of overall `level` (the position block carries the level)."""
    known = AxisAssessment(SelfAssessmentLevel.KNOWN, 0.05, 'within_known_threshold')
    position = AxisAssessment(level, 0.05 * (1 + int(level)), 'within_known_threshold')
    return BeliefSelfAssessment(
        stamp_ns=stamp_ns, frame_id='map', overall_level=level, position=position,
        velocity=known, orientation=known, thresholds_sha256=THRESHOLDS_SHA256,
        assessor_id='covariance_threshold_v1',
    )


def edit(
    entries: Sequence[Entry],
    topic: str,
    stamp_ns: int,
    change: Callable[[dict[str, Any]], dict[str, Any] | None],
) -> list[Entry]:
    """Return the entries with `change` applied to the message of `topic` at `stamp_ns`.

    `change` returns the new message dict, or None to delete the message.
    """
    result = []
    for entry in entries:
        if entry.topic == topic and entry.stamp_ns == stamp_ns:
            changed = change(entry.msg)
            if changed is None:
                continue
            entry = replace(entry, msg=changed)
        result.append(entry)
    return result


def mcap_of(bag: Path) -> Path:
    """The one .mcap file of a bag written by write_bag."""
    return bag / f'{bag.name}.mcap'


@dataclass(frozen=True)
class ChunkSpan:
    """Where one chunk record lies in an MCAP file (byte offsets)."""

    start: int  #: the chunk record's opcode
    content: int  #: the first byte of the records inside the chunk
    end: int  #: one past the chunk record's last byte


def chunk_spans(mcap: Path) -> list[ChunkSpan]:
    """The chunks of an intact MCAP file, in file order (read from its summary)."""
    with mcap.open('rb') as stream:
        summary = make_reader(stream).get_summary()
    assert summary is not None
    spans = []
    for index in sorted(summary.chunk_indexes, key=lambda item: item.chunk_start_offset):
        start = index.chunk_start_offset
        # opcode, length, start/end time, uncompressed size, crc, compression, records length
        content = start + 1 + 8 + 8 + 8 + 8 + 4 + 4 + len(index.compression) + 8
        spans.append(ChunkSpan(start, content, start + index.chunk_length))
    return spans


def flip(path: Path, offset: int, mask: int = 0x01) -> None:
    """XOR the byte at `offset` of a file with `mask`."""
    data = bytearray(path.read_bytes())
    data[offset] ^= mask
    path.write_bytes(bytes(data))


def truncate(path: Path, size: int) -> None:
    """Keep only the first `size` bytes of a file."""
    path.write_bytes(path.read_bytes()[:size])


def killed_recorder_bag(
    path: Path, entries: Sequence[Entry], *, flushed: int, tail: int,
    chunk_size: int = 1 << 16, partial_bytes: int = 0,
) -> Path:
    """What a SIGKILLed recorder leaves: header + flushed chunks, no summary, no metadata.yaml.

    The first `flushed` entries are written and flush()ed (complete chunks on disk); `tail`
    more are written but never flushed (lost with the process; `chunk_size` is large enough
    that they do not fill a chunk). With `partial_bytes`, that
    many bytes of the next chunk are on disk too (the process died while writing it). The
    snapshot is copied to `path` (a new directory) before the writer is closed.
    """
    work = path.parent / f'{path.name}_recording'
    with GhostBagWriter(work, typestore=shared_typestore(), chunk_size=chunk_size) as writer:
        for entry in entries[:flushed]:
            writer.write(entry.topic, entry.type_name, entry.msg, entry.log_time_ns)
        writer.flush()
        for entry in entries[flushed:flushed + tail]:
            writer.write(entry.topic, entry.type_name, entry.msg, entry.log_time_ns)
        assert not (work / 'metadata.yaml').exists()
        path.mkdir()
        shutil.copy(mcap_of(work), path / f'{path.name}.mcap')
        if partial_bytes:
            writer.flush()
    if partial_bytes:
        # The next chunk as the closed file has it, cut after `partial_bytes` bytes.
        snapshot = path / f'{path.name}.mcap'
        kept = snapshot.stat().st_size
        closed = mcap_of(work).read_bytes()
        snapshot.write_bytes(closed[:kept + partial_bytes])
    shutil.rmtree(work)
    return path


#: Where the reference gate's outputs go (GateEmission.output_topic).
SETPOINT_TOPIC = '/fmu/in/trajectory_setpoint'
VEHICLE_COMMAND_TOPIC = '/fmu/in/vehicle_command'
#: The mission velocity a passed setpoint carries in the gate bags (NED, m/s).
MISSION_VELOCITY = (2.0, 0.0, -0.5)


@dataclass(frozen=True, slots=True)
class GateRecordView:
    """A gate record reduced to what the GATE-v1 judge reads (a ``GateRecordFacts``)."""

    gate: str
    stamp_ns: int
    action: int
    reason: str = ''
    mode: str = 'px4'
    output_topic: str = ''
    has_actuation: bool = False
    actuation_stamp_ns: int = 0
    rationale_sha256: str = ''
    decision_kind: int = 0
    command_kind: int = 0
    actuation_received_ns: int = 0
    timeout_s: float = 0.0
    velocity: tuple[float, ...] = (0.0, 0.0, 0.0)
    twist_linear: tuple[float, ...] = (0.0, 0.0, 0.0)
    twist_angular: tuple[float, ...] = (0.0, 0.0, 0.0)
    vehicle_command: int = 0


def gate_msg(record: GateRecordView) -> dict[str, Any]:
    """Return the complete GateEmission message dict of a gate record view."""
    def vector(values: Sequence[float]) -> dict[str, float]:
        return dict(zip('xyz', (float(value) for value in values), strict=True))

    return {
        'header': {'stamp': ns_to_stamp(record.stamp_ns),
                   'frame_id': 'ned' if record.mode == 'px4' else 'base_link'},
        'action': int(record.action),
        'reason': str(record.reason),
        'mode': record.mode,
        'output_topic': record.output_topic,
        'has_actuation': record.has_actuation,
        'actuation_stamp': ns_to_stamp(record.actuation_stamp_ns),
        'rationale_sha256': record.rationale_sha256,
        'decision_kind': int(record.decision_kind),
        'command_kind': int(record.command_kind),
        'actuation_received': ns_to_stamp(record.actuation_received_ns),
        'timeout_s': float(record.timeout_s),
        'position': [0.0, 0.0, -10.0],
        'velocity': [float(value) for value in record.velocity],
        'yaw': 0.0,
        'twist': {'linear': vector(record.twist_linear), 'angular': vector(record.twist_angular)},
        'vehicle_command': int(record.vehicle_command),
        'mode_asked': 0, 'mode_answer': 0, 'vehicle_mode': 0,
        'schema_version': 1,
    }


def gate_entry(record: GateRecordView) -> Entry:
    """Return a gate record as a bag entry on its gate's topic, logged when it was sent."""
    return Entry(record.gate, GATE[1], gate_msg(record), record.stamp_ns, record.stamp_ns)


def gate_records(
    traces: Iterable[CycleTrace],
    *,
    offsets_ns: Sequence[int] = (20_000_000, 60_000_000),
    received_after_ns: int = 10_000,
    timeout_s: float = 0.5,
    gate: str = GATE[0],
) -> list[GateRecordView]:
    """What a PX4-mode gate that follows ``ghost_core.gate`` records over the traced cycles.

    Each cycle's actuation reaches the gate `received_after_ns` after its stamp (after every
    message of the cycle in the bag); the mission sends a setpoint at each of `offsets_ns`
    after the stamp, and the gate passes it or holds. A LAND / RTL actuation also sends its
    vehicle command once, when it is received (the node's behaviour).
    """
    timeout_ns = round(timeout_s * 1e9)
    records: list[GateRecordView] = []
    commanded = 0
    for trace in traces:
        emission = trace.result.emission
        received = trace.stamp_ns + received_after_ns
        latest = LatestActuation(emission.decision.kind, emission.command.kind, received)
        cited = GateRecordView(
            gate=gate, stamp_ns=received, action=GateAction.HELD, output_topic=SETPOINT_TOPIC,
            has_actuation=True, actuation_stamp_ns=trace.stamp_ns,
            rationale_sha256=emission.rationale_sha256, decision_kind=emission.decision.kind,
            command_kind=emission.command.kind, actuation_received_ns=received,
            timeout_s=timeout_s)
        verdict = gate_verdict(latest, received, timeout_ns)
        wanted = verdict.vehicle_command if verdict.action is GateAction.VEHICLE_COMMAND else 0
        if wanted and wanted != commanded:
            records.append(replace(cited, action=GateAction.VEHICLE_COMMAND,
                                   reason=verdict.reason, output_topic=VEHICLE_COMMAND_TOPIC,
                                   vehicle_command=wanted))
        commanded = wanted
        for offset in offsets_ns:
            now = trace.stamp_ns + offset
            verdict = gate_verdict(latest, now, timeout_ns)
            passed = verdict.action is GateAction.PASSED
            records.append(replace(
                cited, stamp_ns=now, action=GateAction.PASSED if passed else GateAction.HELD,
                reason=verdict.reason, velocity=MISSION_VELOCITY if passed else (0.0, 0.0, 0.0)))
    return records


def merged(*streams: Iterable[Entry]) -> list[Entry]:
    """Return the entries of several streams in log-time order (stable: ties keep order)."""
    return sorted((entry for stream in streams for entry in stream),
                  key=lambda entry: entry.log_time_ns)
