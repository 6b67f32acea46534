"""The configuration changes a Ghost run recorded (ghost_interfaces/msg/ConfigurationChange).

The start configuration is in manifest.json (``config``); each change a node applied while it
ran is a message on ghost/configuration (whatever namespace or remap it was recorded under:
found by its type). The verifier reads them before judging any cycle, since a change may reach
the recorder after the first cycle computed with it.
"""

from __future__ import annotations

from dataclasses import dataclass
import os

from .typed_read import read_typed

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
    return tuple(
        RecordedChange(message.log_time_ns, message.topic, str(message.decoded.node),
                       int(message.decoded.in_force_after_stamp_ns),
                       str(message.decoded.configuration))
        for message in read_typed(bag, frozenset({CONFIGURATION_CHANGE_TYPE}),
                                  'the configuration changes'))
