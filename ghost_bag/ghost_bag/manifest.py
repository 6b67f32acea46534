"""The signed run manifest of a bag: its format, its computation, signing and writing.

The recorder writes ``manifest.json`` beside the bag's files (in the rosbag2 directory).
It is canonical JSON (``sort_keys``, indent 2, UTF-8 without ASCII escapes, one trailing
newline; ``manifest_json``) holding one object::

    {
      "format": "ghost_run_manifest_v1",
      "complete": true,            # false: written while recording (never signed)
      "files": {"<name>": {"sha256": "<hex>", "size": <bytes>}, ...},
      "topics": {"<topic>": {"type": "pkg/msg/Type", "count": <n>,
                             "chain_sha256": "<hex>"}, ...},
      "config": {...},             # the configuration Ghost ran with (recorder run_config)
      "software": {"ghost": "<version>", "python": "<version>", ...},
      "signature": {"algorithm": "ed25519", "public_key_sha256": "<hex>",
                    "value": "<base64>"}
    }

``files`` lists every regular file of the bag directory except ``manifest.json`` itself
(the ``.mcap`` files and ``metadata.yaml``), by name, with the lowercase hex SHA-256 and
the size of its bytes once the bag is closed. A partial manifest (``"complete": false``,
written at every flush while recording) has ``"files": {}`` and no signature.

``topics`` covers every recorded message of every topic, the inputs (``/state/nav``,
``/observations``) and the outcomes like every ghost topic. The chain of a topic is a
running SHA-256 over its messages in record order (the order of the ``.mcap`` files, then
the order of the Message records in each file)::

    h_0 = SHA-256(b'ghost-manifest-v1' + topic.encode('utf-8'))
    h_i = SHA-256(h_(i-1) + log_time_ns.to_bytes(8, 'big') + SHA-256(data_i))

where ``h`` are the 32-byte digests (not hex), ``log_time_ns`` is the message's MCAP log
time (unsigned, big-endian) and ``data_i`` its serialized (CDR) bytes as recorded.
``chain_sha256`` is the hex of ``h_count`` (``h_0`` for a declared topic with no message).

The signature is Ed25519 over the UTF-8 bytes of ``manifest_json`` of the manifest without
its ``signature`` field; ``value`` is its standard base64; ``public_key_sha256`` is the hex
SHA-256 of the 32 raw bytes of the public key (a hint of which key signed, not trusted).
Private keys are PKCS8 PEM (unencrypted), public keys SubjectPublicKeyInfo PEM
(``ghost_keygen``).

Checking the manifest is the auditor's (``ghost_verify.manifest.check_manifest``); the format
and the writing live here, where both the recorder (which writes it) and the checker (which
recomputes it) read them.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
import hashlib
import importlib.metadata
import json
import os
from pathlib import Path
import platform
import re
from typing import BinaryIO, cast

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from .errors import BagError

__all__ = [
    'CHAIN_DOMAIN',
    'MANIFEST_FORMAT',
    'MANIFEST_NAME',
    'SIGNATURE_ALGORITHM',
    'FileDigest',
    'JsonValue',
    'ManifestBuilder',
    'ManifestError',
    'TopicChain',
    'bag_file_digests',
    'bag_files',
    'chain_start',
    'chain_step',
    'chains_from_mcap',
    'file_digest',
    'load_private_key',
    'load_public_key',
    'manifest_json',
    'public_key_sha256',
    'sign_manifest',
    'signed_bytes',
    'software_versions',
    'write_manifest',
]

#: A JSON value, as ghost_core.properties spells it.
JsonValue = None | bool | int | float | str | list['JsonValue'] | dict[str, 'JsonValue']

MANIFEST_NAME = 'manifest.json'
MANIFEST_FORMAT = 'ghost_run_manifest_v1'
SIGNATURE_ALGORITHM = 'ed25519'
CHAIN_DOMAIN = b'ghost-manifest-v1'

_HEX64 = re.compile(r'^[0-9a-f]{64}$')
_READ_BLOCK = 1 << 20


class ManifestError(BagError, ValueError):
    """A key cannot be loaded, or a manifest cannot be read or written."""


def manifest_json(document: Mapping[str, object]) -> str:
    """Return the manifest's canonical text: sorted keys, indent 2, UTF-8, final newline.

    Not SPEC §4's ``ghost_core.hashing.canonical_json`` (no spaces), which content addresses use.
    """
    return json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False,
                      allow_nan=False) + '\n'


def signed_bytes(manifest: Mapping[str, object]) -> bytes:
    """Return the bytes the signature covers: the canonical manifest without ``signature``."""
    return manifest_json({k: v for k, v in manifest.items() if k != 'signature'}).encode(
        'utf-8')


def chain_start(topic: str) -> bytes:
    """Return ``h_0`` of a topic's chain."""
    return hashlib.sha256(CHAIN_DOMAIN + topic.encode('utf-8')).digest()


def chain_step(previous: bytes, log_time_ns: int, data: bytes | memoryview) -> bytes:
    """Return ``h_i`` from ``h_(i-1)`` and one message."""
    return hashlib.sha256(previous + log_time_ns.to_bytes(8, 'big')
                          + hashlib.sha256(data).digest()).digest()


class TopicChain:
    """The running count and chain of one topic (updated message by message)."""

    __slots__ = ('count', 'digest', 'topic', 'type_name')

    def __init__(self, topic: str, type_name: str) -> None:
        self.topic = topic
        self.type_name = type_name
        self.count = 0
        self.digest = chain_start(topic)

    def update(self, log_time_ns: int, data: bytes | memoryview) -> None:
        """Fold one message (in record order) into the chain."""
        self.digest = chain_step(self.digest, log_time_ns, data)
        self.count += 1

    def to_json(self) -> dict[str, JsonValue]:
        """Return the manifest entry of the topic."""
        return {'type': self.type_name, 'count': self.count,
                'chain_sha256': self.digest.hex()}


@dataclass(frozen=True, slots=True)
class FileDigest:
    """SHA-256 (lowercase hex) and size in bytes of one file."""

    sha256: str
    size: int

    def __post_init__(self) -> None:
        if not _HEX64.match(self.sha256):
            raise ValueError(f'sha256 must be 64 lowercase hex digits, got {self.sha256!r}')
        if self.size < 0:
            raise ValueError(f'size must be >= 0, got {self.size}')

    def to_json(self) -> dict[str, JsonValue]:
        """Return the manifest entry of the file."""
        return {'sha256': self.sha256, 'size': self.size}


def file_digest(path: str | os.PathLike[str]) -> FileDigest:
    """Return the SHA-256 and size of a file's bytes."""
    digest = hashlib.sha256()
    size = 0
    with open(path, 'rb') as stream:
        while block := stream.read(_READ_BLOCK):
            digest.update(block)
            size += len(block)
    return FileDigest(digest.hexdigest(), size)


def bag_files(bag_dir: Path) -> list[Path]:
    """The regular files of a bag directory but manifest.json, by name."""
    return sorted(p for p in bag_dir.iterdir() if p.name != MANIFEST_NAME and p.is_file())


def bag_file_digests(bag_dir: str | os.PathLike[str]) -> dict[str, FileDigest]:
    """Return the digest of every regular file of a bag directory but manifest.json."""
    return {p.name: file_digest(p) for p in bag_files(Path(bag_dir))}


def software_versions(distributions: Iterable[str] = ()) -> dict[str, str]:
    """Return Python's version and those of Ghost and the libraries that read/write bags.

    ``distributions`` adds more installed distributions (e.g. ``rclpy``); the ones that are
    not installed are left out.
    """
    versions = {'python': platform.python_version()}
    names = {'ghost': 'ghost_verify', 'rosbags': 'rosbags', 'mcap': 'mcap',
             'cryptography': 'cryptography'}
    names.update({name: name for name in distributions})
    for key, distribution in names.items():
        try:
            versions[key] = importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            continue
    return versions


class ManifestBuilder:
    """The manifest of a bag being recorded: add each message as it is written."""

    def __init__(self, config: Mapping[str, JsonValue], software: Mapping[str, str]) -> None:
        self.config = dict(config)
        self.software = dict(software)
        self.topics: dict[str, TopicChain] = {}

    @property
    def messages(self) -> int:
        """Return the number of messages added so far."""
        return sum(chain.count for chain in self.topics.values())

    def add_topic(self, topic: str, type_name: str) -> None:
        """Declare a topic (its chain is ``h_0`` until its first message)."""
        if topic not in self.topics:
            self.topics[topic] = TopicChain(topic, type_name)

    def add(self, topic: str, type_name: str, log_time_ns: int,
            data: bytes | memoryview) -> None:
        """Fold one message into its topic's chain, in the order it is written to the bag."""
        self.add_topic(topic, type_name)
        self.topics[topic].update(log_time_ns, data)

    def document(self, files: Mapping[str, FileDigest] | None = None) -> dict[str, JsonValue]:
        """Return the unsigned manifest; complete (with ``files``) or partial (``None``)."""
        return {
            'format': MANIFEST_FORMAT,
            'complete': files is not None,
            'files': {name: d.to_json() for name, d in sorted((files or {}).items())},
            'topics': {t: c.to_json() for t, c in sorted(self.topics.items())},
            'config': cast(JsonValue, self.config),
            'software': cast(JsonValue, self.software),
        }


def _read_key_file(path: str | os.PathLike[str]) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as err:
        raise ManifestError(f'{path}: cannot be read: {err.strerror}') from err


def load_private_key(path: str | os.PathLike[str]) -> Ed25519PrivateKey:
    """Load an unencrypted Ed25519 private key (PKCS8 PEM) or raise ManifestError."""
    data = _read_key_file(path)
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm) as err:
        # The message of cryptography's error never quotes the key material.
        raise ManifestError(f'{path}: not an unencrypted PEM private key') from err
    if not isinstance(key, Ed25519PrivateKey):
        raise ManifestError(f'{path}: not an Ed25519 private key')
    return key


def load_public_key(path: str | os.PathLike[str]) -> Ed25519PublicKey:
    """Load an Ed25519 public key (SubjectPublicKeyInfo PEM) or raise ManifestError."""
    data = _read_key_file(path)
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError, UnsupportedAlgorithm) as err:
        raise ManifestError(f'{path}: not a PEM public key') from err
    if not isinstance(key, Ed25519PublicKey):
        raise ManifestError(f'{path}: not an Ed25519 public key')
    return key


def public_key_sha256(key: Ed25519PublicKey) -> str:
    """Return the hex SHA-256 of the 32 raw bytes of a public key."""
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()


def sign_manifest(manifest: Mapping[str, JsonValue],
                  key: Ed25519PrivateKey) -> dict[str, JsonValue]:
    """Return the manifest with its Ed25519 ``signature`` (replacing any previous one)."""
    value = base64.b64encode(key.sign(signed_bytes(manifest))).decode('ascii')
    return {**{k: v for k, v in manifest.items() if k != 'signature'}, 'signature': {
        'algorithm': SIGNATURE_ALGORITHM,
        'public_key_sha256': public_key_sha256(key.public_key()),
        'value': value,
    }}


def write_manifest(bag_dir: str | os.PathLike[str], manifest: Mapping[str, JsonValue]) -> Path:
    """Write ``manifest.json`` into the bag directory atomically (a crash leaves the old one)."""
    path = Path(bag_dir) / MANIFEST_NAME
    partial = path.with_name(f'.{MANIFEST_NAME}.tmp')
    try:
        with open(partial, 'w', encoding='utf-8') as stream:
            stream.write(manifest_json(manifest))
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(partial, path)
    except OSError as err:
        raise ManifestError(f'{path}: cannot be written: {err.strerror}') from err
    return path


def chains_from_mcap(paths: Sequence[Path]) -> tuple[dict[str, TopicChain], tuple[str, ...]]:
    """Recompute every topic's chain from MCAP files read in the given order.

    Returns the chains and the problems met (a file, or part of one, that cannot be read:
    the chains then cover what was read). The verifier's manifest check reads them.
    """
    from mcap.records import Channel, Message, Schema
    from mcap.stream_reader import StreamReader

    chains: dict[str, TopicChain] = {}
    problems: list[str] = []
    for path in paths:
        schemas: dict[int, str] = {}
        channels: dict[int, tuple[str, str]] = {}
        try:
            with open(path, 'rb') as stream:
                reader = StreamReader(cast(BinaryIO, stream), validate_crcs=False)
                for record in reader.records:
                    if isinstance(record, Schema):
                        schemas[record.id] = record.name
                    elif isinstance(record, Channel):
                        channels[record.id] = (record.topic, schemas.get(record.schema_id, ''))
                    elif isinstance(record, Message):
                        topic, type_name = channels.get(record.channel_id, ('', ''))
                        if not topic:
                            problems.append(f'{path.name}: message on unknown channel '
                                            f'{record.channel_id}')
                            continue
                        chain = chains.get(topic)
                        if chain is None:
                            chain = chains[topic] = TopicChain(topic, type_name)
                        chain.update(record.log_time, record.data)
        except Exception as err:  # noqa: BLE001 - a damaged file raises many kinds of error
            problems.append(f'{path.name} cannot be read to the end: '
                            f'{" ".join(str(err).split())[:120] or type(err).__name__}')
    return chains, tuple(problems)
