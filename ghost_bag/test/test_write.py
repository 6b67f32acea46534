"""GhostBagWriter: rosbag2 MCAP bags from message dicts or CDR bytes, readable by others."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any
import zlib

from mcap.records import Chunk, Message
from mcap.stream_reader import StreamReader
import pytest
from rosbags.rosbag2 import Reader
from rosbags.typesys.store import Typestore

from ghost_bag.errors import BagWriteError
from ghost_bag.layout import MAX_CHUNK_SIZE
from ghost_bag.write import ghost_typestore, GhostBagWriter
from ghost_core.pipeline import CycleTrace
from ghost_core.scenarios import generate_scenario, run_scenario
from ghost_core.wire import ns_to_stamp, to_msg_dict

MSG_DIR = Path(__file__).resolve().parents[2] / 'ghost_interfaces' / 'msg'
RATIONALE = ('/decisions', 'ghost_interfaces/msg/DecisionRationale')
ACTUATION = ('/actuations', 'ghost_interfaces/msg/ActionEmission')
STATE = ('/state/nav', 'nav_msgs/msg/Odometry')


@pytest.fixture(scope='module')
def msg_dir() -> Path:
    """The ghost_interfaces/msg directory of this repository."""
    return MSG_DIR


@pytest.fixture(scope='module')
def typestore() -> Typestore:
    """ROS 2 Jazzy types plus the ghost_interfaces types (built once)."""
    return ghost_typestore(MSG_DIR)


@functools.cache
def scenario_traces(name: str) -> tuple[CycleTrace, ...]:
    """The named scenario run through the real agent (computed once)."""
    return run_scenario(generate_scenario(name, 0))


def odometry_dict(stamp_ns: int) -> dict[str, Any]:
    """A complete nav_msgs/Odometry message dict."""
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


def _chunks(mcap: Path) -> int:
    with mcap.open('rb') as handle:
        return sum(isinstance(record, Chunk)
                   for record in StreamReader(handle, emit_chunks=True).records)


def _payloads(mcap: Path) -> list[bytes]:
    with mcap.open('rb') as handle:
        return [bytes(record.data) for record in StreamReader(handle).records
                if isinstance(record, Message)]


def test_a_written_bag_is_a_rosbag2_bag_that_rosbags_reads_back(
    tmp_path: Path, msg_dir: Path,
) -> None:
    """The layout is rosbag2's (metadata.yaml + <name>.mcap) and every message is there."""
    trace = scenario_traces('smoke')[0]
    with GhostBagWriter(tmp_path / 'bag', msg_dir) as writer:
        writer.write(STATE[0], STATE[1], odometry_dict(trace.stamp_ns), 10)
        writer.write(*RATIONALE, to_msg_dict(trace.rationale), 20)
        writer.write(*ACTUATION, to_msg_dict(trace.emission), 30)
    assert sorted(p.name for p in (tmp_path / 'bag').iterdir()) == ['bag.mcap', 'metadata.yaml']
    with Reader(tmp_path / 'bag') as reader:
        topics = {c.topic: c.msgtype for c in reader.connections}
        assert topics == {STATE[0]: STATE[1], RATIONALE[0]: RATIONALE[1],
                          ACTUATION[0]: ACTUATION[1]}
        assert [timestamp for _, timestamp, _ in reader.messages()] == [10, 20, 30]


def test_dicts_and_cdr_bytes_give_the_same_messages(tmp_path: Path, typestore: Typestore) -> None:
    """A recorder may hand over serialised bytes; they are stored as they are.

    (That the verifier decodes them back to the message dict is checked in
    ghost_verify/test/test_bag.py: ghost_bag's tests do not use the auditor.)
    """
    trace = scenario_traces('smoke')[3]
    msg = to_msg_dict(trace.calibrated)
    with GhostBagWriter(tmp_path / 'dict', typestore=typestore) as writer:
        writer.write('/self_assessment/calibrated',
                     'ghost_interfaces/CalibratedSelfAssessment', msg, 5)
        data = writer.serialize('ghost_interfaces/msg/CalibratedSelfAssessment', msg)
    with GhostBagWriter(tmp_path / 'bytes', typestore=typestore) as writer:
        writer.write('/self_assessment/calibrated',
                     'ghost_interfaces/msg/CalibratedSelfAssessment', data, 5)
    assert _payloads(tmp_path / 'dict' / 'dict.mcap') == _payloads(
        tmp_path / 'bytes' / 'bytes.mcap') == [data]


def test_chunk_size_bounds_the_mcap_chunks(tmp_path: Path, typestore: Typestore) -> None:
    """The rosbags writer closes chunks past 1 MiB; a smaller chunk_size gives smaller ones."""
    traces = scenario_traces('smoke')
    for name, size in (('big', MAX_CHUNK_SIZE), ('small', 512)):
        with GhostBagWriter(tmp_path / name, typestore=typestore, chunk_size=size) as writer:
            for index, trace in enumerate(traces):
                writer.write(*ACTUATION, to_msg_dict(trace.emission), index)
    assert _chunks(tmp_path / 'big' / 'big.mcap') == 1
    assert _chunks(tmp_path / 'small' / 'small.mcap') >= len(traces) // 2
    with pytest.raises(ValueError, match='chunk_size'):
        GhostBagWriter(tmp_path / 'x', typestore=typestore, chunk_size=MAX_CHUNK_SIZE + 1)


@pytest.mark.parametrize(('change', 'match'), [
    (lambda m: {k: v for k, v in m.items() if k != 'policy_id'}, r"missing \['policy_id'\]"),
    (lambda m: {**m, 'extra': 1}, r"unknown \['extra'\]"),
    (lambda m: {**m, 'schema_version': '1'}, 'schema_version: expected an int'),
    (lambda m: {**m, 'decision': {**m['decision'], 'kind': True}}, 'decision.kind'),
    (lambda m: {**m, 'header': 'no'}, 'header: expected a message dict'),
    (lambda m: {**m, 'schema_version': -1}, 'cannot be serialised'),
])
def test_a_dict_that_does_not_fit_its_type_is_refused_naming_the_field(
    tmp_path: Path, typestore: Typestore, change: object, match: str,
) -> None:
    """Missing, unknown or mistyped fields raise BagWriteError with the field's path."""
    assert callable(change)
    msg = change(to_msg_dict(scenario_traces('smoke')[0].rationale))
    with GhostBagWriter(tmp_path / 'bag', typestore=typestore) as writer:
        with pytest.raises(BagWriteError, match=match):
            writer.write(*RATIONALE, msg, 1)


def test_types_and_topics_are_checked(tmp_path: Path, typestore: Typestore) -> None:
    """Unknown types, a second type on one topic, bad log times and reuse are refused."""
    rationale = to_msg_dict(scenario_traces('smoke')[0].rationale)
    with GhostBagWriter(tmp_path / 'bag', typestore=typestore) as writer:
        with pytest.raises(BagWriteError, match='unknown message type'):
            writer.write('/x', 'ghost_interfaces/msg/Nope', {}, 1)
        writer.write(*RATIONALE, rationale, 1)
        with pytest.raises(BagWriteError, match='already has type'):
            writer.write(RATIONALE[0], ACTUATION[1], b'', 2)
        with pytest.raises(BagWriteError, match='log_time_ns'):
            writer.write(*RATIONALE, rationale, -1)
    with pytest.raises(BagWriteError, match='not open'):
        writer.write(*RATIONALE, rationale, 3)
    with pytest.raises(BagWriteError, match='exists already'):
        GhostBagWriter(tmp_path / 'bag', typestore=typestore).open()
    with pytest.raises(BagWriteError, match='no .msg files'):
        GhostBagWriter(tmp_path / 'other', tmp_path)


def test_every_chunk_carries_the_crc_of_its_content_unless_turned_off(
    tmp_path: Path, typestore: Typestore,
) -> None:
    """GhostBagWriter fills in each chunk CRC, which rosbags leaves at 0 ("not computed").

    Readers that check CRCs (mcap with validate_crcs, rosbags) accept the bag; chunk_crc=False
    gives rosbags' own zeros. flush() (the recorder's) writes checked chunks too.
    """
    traces = scenario_traces('smoke')
    for crc in (True, False):
        path = tmp_path / f'bag_{crc}'
        with GhostBagWriter(path, typestore=typestore, chunk_size=1024,
                            chunk_crc=crc) as writer:
            for index, trace in enumerate(traces):
                writer.write(*RATIONALE, to_msg_dict(trace.rationale), index)
                if index == 4:
                    writer.flush()
        with (path / f'{path.name}.mcap').open('rb') as handle:
            chunks = [record for record in StreamReader(handle, emit_chunks=True).records
                      if isinstance(record, Chunk)]
        assert len(chunks) > 2
        crcs = [chunk.uncompressed_crc for chunk in chunks]
        assert crcs == ([zlib.crc32(chunk.data) for chunk in chunks] if crc else [0] * len(crcs))
        with (path / f'{path.name}.mcap').open('rb') as handle:
            assert sum(isinstance(record, Message) for record in
                       StreamReader(handle, validate_crcs=True).records) == len(traces)
        with Reader(path) as reader:
            assert len(list(reader.messages())) == len(traces)
