"""Messages of given types from a rosbag2 MCAP bag, decoded, whatever topic they were recorded on.

For the small reads beside the auditor's own pass: the configuration changes a run recorded
(``recorded_configuration``), the decisions it made (``recorded_judgements``). The summary's
channel list names the topics to read; a bag without a summary (a recorder that did not close)
is read whole. Only the wanted messages are decoded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
import os
import struct
from typing import Any

from mcap.exceptions import McapError
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory

from .errors import BagError
from .installed import GHOST_PACKAGE, installed_definition_problems
from .layout import resolve_bag

__all__ = ['read_typed', 'TypedMessage']


@dataclass(frozen=True, slots=True)
class TypedMessage:
    """One decoded message: when it was logged, on which topic, of which type."""

    log_time_ns: int
    topic: str
    type_name: str
    decoded: Any


def read_typed(bag: str | os.PathLike[str], type_names: frozenset[str],
               what: str) -> Iterator[TypedMessage]:
    """Yield the bag's messages of `type_names` in log-time order (files in rosbag2 order).

    Raises BagError naming the file and `what` was being read when a file cannot be read, a
    payload cannot be decoded (truncated, malformed, nested too deep) or a ghost_interfaces
    schema is not the installed definition (``ghost_bag.installed``).
    """
    for path in resolve_bag(bag).files:
        try:
            yield from _file_messages(path, type_names)
        except BagError as err:
            raise BagError(f'{path}: {what} cannot be read: {err}') from err
        except RecursionError as err:
            raise BagError(f'{path}: {what} cannot be read: nested too deeply') from err
        except (OSError, McapError, ValueError, EOFError, KeyError, IndexError, TypeError,
                AttributeError, struct.error, OverflowError, MemoryError) as err:
            raise BagError(f'{path}: {what} cannot be read: '
                           f'{" ".join(str(err).split()) or type(err).__name__}') from err


def _file_messages(path: os.PathLike[str], type_names: frozenset[str]) -> Iterator[TypedMessage]:
    with open(path, 'rb') as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        summary = reader.get_summary()
        topics: list[str] | None = None
        if summary is not None:
            wanted = {schema_id for schema_id, schema in summary.schemas.items()
                      if schema.name in type_names}
            topics = [channel.topic for channel in summary.channels.values()
                      if channel.schema_id in wanted]
            if not topics:
                return
        factory = DecoderFactory()
        decoders: dict[int, Callable[[bytes], Any]] = {}
        for schema, channel, message in reader.iter_messages(topics=topics,
                                                             log_time_order=True):
            if schema is None or schema.name not in type_names:
                continue
            decode = decoders.get(schema.id)
            if decode is None:
                found = _decoder(factory, channel.topic, channel.message_encoding, schema)
                if found is None:
                    raise ValueError(f'{channel.topic}: no decoder for encoding '
                                     f'{channel.message_encoding!r}')
                decode = decoders[schema.id] = found
            yield TypedMessage(message.log_time, channel.topic, schema.name,
                               decode(message.data))


def _decoder(factory: DecoderFactory, topic: str, encoding: str,
             schema: Any) -> Callable[[bytes], Any] | None:
    """Return a channel's decoder (None: no decoder for its encoding).

    BagError when its schema cannot be parsed, or a ghost_interfaces schema is not the
    installed definition.
    """
    try:
        problems: tuple[str, ...] = ()
        if schema.name.startswith(f'{GHOST_PACKAGE}/'):
            problems = installed_definition_problems(schema.name, schema.data.decode('utf-8'))
        found: Callable[[bytes], Any] | None = (
            None if problems else factory.decoder_for(encoding, schema))
    except Exception as err:  # noqa: BLE001 - the schema parser raises many kinds of error
        raise BagError(f'{topic}: the schema ({schema.name}) cannot be parsed: '
                       f'{" ".join(str(err).split()) or type(err).__name__}') from err
    if problems:
        raise BagError(f'{topic}: the embedded schema is not the installed ghost_interfaces '
                       f'definition: {"; ".join(problems)}')
    return found
