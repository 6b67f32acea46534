"""Signed runs with the real processes: the recorder's manifest, seen by verify_all --public-key.

One signed smoke run (10 cycles, its own ROS domain) is recorded and then tampered with in
copies: one CDR byte of one message of each topic, with the chunk CRC recomputed so that the
MCAP stays valid and only the manifest can tell. A second run has its recorder SIGKILLed.
"""

import json
from pathlib import Path
import shutil
import signal
import struct
import subprocess
import sys
import time
import zlib

from cryptography.hazmat.primitives import serialization
from graph_runs import GHOST_RUN
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory
import pytest
import yaml

from ghost.bringup import closed_loop_graph, GraphOptions
from ghost.launcher import GraphProcesses
from ghost_bag.manifest import load_private_key, MANIFEST_NAME
from ghost_core.graph import (
    DIAGNOSTICS_TOPIC,
    DIAGNOSTICS_TYPE,
    GHOST_TOPICS,
    INPUT_TOPICS,
    LIFECYCLE_TOPIC,
    VEHICLE_STATUS_TOPIC,
)

# A module-scoped ghost_run on a domain of its own (module_ros_env); the others: ros_env.
pytestmark = pytest.mark.dds

CONFIG = Path(__file__).resolve().parents[2] / 'config'
VERIFY = [sys.executable, '-m', 'ghost_verify']
TOPICS = (*INPUT_TOPICS, *GHOST_TOPICS)
_MESSAGE_OPCODE = 0x05
_CHUNK_CRC_OFFSET = 33  # opcode, length, start/end time, uncompressed size


def _keygen(prefix: Path) -> None:
    done = subprocess.run([sys.executable, '-m', 'ghost_verify.keygen', '--output', str(prefix)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def _verify(bag: Path, key: Path | None) -> subprocess.CompletedProcess[str]:
    argv = [*VERIFY, str(bag)] + (['--public-key', str(key)] if key else [])
    return subprocess.run(argv, capture_output=True, text=True, check=False, timeout=60)


def _manifest_lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in done.stdout.splitlines() if line.startswith('manifest:')]


@pytest.fixture(scope='module')
def signed_run(tmp_path_factory: pytest.TempPathFactory,
               module_ros_env: dict[str, str]) -> dict[str, Path]:
    """A signed smoke run through ghost_run --signing-key."""
    root = tmp_path_factory.mktemp('signed_run')
    _keygen(root / 'key')
    _keygen(root / 'other')
    run_dir = root / 'run'
    done = subprocess.run([*GHOST_RUN, '--scenario', 'smoke', '--run-dir', str(run_dir),
                           '--signing-key', str(root / 'key')], env=module_ros_env, text=True,
                          capture_output=True, timeout=150, check=False)
    assert done.returncode == 0, f'stdout:\n{done.stdout}\nstderr:\n{done.stderr}'
    # ghost_run checks the signature itself, with the public half of the key it was given.
    assert 'manifest: signed, 2 files and ' in done.stdout, done.stdout
    assert (run_dir / 'signing_key.pub').read_bytes() == (root / 'key.pub').read_bytes()
    return {'run': run_dir, 'bag': run_dir / 'bag', 'key': root / 'key',
            'public': root / 'key.pub', 'other_public': root / 'other.pub'}


def flip_message_byte(mcap: Path, topic: str, nth: int) -> None:
    """XOR one CDR byte of the `nth` message of `topic` and recompute its chunk's CRC."""
    with mcap.open('rb') as stream:
        summary = make_reader(stream).get_summary()
    assert summary is not None
    channels = {cid for cid, channel in summary.channels.items() if channel.topic == topic}
    data = bytearray(mcap.read_bytes())
    seen = 0
    for index in sorted(summary.chunk_indexes, key=lambda item: item.chunk_start_offset):
        assert index.compression == ''
        start = index.chunk_start_offset
        content = start + 1 + 8 + 8 + 8 + 8 + 4 + 4 + len(index.compression) + 8
        end = start + index.chunk_length
        pos = content
        while pos < end:
            opcode = data[pos]
            length = int.from_bytes(data[pos + 1:pos + 9], 'little')
            body = pos + 9
            if opcode == _MESSAGE_OPCODE and int.from_bytes(
                    data[body:body + 2], 'little') in channels:
                if seen == nth:
                    payload = body + 2 + 4 + 8 + 8  # channel, sequence, log/publish time
                    size = length - (payload - body)
                    data[payload + 4 + (size - 4) // 2] ^= 0x10  # past the CDR header
                    crc = zlib.crc32(data[content:end])
                    data[start + _CHUNK_CRC_OFFSET:start + _CHUNK_CRC_OFFSET + 4] = struct.pack(
                        '<I', crc)
                    mcap.write_bytes(bytes(data))
                    return
                seen += 1
            pos = body + length
    raise AssertionError(f'{topic} has no message {nth}')


def test_signed_smoke_run_verifies_with_its_key(signed_run) -> None:
    done = _verify(signed_run['bag'], signed_run['public'])
    assert done.returncode == 0, done.stdout + done.stderr
    manifest = json.loads((signed_run['bag'] / MANIFEST_NAME).read_text())
    # 90 of the cycles, 6 start configurations, each node's ready and stopping records (and
    # the recorder's stopping); /diagnostics at 1 Hz, as many as the run lasted seconds.
    diagnostics = manifest['topics'][DIAGNOSTICS_TOPIC]['count']
    lifecycle = manifest['topics'][LIFECYCLE_TOPIC]['count']
    assert lifecycle == 2 * 6 + 1
    assert done.stdout.splitlines()[0] == (
        f'manifest: signed, 2 files and {90 + 6 + lifecycle + diagnostics} messages verified')
    assert manifest['complete'] is True
    assert set(manifest['topics']) == {*TOPICS, VEHICLE_STATUS_TOPIC, DIAGNOSTICS_TOPIC,
                                       '/ghost/configuration', LIFECYCLE_TOPIC}
    assert manifest['config']['loop']['min_outcomes'] == 4
    assert {'ghost', 'python', 'rclpy', 'rosbags', 'mcap'} <= set(manifest['software'])
    unchecked = _verify(signed_run['bag'], None)
    assert unchecked.returncode == 0
    assert _manifest_lines(unchecked) == ['manifest: unchecked (no --public-key)']


def test_the_recorder_records_diagnostics_and_the_bag_still_verifies(signed_run) -> None:
    """/diagnostics is recorded by default, decodable, and verify_all still holds on the bag.

    It is what Foxglove's diagnostics panel shows after the flight: this run's statuses.
    """
    metadata = yaml.safe_load((signed_run['bag'] / 'metadata.yaml').read_text())
    topics = {entry['topic_metadata']['name']: entry for entry in
              metadata['rosbag2_bagfile_information']['topics_with_message_count']}
    assert topics[DIAGNOSTICS_TOPIC]['topic_metadata']['type'] == DIAGNOSTICS_TYPE
    assert topics[DIAGNOSTICS_TOPIC]['message_count'] >= 1
    (mcap,) = signed_run['bag'].glob('*.mcap')
    with mcap.open('rb') as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        names = {status.name for _, _, _, msg in reader.iter_decoded_messages(
            topics=[DIAGNOSTICS_TOPIC]) for status in msg.status}
    assert 'ghost: BAUD-v1' in names and 'ghost: action_emitter' in names, names
    done = _verify(signed_run['bag'], None)
    assert done.returncode == 0 and 'chain: 10/10 verified' in done.stdout, done.stdout


@pytest.mark.parametrize('topic', TOPICS)
def test_one_byte_of_each_topic_is_caught_by_the_manifest(
    signed_run, tmp_path: Path, topic: str,
) -> None:
    bag = shutil.copytree(signed_run['bag'], tmp_path / 'bag')
    (mcap,) = bag.glob('*.mcap')
    flip_message_byte(mcap, topic, nth=4)
    done = _verify(bag, signed_run['public'])
    assert done.returncode == 1, done.stdout
    lines = _manifest_lines(done)
    assert f'manifest: file {mcap.name} sha256 differs' in lines
    assert [line for line in lines if 'topic' in line] == [
        f'manifest: topic {topic}: chain differs (one of its 10 messages or their log times '
        'changed)']
    if topic in INPUT_TOPICS:
        # Nothing else looks at the inputs' bytes: without the key this verifies.
        assert _verify(bag, None).returncode == 0


def test_a_deleted_or_added_file_and_a_wrong_key_are_caught(signed_run, tmp_path: Path) -> None:
    deleted = shutil.copytree(signed_run['bag'], tmp_path / 'deleted')
    (deleted / 'metadata.yaml').unlink()
    done = _verify(deleted, signed_run['public'])
    assert done.returncode == 1
    assert _manifest_lines(done) == ['manifest: file metadata.yaml listed but missing']
    added = shutil.copytree(signed_run['bag'], tmp_path / 'added')
    shutil.copy(added / 'metadata.yaml', added / 'extra.yaml')
    done = _verify(added, signed_run['public'])
    assert done.returncode == 1
    assert _manifest_lines(done) == ['manifest: file extra.yaml present but not listed']
    done = _verify(signed_run['bag'], signed_run['other_public'])
    assert done.returncode == 1
    assert _manifest_lines(done)[0].startswith(
        f'manifest: signature does not verify with {signed_run["other_public"]}')


def test_private_key_never_appears_in_the_run_folder(signed_run) -> None:
    """Neither the PEM, nor its base64 body, nor the raw 32-byte key is in any file."""
    pem = signed_run['key'].read_bytes()
    body = b''.join(line for line in pem.splitlines() if not line.startswith(b'-----'))
    raw = load_private_key(signed_run['key']).private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
        serialization.NoEncryption())
    files = [p for p in signed_run['run'].rglob('*') if p.is_file()]
    assert any(p.name == MANIFEST_NAME for p in files) and any(p.suffix == '.log' for p in files)
    for path in files:
        data = path.read_bytes()
        for secret in (pem, body, raw, raw.hex().encode()):
            assert secret not in data, f'{path} holds the private key'


def test_sigkilled_recorder_leaves_a_partial_unsigned_manifest(tmp_path: Path,
                                                              ros_env) -> None:
    _keygen(tmp_path / 'key')
    bag = tmp_path / 'bag'
    specs = closed_loop_graph(CONFIG, GraphOptions(scenario='nominal', bag_path=str(bag),
        overrides={'recorder': {'signing_key': str(tmp_path / 'key')}}))
    graph = GraphProcesses(specs, tmp_path / 'logs', ros_env)
    graph.start()
    try:
        deadline = time.monotonic() + 60
        recorded = 0
        while time.monotonic() < deadline and recorded < 20:
            time.sleep(0.2)
            try:
                topics = json.loads((bag / MANIFEST_NAME).read_text())['topics']
            except (OSError, ValueError):
                continue
            recorded = sum(entry['count'] for entry in topics.values())
        assert recorded >= 20, 'the recorder wrote no partial manifest'
        graph.kill_node('recorder', signal.SIGKILL)
    finally:
        graph.kill()
    manifest = json.loads((bag / MANIFEST_NAME).read_text())
    assert manifest['complete'] is False and 'signature' not in manifest
    assert manifest['files'] == {}
    done = _verify(bag, tmp_path / 'key.pub')
    assert done.returncode == 1
    assert done.stdout.splitlines()[0] == (
        'manifest: partial (recording did not close: SIGKILL?) — not signed')
    assert _manifest_lines(done) == [
        'manifest: partial (recording did not close: SIGKILL?) — not signed']
    # Without a key too, the report says that the recording did not close.
    unchecked = _verify(bag, None)
    assert _manifest_lines(unchecked) == [
        'manifest: partial (recording did not close: SIGKILL?) — not signed; '
        'unchecked (no --public-key)']


def test_a_bad_signing_key_fails_start_up_in_one_line(tmp_path: Path, ros_env) -> None:
    (tmp_path / 'bad.pem').write_text('not a key\n')
    for key in (tmp_path / 'missing.pem', tmp_path / 'bad.pem'):
        done = subprocess.run(
            [sys.executable, '-c', 'from ghost_nodes.nodes.recorder import main; main()',
             '--ros-args', '-p', f'output:={tmp_path / "bag"}', '-p', f'signing_key:={key}'],
            env=ros_env, capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith('error: parameter signing_key: ')
        assert done.stderr.count('\n') == 1 and 'Traceback' not in done.stderr
        assert not (tmp_path / 'bag').exists()
