"""A tiny DataFlash log writer for tests: FMT messages, then rows of the types they define."""

from __future__ import annotations

from collections.abc import Sequence
import struct

#: DataFlash format characters (pymavlink DFReader's FORMAT_TO_STRUCT) used here, with the
#: scale pymavlink divides by ('L': 1e-7 degrees).
_STRUCT = {'Q': 'Q', 'B': 'B', 'b': 'b', 'H': 'H', 'I': 'I', 'i': 'i', 'f': 'f', 'L': 'i',
           'N': '16s', 'Z': '64s'}
_SCALE = {'L': 1e7}


class DataflashWriter:
    """Build a binary DataFlash log in memory: ``define`` a type, then ``row`` it."""

    def __init__(self) -> None:
        self._types: dict[str, tuple[int, str, tuple[str, ...]]] = {}
        self._data = bytearray(self._fmt(0x80, 'FMT', 'BBnNZ', 'Type,Length,Name,Format,Columns',
                                         89))

    @staticmethod
    def _fmt(kind: int, name: str, fmt: str, columns: str, length: int) -> bytes:
        return (b'\xa3\x95\x80' + bytes([kind, length]) + name.encode().ljust(4, b'\x00')
                + fmt.encode().ljust(16, b'\x00') + columns.encode().ljust(64, b'\x00'))

    def define(self, name: str, fmt: str, columns: str) -> None:
        """Declare message type ``name`` (format characters, comma-separated columns)."""
        kind = 0x81 + len(self._types)
        length = 3 + struct.calcsize('<' + ''.join(_STRUCT[c] for c in fmt))
        self._types[name] = (kind, fmt, tuple(columns.split(',')))
        self._data += self._fmt(kind, name, fmt, columns, length)

    def row(self, name: str, *values: object) -> None:
        """One message of type ``name``, its values in column order."""
        kind, fmt, columns = self._types[name]
        assert len(values) == len(columns), (name, values)
        packed: list[object] = []
        for char, value in zip(fmt, values, strict=True):
            if char in ('N', 'Z'):
                packed.append(str(value).encode())
            elif char in _SCALE:
                packed.append(round(float(value) * _SCALE[char]))  # type: ignore[arg-type]
            else:
                packed.append(value)
        self._data += b'\xa3\x95' + bytes([kind]) + struct.pack(
            '<' + ''.join(_STRUCT[c] for c in fmt), *packed)

    def parameters(self, values: Sequence[tuple[str, float]]) -> None:
        """PARM rows at time 0 (defines PARM on first use)."""
        if 'PARM' not in self._types:
            self.define('PARM', 'QNf', 'TimeUS,Name,Value')
        for name, value in values:
            self.row('PARM', 0, name, value)

    def bytes(self) -> bytes:
        """The log so far."""
        return bytes(self._data)
