"""hash_form: one function from a message, in any form it is read, to the dict H is defined on."""

from __future__ import annotations

import array
from collections import OrderedDict
from typing import Any

from ghost_core_test import examples as ex
import pytest

from ghost_core.hashing import content_address, hash_form
from ghost_core.wire import message_address, to_msg_dict


class _Time:
    __slots__ = ('sec', 'nanosec')

    def __init__(self, sec: int, nanosec: int) -> None:
        self.sec, self.nanosec = sec, nanosec


class _Decoded:
    """Shaped like a CDR decoder's output: a __slots__ object per message."""

    __slots__ = ('kind', 'decision_stamp', 'reason')

    def __init__(self, kind: int, stamp: _Time, reason: str) -> None:
        self.kind, self.decision_stamp, self.reason = kind, stamp, reason


class _Array:
    """Shaped like a numpy array: values come out through tolist()."""

    def __init__(self, values: list[float]) -> None:
        self._values = values

    def tolist(self) -> list[float]:
        return list(self._values)


def test_a_message_dict_is_its_own_hash_form() -> None:
    """For every contract, the hash form of its message dict is that dict (and hashes alike)."""
    for contract in (ex.raw(), ex.calibrated(), ex.rationale(), ex.emission(), ex.outcome()):
        message = to_msg_dict(contract)
        assert hash_form(OrderedDict(message)) == message
        assert content_address(hash_form(message)) == message_address(contract)


def test_a_decoded_message_hashes_as_its_dict() -> None:
    """A __slots__ object (nested ones too) gives the dict of its fields by name."""
    decision = ex.rationale().decision
    message = to_msg_dict(decision)
    sec, nanosec = message['decision_stamp']['sec'], message['decision_stamp']['nanosec']
    decoded = _Decoded(message['kind'], _Time(sec, nanosec), message['reason'])
    assert hash_form(decoded) == message
    assert content_address(hash_form(decoded)) == message_address(decision)


def test_arrays_become_lists_and_bytes_lists_of_ints() -> None:
    """tolist() arrays, array.array, tuples and bytes all become plain lists."""
    form: dict[str, Any] = hash_form({'a': _Array([1.0, 2.5]), 'b': array.array('B', [1, 2]),
                                      'c': (3, 4), 'd': b'\x05\x06', 'e': [_Time(1, 2)]})
    assert form == {'a': [1.0, 2.5], 'b': [1, 2], 'c': [3, 4], 'd': [5, 6],
                    'e': [{'sec': 1, 'nanosec': 2}]}
    assert type(form['a'][1]) is float


def test_a_value_without_fields_is_not_a_message() -> None:
    """Something that is neither a Mapping nor has fields is refused, by its type name."""
    with pytest.raises(TypeError, match='object'):
        hash_form(object())


def test_a_decoded_message_without_fields_is_an_empty_dict() -> None:
    """A .msg of constants only decodes to an object with no slots: its form is {}."""

    class Constants:
        __slots__ = ()

    assert hash_form(Constants()) == {}
