"""The signed run manifest: its chains, its signature and what verify_all --public-key catches.

Bags are written here the way the recorder writes them (GhostBagWriter with CDR bytes, the
manifest updated message by message, signed after close); tampered copies are rewritten
with valid MCAP framing (chunk CRCs recomputed by the writer), so only the manifest can
catch them.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
from pathlib import Path
import shutil
import stat

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ghost_verify_test.bags import Entry, shared_typestore
from ghost_verify_test.run_bags import run_messages, scenario_inputs
from hypothesis import given, HealthCheck, settings
from hypothesis import strategies as st
import pytest

from ghost_bag.manifest import (
    bag_file_digests,
    load_private_key,
    load_public_key,
    manifest_json,
    MANIFEST_NAME,
    ManifestBuilder,
    ManifestError,
    sign_manifest,
    software_versions,
    TopicChain,
    write_manifest,
)
from ghost_bag.write import GhostBagWriter
from ghost_core.cli import ExitCode
from ghost_core.scenarios import generate_scenario
from ghost_verify import cli
from ghost_verify.keygen import main as keygen
from ghost_verify.manifest import chains_from_mcap, check_manifest

#: The run configuration of the smoke scenario's messages, as Ghost's recorder records it.
CONFIG = json.loads(json.dumps(
    generate_scenario('smoke').parameters.pipeline_config().to_dict()))
def smoke_entries() -> list[Entry]:
    """The smoke scenario's run on every topic, its real inputs included (as recorded).

    Real inputs, so that verify_all's re-derivation from them holds too.
    """
    scenario = generate_scenario('smoke')
    written, _ = run_messages(scenario_inputs(scenario), scenario.parameters.pipeline_config())
    return [Entry(item.topic, item.type_name, item.msg, item.log_time_ns, item.stamp_ns or 0)
            for item in written]


def cdr_messages(entries: list[Entry]) -> list[tuple[str, str, bytes, int]]:
    """(topic, type, CDR bytes, log time) of each entry, as a recorder receives them."""
    # Serialising needs no open bag: the writer is never opened.
    writer = GhostBagWriter(Path('/nonexistent/unused'), typestore=shared_typestore())
    return [(e.topic, e.type_name, writer.serialize(e.type_name, e.msg), e.log_time_ns)
            for e in entries]


def record(bag: Path, messages: list[tuple[str, str, bytes, int]],
           key: Ed25519PrivateKey | None, *, chunk_size: int = 4096) -> Path:
    """Write a bag and its manifest exactly as the recorder does; return the bag."""
    builder = ManifestBuilder(CONFIG, software_versions())
    with GhostBagWriter(bag, typestore=shared_typestore(), chunk_size=chunk_size) as writer:
        for topic, type_name, data, log_time_ns in messages:
            writer.write(topic, type_name, data, log_time_ns)
            builder.add(topic, type_name, log_time_ns, data)
        write_manifest(bag, builder.document())  # the partial one of a flush
    document = builder.document(bag_file_digests(bag))
    if key is not None:
        document = sign_manifest(document, key)
    write_manifest(bag, document)
    return bag


@pytest.fixture(scope='module')
def messages() -> list[tuple[str, str, bytes, int]]:
    return cdr_messages(smoke_entries())


@pytest.fixture(scope='module')
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp('keys')
    for name in ('ghost', 'other'):
        assert keygen(['--output', str(folder / name)]) == 0
    return {'private': folder / 'ghost', 'public': folder / 'ghost.pub',
            'other_private': folder / 'other', 'other_public': folder / 'other.pub'}


@pytest.fixture(scope='module')
def signed(tmp_path_factory: pytest.TempPathFactory, messages, keys) -> Path:
    folder = tmp_path_factory.mktemp('signed')
    return record(folder / 'bag', messages, load_private_key(keys['private']))


def verify(argv: list[str]) -> tuple[int, str]:
    """Run verify_all in-process; return its exit code and stdout + stderr."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = cli.verify_all_main(argv)
    return code, out.getvalue()


def copy_bag(bag: Path, target: Path) -> Path:
    shutil.copytree(bag, target)
    return target


def manifest_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith('manifest:')]


def test_chain_is_the_documented_running_hash() -> None:
    """h_0 = H(b'ghost-manifest-v1' + topic); h_i = H(h_(i-1) || u64be(log time) || H(data))."""
    chain = TopicChain('/decisions', 'ghost_interfaces/msg/DecisionRationale')
    expected = hashlib.sha256(b'ghost-manifest-v1' + b'/decisions').digest()
    assert chain.to_json()['chain_sha256'] == expected.hex()
    for log_time_ns, data in ((5, b'abc'), (2**40 + 7, b''), (0, b'\x00' * 9)):
        chain.update(log_time_ns, data)
        expected = hashlib.sha256(expected + log_time_ns.to_bytes(8, 'big')
                                  + hashlib.sha256(data).digest()).digest()
    assert chain.to_json() == {'type': 'ghost_interfaces/msg/DecisionRationale', 'count': 3,
                               'chain_sha256': expected.hex()}


def test_write_order_is_file_order(tmp_path: Path, messages) -> None:
    """The chains folded while writing equal the chains read back from the MCAP file.

    Tiny chunks and interleaved topics: the reader sees the messages in the order written.
    """
    bag = record(tmp_path / 'bag', messages, None, chunk_size=200)
    written = json.loads((bag / MANIFEST_NAME).read_text())['topics']
    chains, problems = chains_from_mcap(sorted(bag.glob('*.mcap')))
    assert problems == ()
    assert {t: c.to_json() for t, c in chains.items()} == written
    assert len(written) == 8 and sum(t['count'] for t in written.values()) == len(messages)


def test_manifest_is_canonical_and_holds_files_topics_config_software(signed: Path) -> None:
    text = (signed / MANIFEST_NAME).read_text(encoding='utf-8')
    document = json.loads(text)
    assert text == manifest_json(document)
    assert document['format'] == 'ghost_run_manifest_v1' and document['complete'] is True
    assert sorted(document['files']) == ['bag.mcap', 'metadata.yaml']
    assert document['files']['bag.mcap']['size'] == (signed / 'bag.mcap').stat().st_size
    assert {'/state/nav', '/observations', '/prediction_outcomes'} <= set(document['topics'])
    assert document['config'] == CONFIG
    assert {'ghost', 'python', 'rosbags', 'mcap', 'cryptography'} <= set(document['software'])
    assert document['signature']['algorithm'] == 'ed25519'


def test_signed_bag_verifies_with_its_key(signed: Path, keys, messages) -> None:
    code, out = verify([str(signed), '--public-key', str(keys['public'])])
    assert code == 0, out
    assert out.splitlines()[0] == (
        f'manifest: signed, 2 files and {len(messages)} messages verified')


def test_without_a_key_the_report_says_unchecked_or_none(
    signed: Path, tmp_path: Path, messages,
) -> None:
    code, out = verify([str(signed)])
    assert code == 0 and manifest_lines(out) == ['manifest: unchecked (no --public-key)']
    plain = tmp_path / 'plain'
    with GhostBagWriter(plain, typestore=shared_typestore()) as writer:
        for topic, type_name, data, log_time_ns in messages:
            writer.write(topic, type_name, data, log_time_ns)
    code, out = verify([str(plain)])
    assert code == 0 and manifest_lines(out) == ['manifest: none (unsigned bag)']
    code, out = verify([str(plain), '--public-key', '/nonexistent.pub'])
    assert code == ExitCode.USAGE and out.count('\n') == 1 and '--public-key' in out


@pytest.mark.parametrize('topic', [
    '/state/nav', '/observations', '/self_assessment', '/predictions', '/prediction_outcomes',
    '/self_assessment/calibrated', '/decisions', '/actuations'])
def test_one_changed_byte_of_any_topic_is_caught(
    tmp_path: Path, signed: Path, keys, messages, topic: str,
) -> None:
    """A bag rewritten with one CDR byte flipped (valid MCAP, valid CRCs) fails the manifest."""
    indices = [i for i, m in enumerate(messages) if m[0] == topic]
    index = indices[len(indices) // 2]
    name, type_name, data, log_time_ns = messages[index]
    changed = bytearray(data)
    changed[len(changed) // 2] ^= 0x10
    tampered = list(messages)
    tampered[index] = (name, type_name, bytes(changed), log_time_ns)
    bag = tmp_path / 'bag'
    with GhostBagWriter(bag, typestore=shared_typestore(), chunk_size=4096) as writer:
        for message in tampered:
            writer.write(*message)
    shutil.copy(signed / MANIFEST_NAME, bag / MANIFEST_NAME)
    code, out = verify([str(bag), '--public-key', str(keys['public'])])
    assert code == ExitCode.VIOLATED
    lines = manifest_lines(out)
    assert 'manifest: file bag.mcap sha256 differs' in lines
    assert [line for line in lines if 'topic' in line] == [
        f'manifest: topic {topic}: chain differs (one of its {len(indices)} messages or their '
        'log times changed)']


def test_a_deleted_or_an_added_file_is_caught(tmp_path: Path, signed: Path, keys) -> None:
    deleted = copy_bag(signed, tmp_path / 'deleted')
    (deleted / 'metadata.yaml').unlink()
    code, out = verify([str(deleted), '--public-key', str(keys['public'])])
    assert code == ExitCode.VIOLATED
    assert manifest_lines(out) == ['manifest: file metadata.yaml listed but missing']
    added = copy_bag(signed, tmp_path / 'added')
    (added / 'notes.txt').write_text('hello\n')
    code, out = verify([str(added), '--public-key', str(keys['public'])])
    assert code == ExitCode.VIOLATED
    assert manifest_lines(out) == ['manifest: file notes.txt present but not listed']
    gone = copy_bag(signed, tmp_path / 'gone')
    (gone / 'bag.mcap').unlink()
    code, out = verify([str(gone), '--public-key', str(keys['public'])])
    assert code == ExitCode.VIOLATED and out.startswith(
        'manifest: file bag.mcap listed but missing\n')


def test_consistent_forgery_resigned_with_another_key_is_caught(
    tmp_path: Path, keys, messages,
) -> None:
    """Every hash of the forged manifest matches its bag; only the signature gives it away."""
    index = next(i for i, m in enumerate(messages) if m[0] == '/actuations')
    topic, type_name, data, log_time_ns = messages[index]
    forged = list(messages)
    forged[index] = (topic, type_name, data[:-1] + bytes([data[-1] ^ 1]), log_time_ns)
    bag = record(tmp_path / 'bag', forged, load_private_key(keys['other_private']))
    code, out = verify([str(bag), '--public-key', str(keys['public'])])
    assert code == ExitCode.VIOLATED
    (line,) = manifest_lines(out)
    assert line.startswith(f'manifest: signature does not verify with {keys["public"]} '
                           '(signed with key sha256 ')
    assert verify([str(bag), '--public-key', str(keys['other_public'])])[0] in (0, 1)
    check = check_manifest(bag, load_public_key(keys['other_public']))
    assert check.ok, check.problems


def test_a_wrong_key_is_caught(signed: Path, keys) -> None:
    code, out = verify([str(signed), '--public-key', str(keys['other_public'])])
    assert code == ExitCode.VIOLATED
    assert manifest_lines(out)[0].startswith(
        f'manifest: signature does not verify with {keys["other_public"]}')
    code, out = verify([str(signed), '--public-key', str(keys['private'])])
    assert code == ExitCode.USAGE and 'not a PEM public key' in out


def test_partial_or_unsigned_manifest_is_named(tmp_path: Path, signed: Path, keys) -> None:
    partial = copy_bag(signed, tmp_path / 'partial')
    document = json.loads((partial / MANIFEST_NAME).read_text())
    write_manifest(partial, {**{k: v for k, v in document.items() if k != 'signature'},
                             'complete': False, 'files': {}})
    code, out = verify([str(partial), '--public-key', str(keys['public'])])
    assert code == ExitCode.VIOLATED
    assert manifest_lines(out) == [
        'manifest: partial (recording did not close: SIGKILL?) — not signed']
    unsigned = copy_bag(signed, tmp_path / 'unsigned')
    write_manifest(unsigned, {k: v for k, v in document.items() if k != 'signature'})
    code, out = verify([str(unsigned), '--public-key', str(keys['public'])])
    assert code == ExitCode.VIOLATED
    assert manifest_lines(out) == [
        'manifest: complete but not signed (recorded without a signing key)']


def test_a_reformatted_manifest_is_not_canonical(tmp_path: Path, signed: Path, keys) -> None:
    """Whitespace is covered too: only the canonical bytes of a signed manifest verify."""
    bag = copy_bag(signed, tmp_path / 'bag')
    path = bag / MANIFEST_NAME
    path.write_text(path.read_text().replace('\n  "complete"', '\n\t"complete"', 1))
    code, out = verify([str(bag), '--public-key', str(keys['public'])])
    assert code == ExitCode.VIOLATED
    assert manifest_lines(out) == [
        'manifest: manifest.json is not in canonical form (changed after signing?)']


def test_json_report_has_a_manifest_object(tmp_path: Path, signed: Path, keys) -> None:
    target = tmp_path / 'report.json'
    code, _ = verify([str(signed), '--public-key', str(keys['public']), '--json', str(target)])
    assert code == 0
    document = json.loads(target.read_text())
    assert document['manifest']['status'] == 'signed' and document['manifest']['ok'] is True
    assert document['manifest']['problems'] == [] and document['holds'] is True


def test_keygen_writes_a_private_key_only_its_owner_reads(tmp_path: Path) -> None:
    prefix = tmp_path / 'k'
    assert keygen(['--output', str(prefix)]) == 0
    assert stat.S_IMODE(os.stat(prefix).st_mode) == 0o600
    key = load_private_key(prefix)
    public = load_public_key(f'{prefix}.pub')
    assert key.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw) == public.public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    before = prefix.read_bytes()
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert keygen(['--output', str(prefix)]) == 2
    assert err.getvalue().count('\n') == 1 and 'refusing to overwrite' in err.getvalue()
    assert prefix.read_bytes() == before
    (tmp_path / 'bad').write_text('not a key\n')
    with pytest.raises(ManifestError, match='not an unencrypted PEM private key'):
        load_private_key(tmp_path / 'bad')
    with pytest.raises(ManifestError, match='cannot be read'):
        load_private_key(tmp_path / 'missing')
    # A missing folder is created, readable by its owner only.
    assert keygen(['--output', str(tmp_path / 'keys' / 'ghost')]) == 0
    assert stat.S_IMODE(os.stat(tmp_path / 'keys').st_mode) == 0o700
    assert (tmp_path / 'keys' / 'ghost.pub').is_file()


@settings(max_examples=50, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flips=st.lists(st.tuples(st.sampled_from(['bag.mcap', 'metadata.yaml', MANIFEST_NAME]),
                                st.floats(0.0, 1.0, exclude_max=True),
                                st.integers(1, 255)), min_size=1, max_size=3))
def test_flipped_bytes_anywhere_never_verify(
    tmp_path_factory: pytest.TempPathFactory, signed: Path, keys,
    flips: list[tuple[str, float, int]],
) -> None:
    """verify_all --public-key exits 0 only for a bag byte-identical to the signed one."""
    bag = copy_bag(signed, tmp_path_factory.mktemp('flip') / 'bag')
    for name, where, mask in flips:
        path = bag / name
        data = bytearray(path.read_bytes())
        data[int(where * len(data))] ^= mask
        path.write_bytes(bytes(data))
    identical = all((bag / n).read_bytes() == (signed / n).read_bytes()
                    for n in ('bag.mcap', 'metadata.yaml', MANIFEST_NAME))
    code, out = verify([str(bag), '--public-key', str(keys['public'])])
    assert (code == 0) == identical, out
    if not identical:
        assert code != 0 and manifest_lines(out), out


def test_a_signer_hint_altered_after_signing_does_not_verify(
    tmp_path: Path, signed: Path, keys,
) -> None:
    """The signature block's public_key_sha256 is outside the signed bytes: it is checked too.

    Found by test_flipped_bytes_anywhere_never_verify: one bit flipped in the hint ('b' to 'c')
    verified, because the signature itself still did.
    """
    bag = copy_bag(signed, tmp_path / 'bag')
    path = bag / MANIFEST_NAME
    text = path.read_text()
    hint = json.loads(text)['signature']['public_key_sha256']
    altered = ('0' if hint[0] != '0' else '1') + hint[1:]
    path.write_text(text.replace(hint, altered))
    code, out = verify([str(bag), '--public-key', str(keys['public'])])
    assert code != 0, out
    assert 'altered after signing' in out, out
