"""Write rosbag2 MCAP bags of ghost messages with rosbags (the recorder, importers, tests).

The only module of ghost_bag that imports rosbags and numpy (the writer-only libraries): the
runtime (ghost_nodes) writes, the auditor (ghost_verify) only reads and never imports this
module, so verifying a bag needs neither. Importable without rclpy.

It is also ghost_bag's one shim of rosbags' non-public API (checked against rosbags 0.11.9, the
pin of requirements-ros.txt). rosbags' public ``Writer`` can neither close MCAP chunks below
its 1 MiB, nor fill in their CRCs, nor write out the chunk being filled (the recorder's
flush()), so ``_ChunkedMcapWriter`` subclasses its MCAP storage plugin,
``rosbags.rosbag2.storage_mcap.McapWriter`` (not exported by ``rosbags.rosbag2``), and relies
on: its ``write()`` and ``close_chunk()``; its ``chunk.bio`` (the chunk being filled) and
``bio`` (the .mcap file); ``Writer.STORAGE_PLUGINS`` and ``Writer.storage``, to install and
reach it; and rosbags writing each chunk record with uncompressed_crc 0, at byte 33 of the
record (MCAP's chunk layout), which it overwrites. ``ghost_bag/test/test_shims.py`` fails,
saying what changed, when the installed rosbags is not the pinned one or any of these is gone
or changed; re-check the shim against the new version before moving the pin (and
ROSBAGS_CHECKED_VERSION).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
import keyword
import os
from pathlib import Path
import struct
from types import TracebackType
from typing import Any, Literal
import zlib

import numpy
from rosbags.interfaces import (
    Connection,
    Nodetype,
    Qos,
    QosDurability,
    QosHistory,
    QosLiveliness,
    QosReliability,
    QosTime,
)
from rosbags.rosbag2 import StoragePlugin, Writer, WriterError
from rosbags.rosbag2.storage_mcap import McapWriter
from rosbags.typesys import get_types_from_msg, get_typestore, Stores
from rosbags.typesys.store import Typestore

from .errors import BagWriteError
from .layout import MAX_CHUNK_SIZE

__all__ = [
    'GhostBagWriter',
    'ghost_typestore',
    'offered_qos',
    'register_msg_package',
    'normalize_type_name',
]


_DTYPES: Mapping[str, str] = {
    'bool': 'bool_', 'byte': 'uint8', 'char': 'uint8', 'int8': 'int8', 'uint8': 'uint8',
    'int16': 'int16', 'uint16': 'uint16', 'int32': 'int32', 'uint32': 'uint32',
    'int64': 'int64', 'uint64': 'uint64', 'float32': 'float32', 'float64': 'float64',
}
_INTEGERS = frozenset({'byte', 'char', 'int8', 'uint8', 'int16', 'uint16', 'int32', 'uint32',
                       'int64', 'uint64'})


def _qos_time(duration: Any) -> QosTime:
    ns = int(duration.nanoseconds)
    return QosTime(ns // 1_000_000_000, ns % 1_000_000_000)


def offered_qos(profile: Any) -> Qos:
    """A publisher's QoS (an rclpy ``QoSProfile``, duck-typed) for ``add_topic``'s metadata."""
    return Qos(
        history=QosHistory(int(profile.history)), depth=int(profile.depth),
        reliability=QosReliability(int(profile.reliability)),
        durability=QosDurability(int(profile.durability)),
        deadline=_qos_time(profile.deadline), lifespan=_qos_time(profile.lifespan),
        liveliness=QosLiveliness(int(profile.liveliness)),
        liveliness_lease_duration=_qos_time(profile.liveliness_lease_duration),
        avoid_ros_namespace_conventions=bool(profile.avoid_ros_namespace_conventions))


def normalize_type_name(type_name: str) -> str:
    """Return ``pkg/msg/Type`` for ``pkg/msg/Type`` or ``pkg/Type``."""
    parts = type_name.split('/')
    if len(parts) == 2:
        return f'{parts[0]}/msg/{parts[1]}'
    return type_name


def ghost_typestore(
    msg_dir: str | os.PathLike[str], *, package: str = 'ghost_interfaces'
) -> Typestore:
    """Return a ROS 2 Jazzy typestore with every ``*.msg`` of `msg_dir` registered in `package`."""
    typestore = get_typestore(Stores.ROS2_JAZZY)
    register_msg_package(typestore, msg_dir, package)
    return typestore


def register_msg_package(
    typestore: Typestore, msg_dir: str | os.PathLike[str], package: str
) -> None:
    """Register every ``*.msg`` of `msg_dir` (a package's share/<package>/msg) in `typestore`.

    How a bag records the messages of a package outside ROS 2 Jazzy's own (ghost_interfaces;
    px4_msgs for the command gate's outputs): their definitions are parsed from the package's
    installed ``.msg`` files, like rosbag2 reads them from the package's share directory.
    """
    directory = Path(msg_dir)
    files = sorted(directory.glob('*.msg'))
    if not files:
        raise BagWriteError(f'{directory}: no .msg files (expected the {package}/msg '
                            'directory)')
    types = {}
    for file in files:
        try:
            types.update(get_types_from_msg(file.read_text(encoding='utf-8'),
                                            f'{package}/msg/{file.stem}'))
        except Exception as err:  # noqa: BLE001 - the parser raises several types
            raise BagWriteError(f'{file}: cannot be parsed: {err}') from err
    typestore.register(types)


#: The rosbags version the shim (_ChunkedMcapWriter, _Writer) was checked against.
ROSBAGS_CHECKED_VERSION = '0.11.9'

# Byte offset of uncompressed_crc in an MCAP chunk record: opcode (1), record length (8),
# message_start_time (8), message_end_time (8), uncompressed_size (8).
_CHUNK_CRC_OFFSET = 33


class _ChunkedMcapWriter(McapWriter):
    """rosbags' MCAP storage, closing chunks at a chosen size (at most MAX_CHUNK_SIZE).

    rosbags writes every chunk with uncompressed_crc 0 ("not computed"); with `chunk_crc`
    on, the CRC-32 of the chunk's content is filled in, so that a reader detects any change
    to the records inside a chunk (docs/reliability.md). The shim of rosbags' non-public API
    (see the module's docstring): only this class touches McapWriter's attributes.
    """

    chunk_size = MAX_CHUNK_SIZE
    chunk_crc = True

    def write(self, connection: Connection, timestamp: int, data: bytes | memoryview) -> None:
        super().write(connection, timestamp, data)
        if self.chunk.bio.tell() >= self.chunk_size:
            self.close_chunk()

    def close_chunk(self) -> None:
        content = self.chunk.bio.getbuffer()
        crc = zlib.crc32(content) if self.chunk_crc else 0
        del content  # release the buffer export before rosbags replaces the chunk
        start = self.bio.tell()
        super().close_chunk()
        if crc:
            end = self.bio.tell()
            self.bio.seek(start + _CHUNK_CRC_OFFSET)
            self.bio.write(struct.pack('<I', crc))
            self.bio.seek(end)

    def flush_to_disk(self) -> None:
        """Write the chunk being filled (if any), then push the file to disk."""
        if self.chunk.bio.tell():
            self.close_chunk()
        self.bio.flush()
        os.fsync(self.bio.fileno())


class _Writer(Writer):
    STORAGE_PLUGINS = {**Writer.STORAGE_PLUGINS, StoragePlugin.MCAP: _ChunkedMcapWriter}


class GhostBagWriter:
    """A rosbag2 bag (metadata.yaml + one .mcap file, CDR, ros2msg schemas) being written.

    Use as a context manager::

        with GhostBagWriter(bag_dir, msg_dir) as writer:
            writer.write('/decisions', 'ghost_interfaces/msg/DecisionRationale',
                         message_dict, log_time_ns)

    `message` is either a SPEC section 4 message dict (every field of the type, exactly) or
    the CDR bytes of an already serialised message (as a recorder receives them). Types are
    those of ROS 2 Jazzy plus the ``.msg`` files of `msg_dir`. One topic has one type. The
    bag directory must not exist yet. `chunk_size` (bytes, at most MAX_CHUNK_SIZE) bounds the
    MCAP chunks. Each chunk carries the CRC-32 of its content unless `chunk_crc` is False
    (which writes a CRC of 0, "not computed", as rosbags itself does).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        msg_dir: str | os.PathLike[str] | None = None,
        *,
        package: str = 'ghost_interfaces',
        typestore: Typestore | None = None,
        chunk_size: int = MAX_CHUNK_SIZE,
        chunk_crc: bool = True,
        rosbag2_version: Literal[8, 9] = 9,
    ) -> None:
        if not 1 <= chunk_size <= MAX_CHUNK_SIZE:
            raise ValueError(f'chunk_size must be in [1, {MAX_CHUNK_SIZE}], got {chunk_size}')
        if typestore is None:
            if msg_dir is None:
                raise ValueError('give msg_dir (the ghost_interfaces/msg directory) or typestore')
            typestore = ghost_typestore(msg_dir, package=package)
        self.path = Path(path)
        self.typestore = typestore
        self.chunk_size = chunk_size
        self.chunk_crc = chunk_crc
        try:
            self._writer = _Writer(self.path, version=rosbag2_version,
                                   storage_plugin=StoragePlugin.MCAP)
        except WriterError as err:
            raise BagWriteError(str(err)) from err
        self._connections: dict[str, tuple[str, Connection]] = {}
        self._open = False
        self._closed = False

    def open(self) -> None:
        """Create the bag directory and its .mcap file."""
        if self._open or self._closed:
            raise BagWriteError(f'{self.path}: a GhostBagWriter is opened once')
        try:
            self._writer.open()
        except WriterError as err:
            raise BagWriteError(str(err)) from err
        storage = self._writer.storage
        if isinstance(storage, _ChunkedMcapWriter):
            storage.chunk_size = self.chunk_size
            storage.chunk_crc = self.chunk_crc
        self._open = True

    def close(self) -> None:
        """Flush the last chunk, write the MCAP summary and metadata.yaml."""
        if self._open and not self._closed:
            self._writer.close()
        self._closed = True

    def __enter__(self) -> GhostBagWriter:
        self.open()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        # Close even on error: whatever was written stays a readable bag.
        self.close()

    def flush(self) -> None:
        """Write the chunk being filled (if any) and push the file to disk.

        A process that dies after flush() leaves every message written before it readable
        (the file then has no summary; readers that stream chunks still read it).
        """
        if not self._open or self._closed:
            return
        storage = self._writer.storage
        if isinstance(storage, _ChunkedMcapWriter):
            storage.flush_to_disk()

    def add_topic(
        self, topic: str, type_name: str, *, offered_qos_profiles: Sequence[object] = ()
    ) -> None:
        """Declare a topic before its first message (write() does it on demand)."""
        self._connection(topic, type_name, offered_qos_profiles)

    def write(
        self,
        topic: str,
        type_name: str,
        message: Mapping[str, object] | bytes | bytearray | memoryview,
        log_time_ns: int,
    ) -> None:
        """Append one message at `log_time_ns` (the bag's log time, integer nanoseconds)."""
        if not self._open or self._closed:
            raise BagWriteError(f'{self.path}: the writer is not open')
        if isinstance(log_time_ns, bool) or not isinstance(log_time_ns, int) or log_time_ns < 0:
            raise BagWriteError(f'{topic}: log_time_ns must be a non-negative int, '
                                f'got {log_time_ns!r}')
        connection = self._connection(topic, type_name, ())
        if isinstance(message, (bytes, bytearray, memoryview)):
            data = bytes(message)
        else:
            data = self.serialize(type_name, message)
        self._writer.write(connection, log_time_ns, data)

    def serialize(self, type_name: str, message: Mapping[str, object]) -> bytes:
        """Return the CDR bytes of a message dict of type `type_name`."""
        name = self._known_type(type_name)
        built = self._build(name, message, name)
        try:
            return bytes(self.typestore.serialize_cdr(built, name))
        except Exception as err:  # noqa: BLE001 - struct/numpy errors on out-of-range values
            raise BagWriteError(f'{name}: cannot be serialised: {err}') from err

    def _known_type(self, type_name: str) -> str:
        name = normalize_type_name(type_name)
        if name not in self.typestore.fielddefs:
            raise BagWriteError(f'unknown message type {type_name!r} (not in ROS 2 Jazzy nor '
                                'the given msg directory)')
        return name

    def _connection(
        self, topic: str, type_name: str, offered_qos_profiles: Sequence[object]
    ) -> Connection:
        name = self._known_type(type_name)
        known = self._connections.get(topic)
        if known is not None:
            if known[0] != name:
                raise BagWriteError(f'{topic}: already has type {known[0]}, not {name}')
            return known[1]
        if not self._open or self._closed:
            raise BagWriteError(f'{self.path}: the writer is not open')
        connection = self._writer.add_connection(
            topic, name, typestore=self.typestore,
            offered_qos_profiles=offered_qos_profiles,  # type: ignore[arg-type]
        )
        self._connections[topic] = (name, connection)
        return connection

    def _build(self, type_name: str, value: object, where: str) -> object:
        if not isinstance(value, Mapping):
            raise BagWriteError(f'{where}: expected a message dict of {type_name}, '
                                f'got {type(value).__name__}')
        fields = self.typestore.fielddefs[type_name][1]
        names = [name for name, _ in fields]
        extra = sorted(set(value) - set(names))
        missing = [name for name in names if name not in value]
        if extra or missing:
            raise BagWriteError(
                f'{where}: message dict does not match {type_name}'
                + (f'; missing {missing}' if missing else '')
                + (f'; unknown {extra}' if extra else '')
            )
        kwargs: dict[str, Any] = {
            _python_name(name): self._field(desc, value[name], f'{where}.{name}')
            for name, desc in fields
        }
        return self.typestore.types[type_name](**kwargs)

    def _field(self, desc: tuple[Nodetype, object], value: object, where: str) -> object:
        nodetype, detail = desc
        if nodetype == Nodetype.BASE:
            assert isinstance(detail, tuple)
            return _scalar(str(detail[0]), value, where)
        if nodetype == Nodetype.NAME:
            return self._build(str(detail), value, where)
        assert isinstance(detail, tuple)
        item_desc, length = detail
        if isinstance(value, (bytes, bytearray)):
            value = list(value)
        if not isinstance(value, (list, tuple)):
            raise BagWriteError(f'{where}: expected a list, got {type(value).__name__}')
        if nodetype == Nodetype.ARRAY and len(value) != length:
            raise BagWriteError(f'{where}: expected {length} items, got {len(value)}')
        item_type, item_detail = item_desc
        if item_type == Nodetype.NAME:
            return [self._build(str(item_detail), item, f'{where}[{index}]')
                    for index, item in enumerate(value)]
        base = str(item_detail[0])
        items = [_scalar(base, item, f'{where}[{index}]') for index, item in enumerate(value)]
        if base == 'string':
            return items
        try:
            return numpy.array(items, dtype=_DTYPES[base])
        except (OverflowError, ValueError, KeyError) as err:
            raise BagWriteError(f'{where}: not an array of {base}: {err}') from err


def _python_name(name: str) -> str:
    # rosbags appends an underscore to field names that are Python keywords.
    return f'{name}_' if keyword.iskeyword(name) else name


def _scalar(base: str, value: object, where: str) -> object:
    if base == 'bool':
        if not isinstance(value, bool):
            raise BagWriteError(f'{where}: expected a bool, got {value!r}')
        return value
    if base in _INTEGERS:
        if isinstance(value, bool) or not isinstance(value, int):
            raise BagWriteError(f'{where}: expected an int ({base}), got {value!r}')
        return value
    if base in ('float32', 'float64'):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise BagWriteError(f'{where}: expected a float ({base}), got {value!r}')
        return float(value)
    if base == 'string':
        if not isinstance(value, str):
            raise BagWriteError(f'{where}: expected a str, got {value!r}')
        return value
    raise BagWriteError(f'{where}: field type {base} is not supported')
