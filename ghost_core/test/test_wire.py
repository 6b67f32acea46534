"""The wire layer mirrors the .msg files exactly and round-trips every contract."""

from __future__ import annotations

from collections import OrderedDict
import copy
import json
from pathlib import Path
from typing import Any

from ghost_core_test import examples as ex
from ghost_core_test.strategies import MESSAGE_STRATEGIES, stamps
from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

from ghost_core.errors import ContractError, MessageFormatError
from ghost_core.hashing import canonical_json
from ghost_core.wire import (
    ADAPTER_RECORDS,
    MESSAGE_TYPES,
    ns_to_stamp,
    parse_calibration_history,
    parse_decision_rationale,
    parse_prediction_outcome,
    stamp_to_ns,
    to_msg_dict,
)

MSG_DIR = Path(__file__).resolve().parent / '..' / '..' / 'ghost_interfaces' / 'msg'

# Fields of the non-ghost types the ghost messages use, as SPEC section 4 lays them out.
FOREIGN_FIELDS: dict[str, list[tuple[str, str]]] = {
    'std_msgs/Header': [('builtin_interfaces/Time', 'stamp'), ('string', 'frame_id')],
    'builtin_interfaces/Time': [('int32', 'sec'), ('uint32', 'nanosec')],
    'geometry_msgs/Point': [('float64', 'x'), ('float64', 'y'), ('float64', 'z')],
    'geometry_msgs/Vector3': [('float64', 'x'), ('float64', 'y'), ('float64', 'z')],
    'geometry_msgs/Twist': [('geometry_msgs/Vector3', 'linear'),
                            ('geometry_msgs/Vector3', 'angular')],
}
PRIMITIVES = {'uint8': int, 'uint32': int, 'int32': int, 'int64': int, 'float32': float,
              'float64': float, 'string': str, 'bool': bool}


def msg_fields(name: str) -> list[tuple[str, str]]:
    """Return the (type, name) fields of a message (constants and comments skipped)."""
    if name in FOREIGN_FIELDS:
        return FOREIGN_FIELDS[name]
    fields = []
    for line in (MSG_DIR / f'{name}.msg').read_text(encoding='utf-8').splitlines():
        line = line.split('#', 1)[0].strip()
        if not line:
            continue
        field_type, rest = line.split(None, 1)
        field_name = rest.split()[0]
        if '=' in field_name:  # a constant, e.g. uint8 KNOWN=0
            continue
        fields.append((field_type, field_name))
    return fields


def assert_matches_msg(value: Any, field_type: str, where: str) -> None:
    """Assert that `value` has exactly the shape and Python types of `field_type`."""
    if field_type.endswith(']'):
        base, size = field_type[:-1].split('[')
        assert isinstance(value, list), where
        assert size == '' or len(value) == int(size), where
        for i, item in enumerate(value):
            assert_matches_msg(item, base, f'{where}[{i}]')
        return
    if field_type in PRIMITIVES:
        assert type(value) is PRIMITIVES[field_type], f'{where}: {value!r} not {field_type}'
        return
    assert isinstance(value, dict), where
    fields = msg_fields(field_type)
    assert list(value) == [name for _, name in fields], f'{where}: {list(value)}'
    for sub_type, sub_name in fields:
        assert_matches_msg(value[sub_name], sub_type, f'{where}.{sub_name}')


def test_every_ghost_message_has_a_wire_mapping() -> None:
    """Each .msg file under ghost_interfaces/msg has a contract, a parser and a strategy.

    Except an adapter's records (SourceSamples), which the agent neither reads nor writes.
    """
    names = {path.stem for path in MSG_DIR.glob('*.msg')}
    assert names, f'no .msg files found in {MSG_DIR}'
    assert ADAPTER_RECORDS <= names
    assert names - ADAPTER_RECORDS == set(MESSAGE_TYPES) == set(MESSAGE_STRATEGIES)


@pytest.mark.parametrize('name', sorted(MESSAGE_TYPES))
@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_msg_dict_has_exactly_the_msg_fields(name: str, data: st.DataObject) -> None:
    """to_msg_dict output has exactly the .msg field names, recursively, with exact types."""
    contract = data.draw(MESSAGE_STRATEGIES[name])
    assert_matches_msg(to_msg_dict(contract), name, name)


@pytest.mark.parametrize('name', sorted(MESSAGE_TYPES))
@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_parse_inverts_to_msg_dict(name: str, data: st.DataObject) -> None:
    """parse(to_msg_dict(x)) == x, also after a trip through canonical JSON text."""
    contract = data.draw(MESSAGE_STRATEGIES[name])
    parse = MESSAGE_TYPES[name][1]
    message = to_msg_dict(contract)
    assert parse(message) == contract
    assert parse(json.loads(canonical_json(message))) == contract


@settings(max_examples=200, deadline=None)
@given(stamps)
def test_stamp_conversion_round_trips(stamp_ns: int) -> None:
    """Converting ns -> Time -> ns is the identity; nanosec stays below one second."""
    stamp = ns_to_stamp(stamp_ns)
    assert 0 <= stamp['nanosec'] < 10**9
    assert stamp_to_ns(stamp) == stamp_ns


def test_stamp_conversion_examples() -> None:
    """1.5 s is {sec: 1, nanosec: 500000000}."""
    assert ns_to_stamp(1_500_000_000) == {'sec': 1, 'nanosec': 500_000_000}
    assert stamp_to_ns({'sec': 2, 'nanosec': 7}) == 2_000_000_007


@pytest.mark.parametrize('stamp', [{'sec': 1, 'nanosec': 10**9}, {'sec': -1, 'nanosec': 0},
                                   {'sec': 1}, {'sec': 1.0, 'nanosec': 0}])
def test_malformed_stamps_are_rejected(stamp: dict[str, Any]) -> None:
    """A Time with nanosec out of range, negative sec, a missing or a float field is rejected."""
    with pytest.raises(MessageFormatError, match='stamp'):
        stamp_to_ns(stamp)


def test_negative_ns_cannot_become_a_stamp() -> None:
    """Stamps are >= 0."""
    with pytest.raises(MessageFormatError):
        ns_to_stamp(-1)


def test_missing_field_is_named_with_its_path() -> None:
    """A missing nested field is reported with its full path."""
    message = to_msg_dict(ex.emission())
    del message['command']['velocity']['linear']
    with pytest.raises(MessageFormatError, match=r'ActionEmission\.command\.velocity\.linear'):
        MESSAGE_TYPES['ActionEmission'][1](message)


def test_wrong_type_is_named_with_its_path() -> None:
    """A field of the wrong type is reported with its path and value."""
    message = to_msg_dict(ex.outcome())
    message['observed'] = 1
    with pytest.raises(MessageFormatError, match=r'PredictionOutcome\.observed.*1'):
        parse_prediction_outcome(message)


def test_nan_distance_in_a_message_is_rejected() -> None:
    """A NaN Mahalanobis distance read from a message violates the contract."""
    message = to_msg_dict(ex.outcome())
    message['position_mahalanobis'] = float('nan')
    with pytest.raises(ContractError, match='position_mahalanobis'):
        parse_prediction_outcome(message)


def test_absent_history_stamp_is_false_flag_and_zero_time() -> None:
    """No observed outcome is has_observed_stamp False with a zero Time, and back to None."""
    message = to_msg_dict(ex.history(within=0))
    assert message['has_observed_stamp'] is False
    assert message['most_recent_observed_stamp'] == {'sec': 0, 'nanosec': 0}
    assert parse_calibration_history(message).most_recent_observed_stamp_ns is None
    message['most_recent_observed_stamp'] = {'sec': 3, 'nanosec': 0}
    with pytest.raises(MessageFormatError, match='most_recent_observed_stamp'):
        parse_calibration_history(message)


def test_absent_sha_is_the_empty_string_on_the_wire() -> None:
    """An unclaimed assessment is '' on the wire and None in the contract."""
    rationale = ex.rationale()
    message = to_msg_dict(rationale)
    message['self_assessment_sha256'] = ''
    message['calibrated_assessment_sha256'] = ''
    parsed = parse_decision_rationale(message)
    assert parsed.self_assessment_sha256 is None
    assert to_msg_dict(parsed)['self_assessment_sha256'] == ''


def test_parsers_ignore_extra_fields_and_accept_any_mapping() -> None:
    """Extra fields (allowed by SPEC section 3) are ignored; an OrderedDict parses too."""
    message: dict[str, Any] = copy.deepcopy(to_msg_dict(ex.calibrated()))
    message['extra_field'] = 42
    parse = MESSAGE_TYPES['CalibratedSelfAssessment'][1]
    assert parse(OrderedDict(message)) == ex.calibrated()


def test_to_msg_dict_rejects_non_contracts() -> None:
    """Only ghost message contracts have a message dict."""
    with pytest.raises(TypeError):
        to_msg_dict(object())
