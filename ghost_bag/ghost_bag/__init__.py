"""ghost_bag: Ghost's one home for reading and writing rosbag2 MCAP bags.

- :mod:`ghost_bag.layout` — the rosbag2 directory layout (metadata.yaml, the .mcap files and
  their order, refusal of storage options that cannot be read);
- :mod:`ghost_bag.mcap_read` — the streaming MCAP reader that diagnoses damage
  (ReadError, ReadErrorKind) and yields raw records (or what a subclass decodes);
- :mod:`ghost_bag.recorded_inputs` — the agent's recorded inputs (/state/nav beliefs,
  /observations fixes) read back from a bag, for the replay, the input player and the
  auditor's re-derivation (InputBagError);
- :mod:`ghost_bag.manifest` — the signed run manifest's format, computation, signing and
  writing (checking it is ghost_verify's);
- :mod:`ghost_bag.mcap_ros2_shim` — the one use of mcap_ros2's private API (its ros2msg
  schema parser, for ghost_verify's decoders and schema check);
- :mod:`ghost_bag.write` — the bag writer, the only module importing the writer-only
  libraries (rosbags, numpy), and the one shim of rosbags' non-public API. Import it
  explicitly; nothing here imports it, so reading needs neither.

mcap is used through its public API only (mcap_read reads records with its record classes).
"""

__all__ = ['errors', 'layout', 'manifest', 'mcap_read', 'mcap_ros2_shim', 'recorded_inputs',
           'write']
