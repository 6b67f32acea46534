"""The one use of mcap_ros2's private API: the ros2msg schema parser its decoder uses.

Relies on two private names of ``mcap_ros2._dynamic`` (mcap-ros2-support, checked against
version 0.6.0, the pin of requirements-ros.txt):

- ``_for_each_msgdef(schema_name, schema_text, fn)``: splits a concatenated ros2msg schema
  (``===`` separators, ``MSG: pkg/Type`` lines) and calls ``fn(name, short_name, msgdef)``
  with each section parsed into a ``MessageSpecification``;
- ``TimeDefinition``: the ``MessageSpecification`` (``uint32 sec``, ``uint32 nanosec``) the
  decoder uses for ``builtin_interfaces/Time`` and ``Duration``, which schemas do not embed.

Why: ghost_bag generates its own CDR decoders (``ghost_bag.cdr``), and ghost_verify checks
the schemas of a bag (``ghost_verify.schema``), from the very definitions mcap_ros2's
decoder builds (``generate_dynamic``), so that they read a payload exactly as mcap_ros2
does. mcap_ros2's public API (``mcap_ros2.decoder.DecoderFactory``) returns decoders only,
never the parsed definitions, and the parser it uses is itself vendored privately
(``mcap_ros2._vendor``).
``ghost_bag/test/test_shims.py`` fails, saying what changed, when the installed version is
not the pinned one or these names are gone or changed; re-check this module against the new
version before moving the pin (and CHECKED_VERSION).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcap_ros2._dynamic import _for_each_msgdef, TimeDefinition

__all__ = ['CHECKED_VERSION', 'for_each_msgdef', 'message_definitions']

#: The mcap-ros2-support version this shim was checked against (requirements-ros.txt's pin).
CHECKED_VERSION = '0.6.0'


def for_each_msgdef(
    schema_name: str, schema_text: str, fn: Callable[[str, str, Any], None]
) -> None:
    """Call ``fn(full_name, short_name, msgdef)`` for each message the schema text defines.

    mcap_ros2's own parsing (``_for_each_msgdef``), so what it raises on a bad schema too.
    """
    _for_each_msgdef(schema_name, schema_text, fn)


def message_definitions(schema_name: str, schema_text: str) -> dict[str, Any]:
    """The message definitions mcap_ros2's ``generate_dynamic`` builds for this schema.

    Its builtin Time and Duration, then every message of the schema text, under its full
    (``pkg/msg/Type``) and short (``pkg/Type``) names.
    """
    msgdefs: dict[str, Any] = {
        'builtin_interfaces/Time': TimeDefinition,
        'builtin_interfaces/Duration': TimeDefinition,
    }

    def handle(name: str, short_name: str, msgdef: Any) -> None:
        msgdefs[name] = msgdef
        msgdefs[short_name] = msgdef

    for_each_msgdef(schema_name, schema_text, handle)
    return msgdefs
