"""The agent's inputs from any rosbag2 MCAP bag: /state/nav beliefs and /observations fixes.

One home for turning a recorded input stream back into what the agent receives: used by the
offline replay (ghost_replay) and by the input player that feeds the node graph over DDS
(ghost_run --input). Messages come in the bag's log-time order, i.e. the order a live graph
received them; each keeps its raw CDR bytes, so it can be republished or copied unchanged.
No rclpy here.
"""

from collections.abc import Iterator
from dataclasses import dataclass
import os
from pathlib import Path

from mcap.exceptions import McapError
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory

from ghost_bag.errors import BagError
from ghost_bag.layout import resolve_bag
from ghost_core.ros_inputs import belief_sample, observation_of
from ghost_core.samples import BeliefSample, Observation

__all__ = ['InputBagError', 'InputMessage', 'STATE_TYPE', 'OBSERVATION_TYPE',
           'observation_of', 'read_inputs']

STATE_TYPE = 'nav_msgs/msg/Odometry'
OBSERVATION_TYPE = 'geometry_msgs/msg/PoseWithCovarianceStamped'


class InputBagError(ValueError):
    """The input bag cannot be read, or does not hold the input topics with their types."""


@dataclass(frozen=True, slots=True)
class InputMessage:
    """One input as recorded: what the agent takes from it, and the message as it was."""

    log_time_ns: int
    topic: str
    type_name: str
    data: bytes
    sample: BeliefSample | Observation


def read_inputs(
    bag: str | os.PathLike[str],
    state_topic: str = '/state/nav',
    observations_topic: str = '/observations',
) -> Iterator[InputMessage]:
    """Yield the bag's beliefs and fixes in log-time order (files in their rosbag2 order).

    Raises InputBagError when the bag cannot be opened or read, when the state topic is
    missing, or when a topic has another type than the agent takes. A bag without the
    observations topic is valid (the agent then runs without fixes).
    """
    try:
        layout = resolve_bag(bag)
    except BagError as err:
        raise InputBagError(str(err)) from err
    seen_state = False
    for path in layout.files:
        for message in _read_file(path, state_topic, observations_topic):
            seen_state = seen_state or message.topic == state_topic
            yield message
    if not seen_state:
        raise InputBagError(f'{Path(bag)}: no {STATE_TYPE} messages on {state_topic} '
                            '(use --state-topic to name the belief topic)')


def _read_file(path: Path, state_topic: str, observations_topic: str) -> Iterator[InputMessage]:
    wanted = {state_topic: STATE_TYPE, observations_topic: OBSERVATION_TYPE}
    try:
        with path.open('rb') as stream:
            reader = make_reader(stream, decoder_factories=[DecoderFactory()])
            for schema, channel, message, decoded in reader.iter_decoded_messages(
                    topics=list(wanted)):
                type_name = schema.name if schema is not None else ''
                if type_name != wanted[channel.topic]:
                    raise InputBagError(f'{path}: topic {channel.topic} has type '
                                        f'{type_name or "(no schema)"}, expected '
                                        f'{wanted[channel.topic]}')
                try:
                    sample: BeliefSample | Observation = (
                        belief_sample(decoded) if channel.topic == state_topic
                        else observation_of(decoded))
                except (ValueError, TypeError, AttributeError) as err:
                    raise InputBagError(f'{path}: {channel.topic} message at log time '
                                        f'{message.log_time} is not usable: {err}') from err
                yield InputMessage(message.log_time, channel.topic, type_name,
                                   bytes(message.data), sample)
    except InputBagError:
        raise
    except (OSError, McapError, ValueError, EOFError) as err:
        raise InputBagError(f'{path}: not a readable MCAP file: {err}') from err
