"""The configuration changes a Ghost run recorded (ghost_interfaces/msg/ConfigurationChange).

The start configuration is in manifest.json (``config``); each change a node applied while it
ran is a message on ghost/configuration (whatever namespace or remap it was recorded under:
found by its type). The verifier reads them before judging any cycle, since a change may reach
the recorder after the first cycle computed with it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
import os
from typing import Any

from mcap.exceptions import McapError
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory

from .errors import BagError
from .layout import resolve_bag

__all__ = ['CONFIGURATION_CHANGE_TYPE', 'RecordedChange', 'read_configuration_changes']

CONFIGURATION_CHANGE_TYPE = 'ghost_interfaces/msg/ConfigurationChange'


@dataclass(frozen=True, slots=True)
class RecordedChange:
    """One recorded ConfigurationChange, its fields as they are in the bag."""

    log_time_ns: int
    topic: str
    node: str
    in_force_after_stamp_ns: int
    configuration: str


def read_configuration_changes(bag: str | os.PathLike[str]) -> tuple[RecordedChange, ...]:
    """Every configuration change of the bag, in log-time order (files in rosbag2 order).

    Raises BagError naming the file when one cannot be read (the verifier's own pass reports
    damage in detail; without the changes it cannot know the configuration in force).
    """
    changes: list[RecordedChange] = []
    for path in resolve_bag(bag).files:
        try:
            changes.extend(_file_changes(path))
        except (OSError, McapError, ValueError, EOFError, KeyError) as err:
            raise BagError(f'{path}: the configuration changes cannot be read: '
                           f'{" ".join(str(err).split()) or type(err).__name__}') from err
    return tuple(changes)


def _file_changes(path: os.PathLike[str]) -> Iterator[RecordedChange]:
    with open(path, 'rb') as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        summary = reader.get_summary()
        topics: list[str] | None = None
        if summary is not None:
            wanted = {schema_id for schema_id, schema in summary.schemas.items()
                      if schema.name == CONFIGURATION_CHANGE_TYPE}
            topics = [channel.topic for channel in summary.channels.values()
                      if channel.schema_id in wanted]
            if not topics:
                return
        factory = DecoderFactory()
        decoders: dict[int, Callable[[bytes], Any]] = {}
        for schema, channel, message in reader.iter_messages(topics=topics,
                                                             log_time_order=True):
            if schema is None or schema.name != CONFIGURATION_CHANGE_TYPE:
                continue
            decode = decoders.get(schema.id)
            if decode is None:
                found = factory.decoder_for(channel.message_encoding, schema)
                if found is None:
                    raise ValueError(f'{channel.topic}: no decoder for encoding '
                                     f'{channel.message_encoding!r}')
                decode = decoders[schema.id] = found
            decoded = decode(message.data)
            yield RecordedChange(message.log_time, channel.topic, str(decoded.node),
                                 int(decoded.in_force_after_stamp_ns),
                                 str(decoded.configuration))
