"""The GateEmission contract: what the command gate may record, and how NaN setpoints travel."""

from __future__ import annotations

import dataclasses
import json
import math
import struct

import pytest

from ghost_core.contracts import GateEmission
from ghost_core.errors import ContractError
from ghost_core.gate import GateAction, GateReason
from ghost_core.hashing import canonical_json
from ghost_core.wire import message_address, parse_gate_emission, to_msg_dict

NAN = math.nan
SHA = 'ab' * 32
#: 0.1 as a float32 (what a px4_msgs float32 field holds), and 0.1 itself, which is not one.
POINT_ONE_F32 = struct.unpack('<f', struct.pack('<f', 0.1))[0]
#: The largest finite float32.
FLOAT32_MAX = struct.unpack('<f', bytes.fromhex('ffff7f7f'))[0]

#: A held PX4 setpoint citing an actuation, x/y and heading not controlled.
HELD = GateEmission(
    stamp_ns=2_000_000_000, frame_id='ned', action=GateAction.HELD,
    reason=GateReason.DECISION_NOT_PROCEED, mode='px4',
    output_topic='/fmu/in/trajectory_setpoint', timeout_s=0.5, has_actuation=True,
    actuation_stamp_ns=1_900_000_000, rationale_sha256=SHA, decision_kind=1, command_kind=2,
    actuation_received_ns=1_950_000_000, position=(NAN, NAN, -4.0), velocity=(0.0, 0.0, 0.0),
    yaw=NAN)
#: A zero twist before any actuation.
ZERO_TWIST = GateEmission(
    stamp_ns=5, frame_id='base_link', action=GateAction.HELD, reason=GateReason.NO_ACTUATION,
    mode='twist', output_topic='/cmd_vel', timeout_s=0.5)
#: The LAND command.
LANDING = dataclasses.replace(HELD, action=GateAction.VEHICLE_COMMAND, reason=GateReason.LAND,
                              output_topic='/fmu/in/vehicle_command', frame_id='',
                              position=(0.0, 0.0, 0.0), yaw=0.0, vehicle_command=21)


def test_nan_is_not_controlled_stored_as_none_and_nan_on_the_wire() -> None:
    """NaN given is None in the contract, NaN in the message, and back to an equal contract."""
    assert HELD.position == (None, None, -4.0) and HELD.yaw is None
    message = to_msg_dict(HELD)
    assert math.isnan(message['position'][0]) and math.isnan(message['yaw'])
    assert message['position'][2] == -4.0
    text = canonical_json(message)
    assert '"position":[NaN,NaN,-4.0]' in text
    assert parse_gate_emission(json.loads(text)) == HELD
    assert message_address(parse_gate_emission(json.loads(text))) == message_address(HELD)


def test_none_and_nan_are_the_same_record() -> None:
    """Not controlled given as None or as NaN is one contract, one content address."""
    as_none = dataclasses.replace(HELD, position=(None, None, -4.0), yaw=None)
    assert as_none == HELD and message_address(as_none) == message_address(HELD)


def test_actuation_kinds_outside_the_catalogue_are_recorded() -> None:
    """The gate records the kinds it received, even unknown ones (it holds on them)."""
    record = dataclasses.replace(HELD, decision_kind=200, command_kind=255)
    assert (record.decision_kind, record.command_kind) == (200, 255)


def test_float32_values_are_accepted_exactly() -> None:
    """A float32 value (as a px4_msgs field holds it) is kept bit for bit."""
    record = dataclasses.replace(HELD, velocity=(POINT_ONE_F32, -0.0, -FLOAT32_MAX))
    assert record.velocity == (POINT_ONE_F32, -0.0, -FLOAT32_MAX)
    assert parse_gate_emission(to_msg_dict(record)) == record


def test_land_and_zero_twist_records_are_valid() -> None:
    """A vehicle command carries its id; a twist-mode hold has zero setpoint fields."""
    assert LANDING.vehicle_command == 21
    assert to_msg_dict(ZERO_TWIST)['twist'] == {'linear': {'x': 0.0, 'y': 0.0, 'z': 0.0},
                                                'angular': {'x': 0.0, 'y': 0.0, 'z': 0.0}}


REJECTIONS = [
    ('action outside GateAction', HELD, 'action', 3),
    ('reason outside GateReason', HELD, 'reason', 'stale'),
    ('reason not a string', HELD, 'reason', 1),
    ('mode unknown', HELD, 'mode', 'mavros'),
    ('output topic not a string', HELD, 'output_topic', None),
    ('timeout zero', HELD, 'timeout_s', 0.0),
    ('timeout negative', HELD, 'timeout_s', -0.5),
    ('timeout NaN', HELD, 'timeout_s', NAN),
    ('timeout infinite', HELD, 'timeout_s', math.inf),
    ('stamp negative', HELD, 'stamp_ns', -1),
    ('actuation stamp negative', HELD, 'actuation_stamp_ns', -1),
    ('received stamp a float', HELD, 'actuation_received_ns', 1.5),
    ('rationale not a sha', HELD, 'rationale_sha256', 'A' * 64),
    ('rationale empty with an actuation', HELD, 'rationale_sha256', ''),
    ('decision kind beyond uint8', HELD, 'decision_kind', 256),
    ('command kind negative', HELD, 'command_kind', -1),
    ('has_actuation not a bool', HELD, 'has_actuation', 1),
    ('rationale without an actuation', ZERO_TWIST, 'rationale_sha256', SHA),
    ('actuation stamp without an actuation', ZERO_TWIST, 'actuation_stamp_ns', 7),
    ('decision kind without an actuation', ZERO_TWIST, 'decision_kind', 1),
    ('command kind without an actuation', ZERO_TWIST, 'command_kind', 1),
    ('received stamp without an actuation', ZERO_TWIST, 'actuation_received_ns', 7),
    ('position not float32', HELD, 'position', (0.1, 0.0, 0.0)),
    ('position infinite', HELD, 'position', (math.inf, 0.0, 0.0)),
    ('position beyond float32', HELD, 'position', (1e39, 0.0, 0.0)),
    ('position of two axes', HELD, 'position', (0.0, 0.0)),
    ('velocity a bool', HELD, 'velocity', (True, 0.0, 0.0)),
    ('yaw a string', HELD, 'yaw', '0'),
    ('yaw infinite', HELD, 'yaw', -math.inf),
    ('px4 mode with a twist', HELD, 'twist_linear', (1.0, 0.0, 0.0)),
    ('twist NaN', ZERO_TWIST, 'twist_angular', (NAN, 0.0, 0.0)),
    ('twist mode with a position', ZERO_TWIST, 'position', (1.0, 0.0, 0.0)),
    ('twist mode with a velocity not controlled', ZERO_TWIST, 'velocity', (NAN, 0.0, 0.0)),
    ('twist mode with a yaw', ZERO_TWIST, 'yaw', 0.5),
    ('hold with a vehicle command', HELD, 'vehicle_command', 21),
    ('vehicle command other than land / RTL', LANDING, 'vehicle_command', 185),
    ('vehicle command without its id', LANDING, 'vehicle_command', 0),
    ('schema_version', HELD, 'schema_version', 2),
]


@pytest.mark.parametrize(('case', 'valid', 'field', 'bad'), REJECTIONS,
                         ids=[case[0] for case in REJECTIONS])
def test_invalid_record_is_rejected_naming_the_field(
    case: str, valid: GateEmission, field: str, bad: object
) -> None:
    """Replacing one field by a bad value raises ContractError naming that field."""
    with pytest.raises(ContractError, match=rf'GateEmission\.{field}'):
        dataclasses.replace(valid, **{field: bad})  # type: ignore[arg-type]
