"""The generated field table is exactly what the .msg files say."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import ghost_core.msg_codegen as codegen
import ghost_core.msg_fields as msg_fields
from ghost_core.msg_fields import MESSAGE_FIELDS
import ghost_core.wire as wire

MSG_DIR = Path(__file__).resolve().parent / '..' / '..' / 'ghost_interfaces' / 'msg'


def test_generated_table_matches_the_msg_files() -> None:
    """Regenerating msg_fields.py from ghost_interfaces/msg gives the file as committed."""
    committed = Path(msg_fields.__file__).read_text(encoding='utf-8')
    assert codegen.render_dir(MSG_DIR) == committed, (
        'ghost_core/msg_fields.py is stale: run python -m ghost_core.msg_codegen '
        'ghost_interfaces/msg ghost_core/ghost_core/msg_fields.py')


def test_every_message_type_used_is_in_the_table() -> None:
    """Every non-primitive field type names a message the table defines (it is closed)."""
    primitives = {'bool', 'byte', 'char', 'int8', 'uint8', 'int16', 'uint16', 'int32',
                  'uint32', 'int64', 'uint64', 'float32', 'float64', 'string'}
    for name, fields in MESSAGE_FIELDS.items():
        for field, field_type in fields:
            base = field_type.split('[')[0]
            assert base in primitives or base in MESSAGE_FIELDS, (name, field, field_type)


def test_parse_msg_reads_fields_and_constants() -> None:
    """Comments and blank lines are skipped; NAME=value lines are constants."""
    fields, constants = codegen.parse_msg(
        '# a comment\nuint8 KNOWN=0\n\nstd_msgs/Header header  # trailing\nfloat64[9] cov\n',
        'X.msg')
    assert fields == (('header', 'std_msgs/Header'), ('cov', 'float64[9]'))
    assert constants == (('KNOWN', 'uint8', 0),)


def test_a_contract_that_does_not_mirror_its_message_is_refused(monkeypatch: Any) -> None:
    """The wire layer refuses a message field without a contract field, and the reverse."""
    fields = dict(MESSAGE_FIELDS)
    fields['Decision'] = (*MESSAGE_FIELDS['Decision'], ('priority', 'uint8'))
    monkeypatch.setattr(wire, 'MESSAGE_FIELDS', fields)
    with pytest.raises(TypeError, match=r"Decision does not mirror Decision\.msg.*'priority'"):
        wire._Fields('Decision', {}).table()
    fields['Decision'] = MESSAGE_FIELDS['Decision'][:-1]
    with pytest.raises(TypeError, match=r"contract fields \['reason'\] have no message field"):
        wire._Fields('Decision', {}).table()
