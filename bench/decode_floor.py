"""The verifier's floor: read and decode every message of a bag, and do nothing else.

Two well-kept decoders, both driven by the schemas embedded in the bag (as the verifier is):

- ``rosbags``: rosbags' rosbag2 reader, types registered from each connection's embedded
  ros2msg schema (``get_types_from_msg``), ``Typestore.deserialize_cdr``;
- ``mcap_ros2``: mcap's streaming record reader (what the verifier reads with) and
  mcap-ros2-support's ``DecoderFactory``.

Two more decode passes, for reference (not floors, see docs/performance.md):

- ``ghost_verify``: mcap's streaming record reader and the verifier's own decoder
  (``ghost_bag.cdr``: generated from the embedded schemas, straight to message dicts);
- ``rclpy``: ROS 2's own C type support (``rclpy.serialization.deserialize_message``), which
  needs the message packages built and installed, so a verifier of the bag alone cannot use.

Every message of the bag is decoded, whatever its topic: the Ghost messages and the inputs
(/state/nav, /observations, /vehicle_status), which verify_all also reads (its re-derivation
and RECOVERY-v1). Prints one JSON line: decoder, messages decoded, seconds spent in the pass,
and the bag's message count per topic (from metadata.yaml, read after the timed pass).

    python bench/decode_floor.py BAG --decoder rosbags
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
import io
import json
from pathlib import Path
import sys
import time
from typing import Any

__all__ = ['DECODERS', 'FLOOR_DECODERS', 'bag_topics', 'decode_all', 'main']


def _mcap_files(bag: Path) -> list[Path]:
    """The bag's .mcap files in metadata order (or the .mcap file itself)."""
    if bag.is_file():
        return [bag]
    import yaml

    info = yaml.safe_load((bag / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    return [bag / name for name in info['relative_file_paths']]


def bag_topics(bag: Path) -> dict[str, int]:
    """The bag's message count per topic, as its metadata.yaml lists them ({} for a file)."""
    if bag.is_file():
        return {}
    import yaml

    info = yaml.safe_load((bag / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    return {entry['topic_metadata']['name']: int(entry['message_count'])
            for entry in info.get('topics_with_message_count', [])}


#: The six Ghost message topics (what verify_erur reads), for a floor of those only.
GHOST_TOPICS = ('/self_assessment', '/predictions', '/prediction_outcomes',
                '/self_assessment/calibrated', '/decisions', '/actuations')


def decode_rosbags(bag: Path, topics: Sequence[str] = ()) -> int:
    """Decode every message (of `topics`, if any) with rosbags (types from embedded schemas)."""
    from rosbags.rosbag2 import Reader
    from rosbags.typesys import get_types_from_msg, get_typestore, Stores

    typestore = get_typestore(Stores.EMPTY)
    count = 0
    with Reader(bag) as reader:
        types: dict[str, Any] = {}
        for connection in reader.connections:
            types.update(get_types_from_msg(connection.msgdef.data, connection.msgtype))
        typestore.register(types)
        deserialize = typestore.deserialize_cdr
        connections = [c for c in reader.connections if not topics or c.topic in topics]
        for connection, _log_time, data in reader.messages(connections=connections):
            deserialize(data, connection.msgtype)
            count += 1
    return count


def decode_mcap_ros2(bag: Path) -> int:
    """Decode every message with mcap's stream reader and mcap-ros2-support's decoders."""
    from mcap_ros2.decoder import DecoderFactory

    factory = DecoderFactory()

    def decoder_for(schema: Any) -> Callable[[bytes], Any]:
        decoder = factory.decoder_for('cdr', schema)
        assert decoder is not None
        return decoder
    return _mcap_messages(bag, decoder_for)


def _mcap_messages(bag: Path, decoder_for: Callable[[Any], Callable[[bytes], Any]]) -> int:
    """Decode every message with mcap's stream reader and `decoder_for(schema)`."""
    from mcap.records import Channel, Message, Schema
    from mcap.stream_reader import StreamReader

    count = 0
    for path in _mcap_files(bag):
        schemas: dict[int, Schema] = {}
        decoders: dict[int, Callable[[bytes], Any]] = {}
        with path.open('rb') as raw:
            stream = io.BufferedReader(raw, buffer_size=1 << 20)
            for record in StreamReader(stream, validate_crcs=False).records:
                if isinstance(record, Message):
                    decoders[record.channel_id](record.data)
                    count += 1
                elif isinstance(record, Schema):
                    schemas[record.id] = record
                elif isinstance(record, Channel):
                    decoders[record.id] = decoder_for(schemas[record.schema_id])
    return count


def decode_ghost_verify(bag: Path) -> int:
    """Decode every message with the verifier's own decoder (ghost_bag.cdr), to dicts."""
    from ghost_bag.cdr import compile_decoder

    return _mcap_messages(bag, lambda schema: compile_decoder(schema.name,
                                                              schema.data.decode()))


def decode_rclpy(bag: Path) -> int:
    """Decode every message with rclpy's C type support (the installed message packages)."""
    import importlib

    from rclpy.serialization import deserialize_message

    def decoder_for(schema: Any) -> Callable[[bytes], Any]:
        package, _, name = schema.name.split('/')
        message_type = getattr(importlib.import_module(f'{package}.msg'), name)
        return lambda data: deserialize_message(data, message_type)

    return _mcap_messages(bag, decoder_for)


DECODERS: dict[str, Callable[[Path], int]] = {
    'rosbags': decode_rosbags,
    'mcap_ros2': decode_mcap_ros2,
    'ghost_verify': decode_ghost_verify,
    'rclpy': decode_rclpy,
}
#: The floor candidates: well-kept decoders driven by the schemas in the bag.
FLOOR_DECODERS = ('rosbags', 'mcap_ros2')


def decode_all(bag: Path, decoder: str, topics: Sequence[str] = ()) -> tuple[int, float]:
    """Decode every message of `bag` (of `topics`: rosbags only); return (messages, seconds)."""
    start = time.perf_counter()
    count = decode_rosbags(bag, topics) if topics else DECODERS[decoder](bag)
    return count, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('bag', type=Path)
    parser.add_argument('--decoder', choices=sorted(DECODERS), default='rosbags')
    parser.add_argument('--ghost-topics', action='store_true',
                        help='decode only the six Ghost message topics (what verify_erur '
                             'reads), with rosbags')
    args = parser.parse_args(argv)
    if args.ghost_topics and args.decoder != 'rosbags':
        parser.error('--ghost-topics decodes with rosbags only')
    count, seconds = decode_all(args.bag, args.decoder,
                                GHOST_TOPICS if args.ghost_topics else ())
    print(json.dumps({'decoder': args.decoder, 'messages': count, 'seconds': seconds,
                      'topics': bag_topics(args.bag)}))
    return 0


if __name__ == '__main__':
    sys.exit(main())
