"""rclpy messages and SPEC section 4 dicts: from_msg_dict one way, hash_form the other."""

from ghost_core.hashing import hash_form
from ghost_core.scenarios import generate_scenario, run_scenario
from ghost_core.wire import to_msg_dict
import ghost_interfaces.msg as msgs
from ghost_nodes.convert import from_msg_dict


def test_hash_form_of_an_rclpy_message_is_its_message_dict() -> None:
    """Every message the agent publishes, built as an rclpy message, reads back to its dict."""
    trace = run_scenario(generate_scenario('smoke', 0))[-1]
    for contract in (trace.raw, trace.prediction, trace.outcome, trace.calibrated,
                     trace.rationale, trace.emission):
        message = to_msg_dict(contract)
        built = from_msg_dict(getattr(msgs, type(contract).__name__), message)
        assert hash_form(built) == message
        assert type(hash_form(built)['header']['stamp']['sec']) is int


def test_a_dict_that_is_not_the_message_is_refused_by_name() -> None:
    """A missing or an unknown field is a ValueError naming the message and the field."""
    import pytest

    message = hash_form(msgs.CalibratedSelfAssessment())
    unknown = r"CalibratedSelfAssessment has no field\(s\) \['bogus'\]"
    with pytest.raises(ValueError, match=unknown):
        from_msg_dict(msgs.CalibratedSelfAssessment, {**message, 'bogus': 1})
    nested = {**message, 'raw_assessment': {
        k: v for k, v in message['raw_assessment'].items() if k != 'position'}}
    with pytest.raises(ValueError, match=r'BeliefSelfAssessment\.position is missing'):
        from_msg_dict(msgs.CalibratedSelfAssessment, nested)


def test_a_built_message_serializes_as_one_built_field_by_field() -> None:
    """Built without the default constructor: the same CDR content as rclpy's own message."""
    from rclpy.serialization import deserialize_message, serialize_message

    trace = run_scenario(generate_scenario('smoke', 0))[-1]
    message = to_msg_dict(trace.calibrated)
    built = from_msg_dict(msgs.CalibratedSelfAssessment, message)
    back = deserialize_message(serialize_message(built), msgs.CalibratedSelfAssessment)
    assert back == built and hash_form(back) == message
