"""The JSON form the reports share: canonical JSON, bag file digests, read errors and notes."""

from __future__ import annotations

from collections.abc import Sequence
import json

from ghost_core.properties import JsonValue

from .events import BagFileDigest, ReadError

__all__ = ['MAX_NOTED_READ_ERRORS', 'canonical_report_json', 'digests_to_json',
           'read_error_notes', 'read_errors_to_json']


def digests_to_json(files: Sequence[BagFileDigest]) -> list[JsonValue]:
    """Return the bag's file digests as a JSON list, in reading order."""
    return [{'file': item.file, 'sha256': item.sha256} for item in files]


def read_errors_to_json(errors: Sequence[ReadError]) -> list[JsonValue]:
    """Return the read errors as a JSON list, in the order they were met."""
    return [{'file': error.file, 'kind': error.kind.value, 'detail': error.detail,
             'offset': error.offset, 'count': error.count} for error in errors]


#: At most this many read errors are spelled out in a human summary (all are in the JSON).
MAX_NOTED_READ_ERRORS = 8


def read_error_notes(errors: Sequence[ReadError]) -> tuple[str, ...]:
    """Return the human notes of an incomplete input: what was not read, and what that means.

    Empty when every byte of the bag was read.
    """
    if not errors:
        return ()
    notes = [f'input incomplete: {error.describe()}' for error in errors[:MAX_NOTED_READ_ERRORS]]
    if len(errors) > MAX_NOTED_READ_ERRORS:
        notes.append(f'input incomplete: and {len(errors) - MAX_NOTED_READ_ERRORS} more '
                     'problems (see the JSON report)')
    notes.append('input incomplete: the verdicts cover only what could be read; exit code 1')
    return tuple(notes)


def canonical_report_json(document: dict[str, JsonValue]) -> str:
    """Return the canonical JSON text of a report: sorted keys, indent 2, UTF-8, final newline."""
    return json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False) + '\n'
