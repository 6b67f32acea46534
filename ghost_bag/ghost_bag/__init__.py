"""ghost_bag: Ghost's one home for reading and writing rosbag2 MCAP bags.

- :mod:`ghost_bag.layout` — the rosbag2 directory layout (metadata.yaml, the .mcap files and
  their order, refusal of storage options that cannot be read);
- :mod:`ghost_bag.mcap_read` — the streaming MCAP reader that diagnoses damage
  (ReadError, ReadErrorKind) and yields raw records (or what a subclass decodes);
- :mod:`ghost_bag.manifest` — the signed run manifest's format, computation, signing and
  writing (checking it is ghost_verify's);
- :mod:`ghost_bag.write` — the bag writer, the only module importing the writer-only
  libraries (rosbags, numpy). Import it explicitly; nothing here imports it, so reading
  needs neither.
"""

__all__ = ['errors', 'layout', 'manifest', 'mcap_read', 'write']
