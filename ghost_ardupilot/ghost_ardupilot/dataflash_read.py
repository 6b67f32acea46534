"""Reading an ArduPilot DataFlash log (.bin): its damage, its messages, its parameters.

The messages are decoded by pymavlink's DFReader (the only module of Ghost that imports
pymavlink). DFReader resynchronises byte by byte on damage and prints a line for every bad
byte it skips, and it decodes spurious messages out of garbage; so the framing is walked here
first (``scan``: the 0xA3 0x95 header, the type, the lengths the FMT messages declare), and
DFReader only ever reads the intact messages. A damaged or padded tail is cut off and said in
one line (``Damage.describe``); damage inside the log loses its samples, said in one line too.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
import contextlib
from dataclasses import dataclass, field
import io
import os
from pathlib import Path
import re
import struct
import tempfile
from typing import Any

__all__ = [
    'DATAFLASH_MAGIC',
    'Damage',
    'DataflashLog',
    'DataflashReadError',
    'is_dataflash',
    'load_dataflash',
    'scan',
]

#: The first bytes of a binary DataFlash log: the message header 0xA3 0x95 and the type of
#: its first message, FMT (0x80), which defines itself.
DATAFLASH_MAGIC = b'\xa3\x95\x80'
_HEAD = b'\xa3\x95'
_FMT = 0x80
_FMT_LENGTH = 89


class DataflashReadError(ValueError):
    """The log cannot be used; the message names the file and the problem."""


def is_dataflash(head: bytes) -> bool:
    """Whether a file that starts with ``head`` is a binary DataFlash log."""
    return head.startswith(DATAFLASH_MAGIC)


@dataclass(frozen=True, slots=True)
class Damage:
    """What the framing walk found: the bad byte ranges (offset, length) and the file size."""

    file_size: int
    bad: tuple[tuple[int, int], ...] = ()
    #: The last range runs to the end of the file (a damaged tail, imported up to it).
    tail: bool = False
    #: What the tail is: 'padding (0xff)', 'a message cut short', 'not DataFlash messages'.
    tail_kind: str = ''

    @property
    def damaged(self) -> bool:
        """Whether any byte of the file is not an intact message."""
        return bool(self.bad)

    def describe(self, last_time_us: int | None) -> str:
        """One line: where the damage is, and what was imported; '' when there is none."""
        if not self.bad:
            return ''
        parts = []
        inner = self.bad[:-1] if self.tail else self.bad
        if inner:
            lost = sum(length for _, length in inner)
            parts.append(f'{len(inner)} damaged region{"s" if len(inner) != 1 else ""} '
                         f'({lost} bytes, the first at byte {inner[0][0]}): the samples in '
                         'them are lost')
        if self.tail:
            offset, length = self.bad[-1]
            at = ('' if last_time_us is None
                  else f'; imported up to t = {last_time_us / 1e6:.3f} s since boot')
            parts.append(f'the log ends in {self.tail_kind} from byte {offset} of '
                         f'{self.file_size} ({length} bytes){at}')
        return '; '.join(parts)


def _message_at(data: bytes, offset: int, lengths: Mapping[int, int]) -> int | None:
    """The length of an intact message starting at ``offset``, or None."""
    if data[offset:offset + 2] != _HEAD or offset + 3 > len(data):
        return None
    length = lengths.get(data[offset + 2])
    if length is None or length < 3 or offset + length > len(data):
        return None
    return length


def _resync(data: bytes, start: int, lengths: Mapping[int, int]) -> int | None:
    """The next offset after ``start`` where two intact messages follow (or one ends the file)."""
    position = data.find(_HEAD, start + 1)
    while position != -1:
        length = _message_at(data, position, lengths)
        if length is not None:
            following = position + length
            if following == len(data) or _message_at(data, following, lengths) is not None:
                return position
        position = data.find(_HEAD, position + 1)
    return None


def _tail_kind(tail: bytes, lengths: Mapping[int, int]) -> str:
    if tail and tail.count(tail[:1]) == len(tail) and tail[0] in (0x00, 0xFF):
        return f'padding (0x{tail[0]:02x})'
    if tail[:2] == _HEAD and len(tail) >= 3 and tail[2] in lengths:
        return 'a message cut short'
    return 'bytes that are not DataFlash messages'


def scan(data: bytes) -> tuple[list[tuple[int, int]], Damage]:
    """The intact byte ranges (offset, length) of a DataFlash log, and its damage.

    Each message is the header 0xA3 0x95, its type and its body, of the length the FMT message
    of that type declared (FMT itself: 89 bytes). A byte that starts no intact message opens a
    bad range, which ends where two intact messages follow each other again (a lone header in
    garbage is not enough), or at the end of the file.
    """
    lengths: dict[int, int] = {_FMT: _FMT_LENGTH}
    good: list[tuple[int, int]] = []
    bad: list[tuple[int, int]] = []
    offset, start, size = 0, 0, len(data)
    tail = False
    while offset < size:
        length = _message_at(data, offset, lengths)
        if length is not None:
            if data[offset + 2] == _FMT and length >= 5:
                lengths[data[offset + 3]] = data[offset + 4]
            offset += length
            continue
        if offset > start:
            good.append((start, offset - start))
        following = _resync(data, offset, lengths)
        if following is None:
            bad.append((offset, size - offset))
            tail = True
            start = offset = size
            break
        bad.append((offset, following - offset))
        start = offset = following
    if offset > start:
        good.append((start, offset - start))
    kind = _tail_kind(data[bad[-1][0]:], lengths) if tail else ''
    return good, Damage(size, tuple(bad), tail, kind)


@dataclass(slots=True)
class DataflashLog:
    """The messages of the types asked for (rows as dicts, in log order) and the parameters."""

    path: Path
    damage: Damage
    messages: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: Each parameter's first logged value (ArduPilot logs them all when logging starts).
    parameters: dict[str, float] = field(default_factory=dict)
    #: Later values: (TimeUS, name, value), in log order.
    changed_parameters: list[tuple[int, str, float]] = field(default_factory=list)
    last_time_us: int | None = None

    def rows(self, name: str) -> list[dict[str, Any]]:
        """The rows of message type ``name`` (empty when it is not logged)."""
        return self.messages.get(name, [])

    def texts(self) -> list[tuple[int, str]]:
        """(TimeUS, text) of every MSG row."""
        return [(int(row['TimeUS']), str(row.get('Message', '')))
                for row in self.rows('MSG')]

    def firmware(self) -> str:
        """'ArduCopter V4.3.6 (0c5e999c)' from the first version MSG, else 'not stated'."""
        for _, text in self.texts():
            if re.match(r'^(Ardu\w+|APM:\w+|Blimp|AntennaTracker|AP_Periph)\b.*\d+\.\d+', text):
                return text.strip()
        return 'firmware not stated'

    def version(self) -> tuple[int, int, int] | None:
        """(major, minor, patch) of the firmware message, or None."""
        found = re.search(r'V(\d+)\.(\d+)\.(\d+)', self.firmware())
        return None if found is None else (int(found[1]), int(found[2]), int(found[3]))

    def vehicle(self) -> str:
        """'ArduCopter', 'ArduPlane', ... from the firmware message, '' when not stated."""
        found = re.match(r'^(Ardu\w+|APM:\w+)', self.firmware())
        return '' if found is None else found[1].replace('APM:', 'Ardu')

    def board(self) -> str:
        """The board the log names ('CubeOrange'), 'SITL' for a simulator, else 'not stated'."""
        for _, text in self.texts():
            found = re.match(r'^(\S+) [0-9A-F]{8} [0-9A-F]{8} [0-9A-F]{8}$', text.strip())
            if found is not None:
                return found[1]
        if any(name.startswith('SIM_') for name in self.parameters):
            return 'SITL'
        return 'board not stated'


@contextlib.contextmanager
def _quiet() -> Iterator[io.StringIO]:
    """Keep whatever the reader prints (Python or its C indexer) off the terminal."""
    said = io.StringIO()
    saved = [os.dup(fd) for fd in (1, 2)]
    with tempfile.TemporaryFile() as sink:
        try:
            for fd in (1, 2):
                os.dup2(sink.fileno(), fd)
            with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
                yield said
        finally:
            for fd, copy in zip((1, 2), saved, strict=True):
                os.dup2(copy, fd)
                os.close(copy)


def _read(path: Path) -> bytes:
    try:
        if path.is_dir():
            raise DataflashReadError(f'{path}: is a directory, not a DataFlash log')
        data = path.read_bytes()
    except FileNotFoundError as err:
        raise DataflashReadError(f'{path}: no such file') from err
    except OSError as err:
        raise DataflashReadError(f'{path}: cannot be read: {err.strerror or err}') from err
    if not data:
        raise DataflashReadError(f'{path}: empty file, not a DataFlash log')
    if not is_dataflash(data):
        raise DataflashReadError(f'{path}: not a DataFlash log (it starts with {data[:8]!r}, '
                                 'not the FMT message 0xA3 0x95 0x80)')
    return data


def load_dataflash(path: Path, types: Iterable[str]) -> DataflashLog:
    """Read the messages of ``types`` (and PARM, MSG) of the log at ``path``.

    ``DataflashReadError`` naming the file when it cannot be read: missing, a directory,
    empty, not DataFlash, or no intact message.
    """
    data = _read(path)
    good, damage = scan(data)
    if not good:
        raise DataflashReadError(f'{path}: no intact DataFlash message')
    wanted = {*types, 'PARM', 'MSG'}
    log = DataflashLog(path, damage)
    messages: dict[str, list[dict[str, Any]]] = defaultdict(list)
    with tempfile.TemporaryDirectory(prefix='ghost-dataflash-') as tmp:
        source = path
        if damage.damaged:
            source = Path(tmp) / 'intact.bin'
            source.write_bytes(b''.join(data[offset:offset + length]
                                        for offset, length in good))
        from pymavlink import DFReader  # type: ignore[import-untyped]

        with _quiet():
            reader = None
            try:
                reader = DFReader.DFReader_binary(str(source), zero_time_base=False)
                while True:
                    message = reader.recv_match(type=sorted(wanted))
                    if message is None:
                        break
                    row = message.to_dict()
                    kind = row.pop('mavpackettype', message.get_type())
                    if 'TimeUS' in row:
                        log.last_time_us = int(row['TimeUS'])
                    if kind in wanted:
                        messages[kind].append(row)
            except (struct.error, ValueError, IndexError, KeyError, TypeError,
                    OverflowError, UnicodeError) as err:
                raise DataflashReadError(f'{path}: the DataFlash log cannot be parsed: '
                                         f'{type(err).__name__}: {err}') from err
            finally:
                if reader is not None:
                    reader.close()
    log.messages = dict(messages)
    latest: dict[str, float] = {}
    for row in log.rows('PARM'):
        name, value = str(row.get('Name', '')), float(row.get('Value', 0.0))
        if name not in log.parameters:
            log.parameters[name] = value
        elif value != latest[name]:
            log.changed_parameters.append((int(row.get('TimeUS', 0)), name, value))
        latest[name] = value
    return log

