"""The agent's recorded inputs in a rosbag2 MCAP bag: beliefs, fixes and the vehicle's status.

/state/nav beliefs, /observations fixes and /vehicle_status statuses (what the decisions'
context records, ADR-0021 §2).

One home for turning a recorded input stream back into what the agent receives: the offline
replay (the bringup's ``ghost_replay``), the input player that feeds the node graph over DDS
(``ghost_run --input``) and the auditor's re-derivation (ghost_verify's ``verify_all``)
all read their inputs here. Each message is decoded into its dict by a decoder generated
from the schema the bag embeds (``ghost_bag.cdr``, which reads a payload exactly as
mcap-ros2-support does, several times faster) and converted by ``ghost_core.ros_inputs``, as
the nodes convert what they receive, and keeps its raw CDR bytes, so it can be republished or
copied unchanged. No rclpy, rosbags or numpy here.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
import os
from pathlib import Path
import struct
from typing import Any

from mcap.exceptions import McapError
from mcap.reader import make_reader, NonSeekingReader

from ghost_core.contracts import VehicleStatus
from ghost_core.ros_inputs import belief_sample, observation_of
from ghost_core.samples import BeliefSample, Observation
from ghost_core.wire import parse_vehicle_status

from .cdr import compile_decoder, DictDecoder
from .errors import BagError, InputBagError
from .installed import GHOST_PACKAGE, installed_definition_problems
from .layout import one_line, resolve_bag

__all__ = ['InputBagError', 'InputMessage', 'OBSERVATION_TYPE', 'STATE_TYPE', 'STATUS_TYPE',
           'read_file_inputs', 'read_inputs']

STATE_TYPE = 'nav_msgs/msg/Odometry'
OBSERVATION_TYPE = 'geometry_msgs/msg/PoseWithCovarianceStamped'
STATUS_TYPE = 'ghost_interfaces/msg/VehicleStatus'


@dataclass(frozen=True, slots=True)
class InputMessage:
    """One input as recorded: what the agent takes from it, and the message as it was."""

    log_time_ns: int
    topic: str
    type_name: str
    data: bytes
    sample: BeliefSample | Observation | VehicleStatus


def read_inputs(
    bag: str | os.PathLike[str],
    state_topic: str = '/state/nav',
    observations_topic: str = '/observations',
    status_topic: str = '/vehicle_status',
) -> Iterator[InputMessage]:
    """Yield the bag's beliefs, fixes and statuses in log-time order (files in rosbag2 order).

    Log-time order is the order a live graph received them. Raises InputBagError when the bag
    cannot be opened or read, when the state topic is missing, or when a topic has another
    type than the agent takes. A bag without the observations topic is valid (the agent then
    runs without fixes), and so is one without the status topic (the decisions' context is
    then UNKNOWN).
    """
    try:
        layout = resolve_bag(bag)
    except BagError as err:
        raise InputBagError(str(err)) from err
    seen_state = False
    for path in layout.files:
        for message in read_file_inputs(path, state_topic, observations_topic,
                                        status_topic=status_topic):
            seen_state = seen_state or message.topic == state_topic
            yield message
    if not seen_state:
        raise InputBagError(f'{Path(bag)}: no {STATE_TYPE} messages on {state_topic} '
                            '(use --state-topic to name the belief topic)')


def read_file_inputs(
    path: Path,
    state_topic: str,
    observations_topic: str,
    *,
    log_time_order: bool = True,
    status_topic: str = '',
) -> Iterator[InputMessage]:
    """Yield the beliefs, fixes and (with `status_topic`) statuses of one .mcap file of a bag.

    In log-time order, or with `log_time_order` False in the order the records are in the
    file (the order the recorder received them). An empty topic name reads nothing. Raises
    InputBagError (with the error behind it as its ``__cause__``, if any) when the file cannot
    be read, a topic has another type than the agent takes, or a message is not usable.
    """
    wanted = {state_topic: STATE_TYPE, observations_topic: OBSERVATION_TYPE,
              status_topic: STATUS_TYPE}
    wanted.pop('', None)
    decoders: dict[int, DictDecoder] = {}
    try:
        with path.open('rb') as stream:
            # In the file's order, a stream: mcap's seeking reader queues every chunk first.
            reader = make_reader(stream) if log_time_order else NonSeekingReader(stream)
            for schema, channel, message in reader.iter_messages(
                    topics=list(wanted), log_time_order=log_time_order):
                type_name = schema.name if schema is not None else ''
                if type_name != wanted[channel.topic]:
                    raise InputBagError(f'{path}: topic {channel.topic} has type '
                                        f'{type_name or "(no schema)"}, expected '
                                        f'{wanted[channel.topic]}')
                assert schema is not None  # it has the type wanted
                decode = decoders.get(schema.id)
                if decode is None:
                    decode = decoders[schema.id] = _decoder(path, channel.topic, schema.name,
                                                            schema.data)
                try:
                    decoded = decode(message.data)
                except (struct.error, ValueError, IndexError, TypeError, KeyError,
                        RecursionError) as err:
                    raise InputBagError(f'{path}: {channel.topic} message at log time '
                                        f'{message.log_time} cannot be decoded: '
                                        f'{one_line(err) or type(err).__name__}') from err
                sample = _sample(path, channel.topic, message.log_time, decoded,
                                 state_topic, observations_topic)
                yield InputMessage(message.log_time, channel.topic, type_name,
                                   bytes(message.data), sample)
    except InputBagError:
        raise
    except struct.error as err:  # mcap reads the magic with struct: a file under 8 bytes
        raise InputBagError(f'{path}: not an MCAP file ({path.stat().st_size} bytes, shorter '
                            'than its magic)') from err
    # A damaged record length sends mcap's reader to read more than the file or the index
    # allows (OverflowError, MemoryError before anything is allocated), a damaged channel id
    # to a channel its summary lacks (KeyError): damage, not a fault.
    except (OSError, McapError, ValueError, EOFError, OverflowError, MemoryError,
            KeyError) as err:
        raise InputBagError(f'{path}: not a readable MCAP file: {_why(path, err)}') from err


def _sample(path: Path, topic: str, log_time: int, decoded: Any, state_topic: str,
            observations_topic: str) -> BeliefSample | Observation | VehicleStatus:
    """The agent's input one decoded message is; InputBagError when it is not usable."""
    try:
        if topic == state_topic:
            return belief_sample(decoded)
        if topic == observations_topic:
            return observation_of(decoded)
        return parse_vehicle_status(decoded)
    except (ValueError, TypeError, AttributeError, KeyError) as err:
        raise InputBagError(f'{path}: {topic} message at log time {log_time} is not usable: '
                            f'{err}') from err


def _decoder(path: Path, topic: str, schema_name: str, schema_data: bytes) -> DictDecoder:
    """The decoder of one input channel, from the schema the bag embeds for it.

    A ghost_interfaces input (the vehicle status) must be the installed definition
    (``ghost_bag.installed``); InputBagError says what differs, or why the schema cannot be
    read.
    """
    try:
        text = schema_data.decode('utf-8')
        different = (installed_definition_problems(schema_name, text)
                     if schema_name.startswith(f'{GHOST_PACKAGE}/') else ())
        decoder = None if different else compile_decoder(schema_name, text)
    except Exception as err:  # noqa: BLE001 - the schema parser raises many kinds of error
        raise InputBagError(f'{path}: the schema of {topic} ({schema_name}) cannot be read: '
                            f'{one_line(err) or type(err).__name__}') from err
    if decoder is None:
        raise InputBagError(f'{path}: the schema of {topic} is not the installed '
                            f'ghost_interfaces definition: {"; ".join(different)}')
    return decoder


def _why(path: Path, err: Exception) -> str:
    """What is wrong with a file mcap could not read, as the damage reader finds it."""
    from .mcap_read import RawBagReader

    try:
        reader = RawBagReader(path)
        for _ in reader.read():
            pass
        damage = reader.read_errors
    except (BagError, OSError):
        damage = ()
    if damage:
        return (f'{damage[0].detail} (verify_all reads what a damaged Ghost bag still '
                'holds)')
    return one_line(err) or type(err).__name__
