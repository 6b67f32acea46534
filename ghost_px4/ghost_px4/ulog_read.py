"""Reading a PX4 ULog flight log: the log and its damage, its columns and their times.

Pure (no rclpy, no px4_msgs): the log is read with pyulog. Shared by the importer
(ghost_import), the log player (ghost_px4.ulog_topics), the attitude lookups
(ghost_px4.ulog_orientation) and the event reader (ghost_px4.events).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
import contextlib
from dataclasses import dataclass
import io
from pathlib import Path
import struct
from typing import Any

import numpy

__all__ = [
    'Damage',
    'MAX_TIME_NS',
    'MAX_TIME_US',
    'UlogReadError',
    'column',
    'dataset',
    'has',
    'latest_at_or_before',
    'load_ulog',
    'log_times_ns',
    'log_times_us',
    'nearest_within',
    'ns',
    'px4_version',
    'px4_version_label',
    'stamps_ns',
    'validity_flags',
]

_ULOG_MAGIC = b'ULog\x01\x12\x35'
# ULog message types of the definitions section, and those that start the data section.
_DEFINITION_TYPES = frozenset(b'BFIMPQ')
_DATA_START_TYPES = frozenset(b'ALC')


class UlogReadError(ValueError):
    """The log cannot be used; the message names the file and the problem."""


@dataclass(frozen=True, slots=True)
class Damage:
    """What is wrong with a log that pyulog still read."""

    truncated_at_byte: int | None
    file_size: int
    corrupt: bool
    pyulog_said: str


def _incomplete_tail(data: bytes) -> int | None:
    """Byte offset of a last message cut short by the end of the file, or None.

    pyulog stops silently at a message longer than what is left of the file; it does not flag
    it. Walking the message framing (16-byte file header, then uint16 size + uint8 type +
    payload per message) finds it. A log cut exactly between two messages cannot be told from
    a log that ended there.
    """
    offset = 16
    size = len(data)
    while offset < size:
        if offset + 3 > size:
            return offset
        msg_size, = struct.unpack_from('<H', data, offset)
        if offset + 3 + msg_size > size:
            return offset
        offset += 3 + msg_size
    return None


def _definitions_problem(data: bytes) -> str | None:
    """Where the definitions section is corrupt in a way pyulog 1.3 cannot survive, or None.

    pyulog's definitions reader steps back over a message it judges corrupt (unknown type with
    type 0, size 0 or size > 10000) to resynchronise byte by byte; near the end of the file
    that step goes backwards and never ends (random bytes after a valid header hang it).
    Such a message before the data section means the definitions cannot be trusted anyway.
    """
    offset = 16
    while offset + 3 <= len(data):
        size, kind = struct.unpack_from('<HB', data, offset)
        if kind in _DATA_START_TYPES:
            return None
        if kind not in _DEFINITION_TYPES and (kind == 0 or size == 0 or size > 10000):
            return f'byte {offset}: unknown message type {kind} of {size} bytes'
        offset += 3 + size
    return None


def load_ulog(path: Path, topics: Iterable[str]) -> tuple[Any, Damage]:
    """Read the log at ``path``, with the data of ``topics`` only (none: parameters only).

    ``UlogReadError`` (naming the file) for what cannot be read: missing, a directory, empty, not
    a ULog, corrupt definitions, or a parse failure.
    """
    try:
        if path.is_dir():
            raise UlogReadError(f'{path}: is a directory, not a ULog file')
        data = path.read_bytes()
    except FileNotFoundError as err:
        raise UlogReadError(f'{path}: no such file') from err
    except OSError as err:
        raise UlogReadError(f'{path}: cannot be read: {err.strerror or err}') from err
    if not data:
        raise UlogReadError(f'{path}: empty file, not a ULog log')
    if len(data) < 16 or not data.startswith(_ULOG_MAGIC):
        raise UlogReadError(f'{path}: not a ULog file (no ULog header: the file starts '
                        f'with {data[:8]!r})')
    problem = _definitions_problem(data)
    if problem is not None:
        raise UlogReadError(f'{path}: corrupt ULog definitions section ({problem}): the log '
                        'cannot be read')
    from pyulog import ULog  # type: ignore[import-untyped]
    from pyulog.exceptions import ULogException  # type: ignore[import-untyped]

    chatter = io.StringIO()
    try:
        # pyulog prints its findings on stdout; they are kept and reported as one warning.
        with contextlib.redirect_stdout(chatter):
            ulog = ULog(io.BytesIO(data), list(topics))
    except ULogException as err:
        raise UlogReadError(f'{path}: not a readable ULog file: {err}') from err
    except (struct.error, ValueError, IndexError, KeyError, OverflowError, UnicodeError,
            TypeError, MemoryError) as err:
        raise UlogReadError(f'{path}: the ULog file cannot be parsed (corrupt): '
                        f'{type(err).__name__}: {err}') from err
    truncated = None if ulog.has_data_appended else _incomplete_tail(data)
    said = ' '.join(chatter.getvalue().split())
    return ulog, Damage(truncated, len(data), bool(ulog.file_corruption), said)


def dataset(ulog: Any, name: str) -> dict[str, numpy.ndarray] | None:
    """The columns of topic ``name`` (its first instance), or None when it is not logged."""
    for item in ulog.data_list:
        if item.name == name and item.multi_id == 0:
            return dict(item.data)
    return None


# builtin_interfaces/Time has an int32 sec: a later PX4 time (us) can only be a corrupt one.
MAX_TIME_US = (2**31 - 1) * 10**6
MAX_TIME_NS = MAX_TIME_US * 1000


def ns(values: numpy.ndarray) -> numpy.ndarray:
    """PX4 microseconds (uint64) as int64 nanoseconds, capped at MAX_TIME_NS."""
    micros = numpy.minimum(numpy.asarray(values, dtype=numpy.uint64), numpy.uint64(MAX_TIME_US))
    return micros.astype(numpy.int64) * 1000


def log_times_ns(data: Mapping[str, numpy.ndarray]) -> numpy.ndarray:
    """When PX4 logged each sample (its timestamp), in nanoseconds."""
    return ns(data['timestamp'])


def stamps_ns(data: Mapping[str, numpy.ndarray]) -> numpy.ndarray:
    """timestamp_sample when logged (the time the estimate refers to), else timestamp (ns)."""
    sample = data.get('timestamp_sample')
    if sample is not None and numpy.all(sample > 0):
        return ns(sample)
    return log_times_ns(data)


def column(data: Mapping[str, numpy.ndarray], name: str) -> numpy.ndarray:
    """A column as float64."""
    return numpy.asarray(data[name], dtype=numpy.float64)


def has(data: Mapping[str, numpy.ndarray], *names: str) -> bool:
    """Whether every one of ``names`` is a column of ``data``."""
    return all(name in data for name in names)


def log_times_us(data: Mapping[str, numpy.ndarray]) -> numpy.ndarray:
    """The ``timestamp`` column (us since PX4 boot) as uint64."""
    return numpy.asarray(data['timestamp'], dtype=numpy.uint64)


def validity_flags(data: Mapping[str, numpy.ndarray]) -> dict[str, numpy.ndarray]:
    """vehicle_local_position's xy_valid, z_valid, v_xy_valid, v_z_valid as boolean columns.

    A flag the log does not have is True throughout (older PX4: no flag, no invalid block).
    """
    n = len(data['timestamp'])
    return {name: (column(data, name) != 0 if name in data else numpy.ones(n, dtype=bool))
            for name in ('xy_valid', 'z_valid', 'v_xy_valid', 'v_z_valid')}


def latest_at_or_before(times: numpy.ndarray, stamp: int, max_age: int) -> int | None:
    """Index of the latest of the sorted ``times`` at or before ``stamp``, or None.

    None also when that one is more than ``max_age`` older than ``stamp``.
    """
    index = int(numpy.searchsorted(times, stamp, side='right')) - 1
    if index < 0 or stamp - int(times[index]) > max_age:
        return None
    return index


def nearest_within(times: numpy.ndarray, stamp: int, max_age: int) -> int | None:
    """Index of the one of the sorted ``times`` nearest ``stamp``, if within ``max_age``.

    For the estimator's variances: the logger samples estimator_status/estimator_states at
    1-5 Hz (a logging profile, not the EKF's rate), and the variances they carry change over
    seconds, so the nearest logged sample is the best estimate of the EKF's own at ``stamp``,
    before or after it (the first beliefs of a log otherwise precede every sample).
    """
    index = int(numpy.searchsorted(times, stamp))
    candidates = [i for i in (index - 1, index) if 0 <= i < len(times)]
    if not candidates:
        return None
    best = min(candidates, key=lambda i: abs(int(times[i]) - stamp))
    return best if abs(int(times[best]) - stamp) <= max_age else None


def px4_version(ulog: Any) -> tuple[int, int, int] | None:
    """(major, minor, patch) of the log's PX4 (``ver_sw_release``), or None when not stated.

    ``ver_sw_release`` is 0xMMmmppTT (TT: 0 dev, 64 alpha, 128 beta, 192 rc, 255 release);
    0 (or absent) means a build that does not say.
    """
    value = ulog.msg_info_dict.get('ver_sw_release')
    if not isinstance(value, int) or value <= 0:
        return None
    major, minor, patch = value >> 24 & 0xFF, value >> 16 & 0xFF, value >> 8 & 0xFF
    if major == 0 and minor == 0:
        return None
    return major, minor, patch


_RELEASE_TYPES = {0: '-dev', 64: '-alpha', 128: '-beta', 192: '-rc', 255: ''}


def px4_version_label(ulog: Any) -> str:
    """'v1.14.0', 'v1.16.1-rc' (the type byte of ``ver_sw_release``), or 'version not stated'."""
    version = px4_version(ulog)
    if version is None:
        return 'version not stated'
    kind = int(ulog.msg_info_dict['ver_sw_release']) & 0xFF
    return 'v{}.{}.{}'.format(*version) + _RELEASE_TYPES.get(kind, f'-type{kind}')
