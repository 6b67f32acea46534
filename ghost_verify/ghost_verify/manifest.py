"""Checking a bag's signed run manifest (``manifest.json``): the auditor's half.

The format, its computation, signing and writing are ghost_bag.manifest's (the recorder
writes with it): import those names from there.

Checking (``check_manifest``): the file must be canonical JSON of this format, the signature
must verify with the given public key, every listed file must exist with its hash and size,
no unlisted file may be present, and every topic's type, count and chain recomputed from the
``.mcap`` files must equal the listed ones.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass
import os
from pathlib import Path
from typing import cast

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from ghost_bag.manifest import (
    bag_files,
    chains_from_mcap,
    file_digest,
    MANIFEST_FORMAT,
    manifest_json,
    MANIFEST_NAME,
    public_key_sha256,
    SIGNATURE_ALGORITHM,
    signed_bytes,
)
from ghost_core import bounded_json
from ghost_core.properties import JsonValue

__all__ = ['ManifestCheck', 'chains_from_mcap', 'check_manifest', 'manifest_dir']

def _mcap_order(path: Path) -> tuple[str, int]:
    # rosbag2 names split files <name>_<N>.mcap: read them in N order.
    stem, _, number = path.stem.rpartition('_')
    return (stem, int(number)) if number.isdigit() else (path.stem, -1)


def manifest_dir(bag: str | os.PathLike[str]) -> Path | None:
    """Return the directory whose manifest.json covers ``bag`` (None for a lone .mcap file)."""
    path = Path(bag)
    if path.is_dir():
        return path
    if path.name == 'metadata.yaml':
        return path.parent
    return None


@dataclass(frozen=True, slots=True)
class ManifestCheck:
    """What the manifest check found.

    `status`: ``none`` (no manifest.json), ``unchecked`` (no public key given),
    ``partial_unchecked`` (no public key, and the recording did not close),
    ``partial`` (recording did not close), ``unsigned`` (complete, but no signature),
    ``unreadable`` (not a canonical manifest), ``signed`` (checked: see `problems`).
    `ok` is False when a key was given and anything did not verify.
    """

    status: str
    key_given: bool
    problems: tuple[str, ...] = ()
    files_verified: int = 0
    messages_verified: int = 0
    signer_sha256: str = ''

    @property
    def ok(self) -> bool:
        """True unless a public key was given and the manifest does not fully verify."""
        if not self.key_given:
            return True
        return self.status == 'signed' and not self.problems

    def summary_lines(self) -> tuple[str, ...]:
        """Return the report lines, each starting with ``manifest:``."""
        if self.problems:
            return tuple(f'manifest: {problem}' for problem in self.problems)
        if self.status == 'none':
            return ('manifest: none (unsigned bag)',)
        if self.status == 'unchecked':
            return ('manifest: unchecked (no --public-key)',)
        if self.status == 'partial_unchecked':
            return ('manifest: partial (recording did not close: SIGKILL?) — not signed; '
                    'unchecked (no --public-key)',)
        return (f'manifest: signed, {self.files_verified} files and '
                f'{self.messages_verified} messages verified',)

    def to_json(self) -> dict[str, JsonValue]:
        """Return the check as the ``manifest`` object of the verify_all report."""
        return {'status': self.status, 'key_given': self.key_given, 'ok': self.ok,
                'problems': list(self.problems), 'files_verified': self.files_verified,
                'messages_verified': self.messages_verified,
                'signer_public_key_sha256': self.signer_sha256}


def _parse(text: str) -> tuple[dict[str, JsonValue] | None, str]:
    """Return the manifest object and '' or None and what is wrong with it."""
    try:
        document = bounded_json.loads(text)
    except ValueError as err:
        return None, f'{MANIFEST_NAME} is not JSON ({err})'
    if not isinstance(document, dict) or document.get('format') != MANIFEST_FORMAT:
        return None, f'{MANIFEST_NAME} is not a {MANIFEST_FORMAT} object'
    try:
        canonical = manifest_json(document)
    except ValueError:
        canonical = ''
    if canonical != text:
        return None, f'{MANIFEST_NAME} is not in canonical form (changed after signing?)'
    for field, kind in (('complete', bool), ('files', dict), ('topics', dict),
                        ('config', dict), ('software', dict)):
        if not isinstance(document.get(field), kind):
            return None, f'{MANIFEST_NAME}: field {field} missing or not a {kind.__name__}'
    return cast(dict[str, JsonValue], document), ''


def _signature_problem(document: Mapping[str, JsonValue], key: Ed25519PublicKey,
                       key_label: str) -> tuple[str, str]:
    """Return (problem or '', the signer hint of the manifest)."""
    signature = document['signature']
    if not isinstance(signature, dict) or signature.get('algorithm') != SIGNATURE_ALGORITHM:
        return 'signature is malformed (not an ed25519 signature object)', ''
    hint = signature.get('public_key_sha256')
    signer = hint if isinstance(hint, str) else ''
    value = signature.get('value')
    try:
        raw = base64.b64decode(value if isinstance(value, str) else '', validate=True)
        key.verify(raw, signed_bytes(document))
    except (InvalidSignature, binascii.Error, ValueError):
        given = public_key_sha256(key)
        which = (f' (signed with key sha256 {signer[:16]}…, {key_label} is {given[:16]}…)'
                 if signer and signer != given else '')
        return f'signature does not verify with {key_label}{which}', signer
    # The hint sits in the signature block, outside the signed bytes: a manifest whose hint
    # names another key has been altered since it was signed.
    given = public_key_sha256(key)
    if signer != given:
        return (f'signature verifies with {key_label}, but its public_key_sha256 names '
                f'{signer[:16] or "no key"}… instead of {given[:16]}… (altered after signing)',
                signer)
    return '', signer


def _file_problems(bag_dir: Path, listed: Mapping[str, JsonValue]) -> tuple[list[str], int]:
    problems: list[str] = []
    present = {p.name: p for p in bag_files(bag_dir)}
    verified = 0
    for name in sorted(listed):
        entry = listed[name]
        if name not in present:
            problems.append(f'file {name} listed but missing')
            continue
        if not isinstance(entry, dict):
            problems.append(f'file {name}: entry is malformed')
            continue
        try:
            found = file_digest(present[name])
        except OSError as err:
            problems.append(f'file {name} cannot be read: {err.strerror}')
            continue
        if entry.get('sha256') != found.sha256:
            size = entry.get('size')
            extra = f' (size {size} listed, {found.size} found)' if size != found.size else ''
            problems.append(f'file {name} sha256 differs{extra}')
        elif entry.get('size') != found.size:
            problems.append(f'file {name} size differs')
        else:
            verified += 1
    problems.extend(f'file {name} present but not listed'
                    for name in sorted(set(present) - set(listed)))
    return problems, verified


def _topic_problems(bag_dir: Path, listed: Mapping[str, JsonValue]) -> tuple[list[str], int]:
    mcaps = sorted((p for p in bag_files(bag_dir) if p.suffix == '.mcap'), key=_mcap_order)
    chains, problems = chains_from_mcap(mcaps)
    out = list(problems)
    verified = 0
    for topic in sorted(set(listed) | set(chains)):
        entry = listed.get(topic)
        chain = chains.get(topic)
        if not isinstance(entry, dict):
            out.append(f'topic {topic}: {chain.count if chain else 0} messages in the bag '
                       'but not listed' if entry is None else f'topic {topic}: malformed entry')
            continue
        count = entry.get('count')
        if chain is None:
            if count != 0:
                out.append(f'topic {topic}: listed ({count} messages) but not in the bag')
            continue
        if entry.get('type') != chain.type_name:
            out.append(f'topic {topic}: type differs ({entry.get("type")} listed, '
                       f'{chain.type_name} in the bag)')
        if count != chain.count:
            out.append(f'topic {topic}: count differs ({count} listed, {chain.count} read)')
        elif entry.get('chain_sha256') != chain.digest.hex():
            out.append(f'topic {topic}: chain differs (one of its {chain.count} messages or '
                       'their log times changed)')
        else:
            verified += chain.count
    return out, verified


def check_manifest(bag: str | os.PathLike[str], public_key: Ed25519PublicKey | None,
                   key_label: str = 'the given key') -> ManifestCheck:
    """Check a bag's manifest with a public key (``None``: only say whether there is one).

    With a key, every failure is listed in `problems`: a missing, partial, unsigned or
    non-canonical manifest, a signature that does not verify, a file missing, added or
    changed, a topic whose type, count or chain differs from the recomputed one.
    """
    key_given = public_key is not None
    bag_dir = manifest_dir(bag)
    path = bag_dir / MANIFEST_NAME if bag_dir is not None else None
    if path is None or not path.is_file():
        if not key_given:
            return ManifestCheck('none', key_given)
        return ManifestCheck('none', key_given, (
            f'none (unsigned bag: no {MANIFEST_NAME}) — nothing verifies with {key_label}',))
    assert bag_dir is not None
    if public_key is None:
        # Without a key nothing is verified, but a recording that never closed says so.
        try:
            document, _ = _parse(path.read_bytes().decode('utf-8'))
        except (OSError, UnicodeDecodeError):
            document = None
        if document is not None and document.get('complete') is not True:
            return ManifestCheck('partial_unchecked', key_given)
        return ManifestCheck('unchecked', key_given)
    try:
        text = path.read_bytes().decode('utf-8')
    except UnicodeDecodeError:
        return ManifestCheck('unreadable', key_given, (f'{MANIFEST_NAME} is not UTF-8',))
    except OSError as err:
        return ManifestCheck('unreadable', key_given,
                             (f'{MANIFEST_NAME} cannot be read: {err.strerror}',))
    document, problem = _parse(text)
    if document is None:
        return ManifestCheck('unreadable', key_given, (problem,))
    if document['complete'] is not True:
        return ManifestCheck('partial', key_given, (
            'partial (recording did not close: SIGKILL?) — not signed',))
    if 'signature' not in document:
        return ManifestCheck('unsigned', key_given, (
            'complete but not signed (recorded without a signing key)',))
    problems: list[str] = []
    signature_problem, signer = _signature_problem(document, public_key, key_label)
    if signature_problem:
        problems.append(signature_problem)
    files = document['files']
    topics = document['topics']
    assert isinstance(files, dict) and isinstance(topics, dict)
    file_problems, files_verified = _file_problems(bag_dir, files)
    topic_problems, messages_verified = _topic_problems(bag_dir, topics)
    problems += file_problems + topic_problems
    return ManifestCheck('signed', key_given, tuple(problems), files_verified,
                         messages_verified, signer)
