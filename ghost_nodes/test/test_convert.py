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
