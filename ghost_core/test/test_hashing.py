"""The canonical JSON and content address of SPEC section 4, pinned by known answers."""

from __future__ import annotations

from dataclasses import replace
import hashlib
import json
import math

from ghost_core_test import examples as ex
from ghost_core_test.strategies import messages
from hypothesis import given, settings
import pytest

from ghost_core.errors import ContractError
from ghost_core.hashing import canonical_json, content_address, is_sha256_hex
from ghost_core.wire import message_address, parse_decision, to_msg_dict


def test_content_address_known_answer() -> None:
    """H of a literal object equals SHA-256 of its canonical JSON written out by hand."""
    literal = '{"a":[1.0,"é",{"nanosec":5,"sec":1}],"b":true,"z":null}'
    expected = hashlib.sha256(literal.encode('utf-8')).hexdigest()
    obj = {'z': None, 'b': True, 'a': [1.0, 'é', {'sec': 1, 'nanosec': 5}]}
    assert canonical_json(obj) == literal
    assert content_address(obj) == expected


def test_canonical_json_keeps_floats_and_non_finite_values() -> None:
    """Floats stay floats (0.0, not 0) and +inf / NaN serialise as Python's json does."""
    assert canonical_json({'d': 0.0, 'e': math.inf}) == '{"d":0.0,"e":Infinity}'
    assert canonical_json({'n': math.nan}) == '{"n":NaN}'


def test_canonical_json_is_spec_json_dumps() -> None:
    """canonical_json is exactly the json.dumps call SPEC section 4 names."""
    obj = {'β': [3, 2.5, 'ü'], 'a': {'y': 1, 'x': 2}}
    assert canonical_json(obj) == json.dumps(obj, sort_keys=True, ensure_ascii=False,
                                             separators=(',', ':'))


def test_decision_message_known_answer() -> None:
    """A Decision's message dict serialises to the hand-written canonical JSON."""
    literal = '{"decision_stamp":{"nanosec":500000000,"sec":1},"kind":0,' \
              '"reason":"adjusted_level_known"}'
    decision = ex.decision()
    assert canonical_json(to_msg_dict(decision)) == literal
    assert message_address(decision) == hashlib.sha256(literal.encode()).hexdigest()
    assert parse_decision(json.loads(literal)) == decision


def test_raw_assessment_message_known_answer() -> None:
    """A BeliefSelfAssessment hashes as its hand-written canonical JSON (header included)."""
    axis = '{"level":0,"max_std":0.05,"reason":"within_known_threshold"}'
    zero = '{"nanosec":0,"sec":0}'
    literal = (
        '{"assessor_id":"covariance_threshold_v1",'
        f'"confirmation_stamp":{zero},"has_confirmation":false,"has_previous":false,'
        '"header":{"frame_id":"map","stamp":{"nanosec":500000000,"sec":1}},'
        f'"orientation":{axis},"overall_level":0,"position":{axis},'
        f'"previous_stamp":{zero},"schema_version":3,'
        f'"thresholds_sha256":"{"a" * 64}","velocity":{axis}}}'
    )
    assert canonical_json(to_msg_dict(ex.raw())) == literal
    assert message_address(ex.raw()) == hashlib.sha256(literal.encode()).hexdigest()


def test_raw_assessment_names_its_confirmation_and_previous_belief_known_answer() -> None:
    """Schema 3 (SPEC 5, v1.3): the confirming fix and the belief before, by stamp."""
    axis = '{"level":0,"max_std":0.05,"reason":"within_known_threshold"}'
    at_1_4 = '{"nanosec":400000000,"sec":1}'
    literal = (
        '{"assessor_id":"covariance_threshold_v1",'
        f'"confirmation_stamp":{at_1_4},"has_confirmation":true,"has_previous":true,'
        '"header":{"frame_id":"map","stamp":{"nanosec":500000000,"sec":1}},'
        f'"orientation":{axis},"overall_level":0,"position":{axis},'
        f'"previous_stamp":{at_1_4},"schema_version":3,'
        f'"thresholds_sha256":"{"a" * 64}","velocity":{axis}}}'
    )
    named = replace(ex.raw(), confirmation_stamp_ns=1_400_000_000,
                    previous_stamp_ns=1_400_000_000)
    assert canonical_json(to_msg_dict(named)) == literal
    assert message_address(named) == (
        'd8b0abf7c20d1a61ec576bc41e35d5d9a4c148dfcd60b83232fd7d03dc255a36')
    assert hashlib.sha256(literal.encode()).hexdigest() == message_address(named)
    with pytest.raises(ContractError, match='previous_stamp_ns'):
        replace(ex.raw(), previous_stamp_ns=ex.STAMP_NS)


def test_is_sha256_hex() -> None:
    """Only 64 lowercase hex digits are a content address."""
    assert is_sha256_hex('0' * 64)
    assert not is_sha256_hex('A' * 64)
    assert not is_sha256_hex('0' * 63)
    assert not is_sha256_hex(None)


@settings(max_examples=200, deadline=None)
@given(messages)
def test_hash_is_stable_and_independent_of_implementation(message: object) -> None:
    """H(msg) is the same on every call and equals hashlib over json.dumps of the dict."""
    first = to_msg_dict(message)
    second = to_msg_dict(message)
    assert canonical_json(first) == canonical_json(second)
    expected = hashlib.sha256(
        json.dumps(first, sort_keys=True, ensure_ascii=False, separators=(',', ':'))
        .encode('utf-8')).hexdigest()
    assert message_address(message) == expected
    assert is_sha256_hex(expected)
