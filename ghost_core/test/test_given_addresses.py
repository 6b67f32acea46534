"""A node that hashed the message it received passes the address on; the result is the same."""

from __future__ import annotations

from ghost_core_test import examples as ex
import pytest

from ghost_core.contracts import DecisionContext
from ghost_core.decisions import decide_with_rationale, UncertaintyAwareReferencePolicy
from ghost_core.errors import ContractError
from ghost_core.hashing import content_address
from ghost_core.loop import calibrate_from_history, decide, emit
from ghost_core.wire import message_address, to_msg_dict


def test_given_addresses_are_the_ones_computed() -> None:
    """decide, emit and calibrate give what they compute when handed H of what they read."""
    calibrated = ex.calibrated()
    received = to_msg_dict(calibrated)
    addresses = content_address(received['raw_assessment']), content_address(received)
    assert decide(calibrated, addresses) == decide(calibrated)
    rationale = decide(calibrated)
    assert emit(rationale, content_address(to_msg_dict(rationale))) == emit(rationale)
    raw, history = ex.raw(), ex.history()
    assert (calibrate_from_history(raw, history, raw_sha256=message_address(raw))
            == calibrate_from_history(raw, history))


def test_given_addresses_are_used_as_given() -> None:
    """The address handed in is the one cited (the caller hashed what it received)."""
    other = 'ab' * 32
    rationale = decide(ex.calibrated(), (other, other))
    assert (rationale.self_assessment_sha256, rationale.calibrated_assessment_sha256) == (
        other, other)
    assert emit(rationale, other).rationale_sha256 == other


def test_addresses_need_a_calibrated_assessment() -> None:
    """Addresses for a context without a calibrated assessment are refused."""
    context = DecisionContext.from_raw(ex.raw(), None)
    with pytest.raises(ContractError, match='addresses'):
        decide_with_rationale(UncertaintyAwareReferencePolicy(), context, ('ab' * 32,) * 2)
