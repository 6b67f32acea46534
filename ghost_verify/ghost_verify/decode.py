"""Decoding ghost messages from a bag: a ghost channel's decoders, compiled from its schema.

The CDR decoders themselves are ghost_bag.cdr's; here a ghost channel's embedded schema is
checked against the fields the verifier reads, compiled once into a message-dict decoder (and, for
the streams some message cites, one that also renders the canonical JSON that is hashed),
and a decoded message's cycle stamp is taken.
"""

from __future__ import annotations

from dataclasses import dataclass

from ghost_bag.cdr import compile_decoder, compile_json_decoder, DictDecoder, JsonDecoder
from ghost_bag.errors import BagFormatError
from ghost_bag.installed import installed_definition_problems
from ghost_bag.layout import one_line

from .errors import SchemaMismatchError
from .events import GhostTopicKind, stamp_ns_of
from .schema import quiet_parser, schema_problems

__all__ = [
    'HASHED_KINDS',
    'GhostChannel',
    'compile_ghost_channel',
    'full_type_name',
    'stamp_ns',
]

#: The streams some message cites by content address (SPEC section 4); only their messages
#: are hashed. Predictions, outcomes and actuations are cited by none.
HASHED_KINDS = frozenset({GhostTopicKind.RAW_ASSESSMENT, GhostTopicKind.CALIBRATED,
                          GhostTopicKind.RATIONALE})
#: The nested messages hashed too: the raw assessment a calibrated one carries inline (the
#: chain compares its address with the claimed one).
_HASHED_PARTS: dict[GhostTopicKind, tuple[str, ...]] = {
    GhostTopicKind.CALIBRATED: ('raw_assessment',)}


@dataclass(frozen=True, slots=True)
class GhostChannel:
    """A ghost channel of a bag, ready to decode: its topic, type, stream and decoders."""

    topic: str
    type_name: str
    kind: GhostTopicKind
    decoder: DictDecoder
    #: For the hashed streams: the decoder that also renders the canonical JSON.
    hashing: JsonDecoder | None
    #: The nested messages whose JSON `hashing` gives apart (see _HASHED_PARTS).
    parts: tuple[str, ...]


def compile_ghost_channel(where: str, topic: str, kind: GhostTopicKind, schema_name: str,
                          text: str) -> GhostChannel:
    """Check a ghost channel's schema text and compile its decoders (`where` names it).

    Raises SchemaMismatchError when the schema does not define the fields the verifier
    reads, or differs in any field from the installed ghost_interfaces definition
    (``ghost_bag.installed``: a decoy layout would be decoded as another message), and
    BagFormatError when it cannot be parsed.
    """
    problems = schema_problems(kind, schema_name, text)
    if problems:
        raise SchemaMismatchError(
            f'{where}: the embedded schema does not define the fields the verifier reads: '
            f'{"; ".join(problems)}. The bag was written with another definition of this '
            'type (or its schema record is damaged); its messages cannot be judged without '
            'being mis-read'
        )
    try:
        with quiet_parser():
            different = installed_definition_problems(schema_name, text)
            if different:
                raise SchemaMismatchError(
                    f'{where}: the embedded schema is not the installed ghost_interfaces '
                    f'definition: {"; ".join(different)}. Its messages would be decoded as '
                    'another layout; the verifier decodes Ghost messages with the installed '
                    'definitions only (verify a bag of another ghost_interfaces version with '
                    'that version)')
            decoder = compile_decoder(schema_name, text)
            hashing = None
            if kind in HASHED_KINDS:
                # The canonical JSON (what is hashed) rendered in the decoding pass.
                hashing = compile_json_decoder(schema_name, text, _HASHED_PARTS.get(kind, ()))
    except SchemaMismatchError:
        raise
    except Exception as err:  # noqa: BLE001 - schema text comes from the bag
        raise BagFormatError(f'{where}: schema cannot be parsed: {one_line(err)}') from err
    return GhostChannel(topic, full_type_name(schema_name), kind, decoder, hashing,
                        _HASHED_PARTS.get(kind, ()))


def stamp_ns(msg: dict[str, object], path: object, topic: str, log_time: int) -> int:
    """header.stamp of a decoded ghost message in nanoseconds (stamp_ns_of, without its cost).

    The message is named (file `path`, `topic`, `log_time`) only when the stamp is not where
    the schema check promised it.
    """
    header = msg.get('header')
    stamp = header.get('stamp') if type(header) is dict else None
    if type(stamp) is dict:
        sec, nanosec = stamp.get('sec'), stamp.get('nanosec')
        if type(sec) is int and type(nanosec) is int:
            return sec * 1_000_000_000 + nanosec
    # Not the shape the schema check promised: let stamp_ns_of say what is wrong, and where.
    return stamp_ns_of(msg, f'{path}: {topic} at log time {log_time} ns')


def full_type_name(name: str) -> str:
    """``pkg/msg/Type`` for a schema named ``pkg/Type`` (other names unchanged)."""
    parts = name.split('/')
    if len(parts) == 2:
        return f'{parts[0]}/msg/{parts[1]}'
    return name


