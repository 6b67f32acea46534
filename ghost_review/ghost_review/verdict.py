"""A flight's verdict at a glance: one word, its limits, and where the first failure is.

Built from what ``verify_all`` reports of the bag (ghost_verify.fleet.verify_bag: its printed
lines, its exit code and its JSON document), never re-judged here. The word is
``NOT VERIFIED`` when verify_all's exit code is not 0, else ``VERIFIED WITH LIMITS`` when
the verification could not see everything (``limits``), else ``VERIFIED``. Each printed line
keeps verify_all's wording and gets the status whose colour it is shown in.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from ghost_core.properties import JsonValue

__all__ = ['NOT_VERIFIED', 'VERIFIED', 'WITH_LIMITS', 'Check', 'Status', 'Verdict',
           'verdict_of']

VERIFIED, NOT_VERIFIED, WITH_LIMITS = 'VERIFIED', 'NOT VERIFIED', 'VERIFIED WITH LIMITS'
#: A printed line's check -> its section of verify_all's JSON document.
_SECTIONS = {'BAUD-v1': 'baud', 'ERUR-v1': 'erur', 'chain': 'trace', 'parameters': 'parameters',
             'history': 'history', 'conformance': 'conformance', 'RECOVERY-v1': 'recovery',
             'GATE-v1': 'gate', 'gate': 'gate', 'replay': 'replay', 'manifest': 'manifest'}
#: Where a section lists what failed (each entry carries the stamp of its cycle).
_FAILURE_KEYS = ('violations', 'links', 'first_difference', 'history_mismatch', 'mismatches',
                 'incomplete_cycles', 'invalid_outcomes', 'problems')
_STAMP_KEYS = ('cycle_stamp_ns', 'timestamp_ns', 'stamp_ns', 'record_stamp_ns')
_FAIL_WORDS = ('VIOLATED', 'DIFFERS', 'FAILS', 'BROKEN', 'NOT VERIFIED', 'does not verify')
#: The preconditions of the properties, said beside a vacuous one.
PRECONDITIONS = {'BAUD-v1': 'no drift precondition ever held (drift was never detected)',
                 'ERUR-v1': 'no cycle was raw KNOWN outside drift',
                 'RECOVERY-v1': 'no recorded belief was recovered (KNOWN and confirmed) for R'}


class Status(StrEnum):
    """How a line or a verdict is shown (the CSS class of its colour)."""

    FAIL = 'fail'
    LIMIT = 'limit'
    PASS = 'pass'
    INFO = 'info'


@dataclass(frozen=True, slots=True)
class Check:
    """One line verify_all printed: its check, its text, its status, where it first failed."""

    name: str
    text: str
    status: Status
    stamp_ns: int | None = None


@dataclass(frozen=True, slots=True)
class Verdict:
    """The word, its status (colour), the limits named, and every printed line."""

    word: str
    status: Status
    limits: tuple[str, ...]
    #: Every printed line but the verdict line, in verify_all's order.
    checks: tuple[Check, ...]
    #: The check verify_all's verdict line names first ('' when it holds).
    lead: str = ''

    @property
    def failures(self) -> tuple[Check, ...]:
        """The failing checks, the one verify_all names first leading."""
        failing = [check for check in self.checks if check.status is Status.FAIL]
        return tuple(sorted(failing, key=lambda check: check.name != self.lead))

    @property
    def named_limits(self) -> tuple[str, ...]:
        """The limits as said beside the verdict: a vacuous property with its precondition."""
        named = []
        for limit in self.limits:
            name = limit.removesuffix(' vacuous')
            named.append(f'{limit}: {PRECONDITIONS[name]}' if name in PRECONDITIONS
                         and limit.endswith(' vacuous') else limit)
        return tuple(named)


def _vacuous(check: Check) -> bool:
    """A property that held only because its precondition never held."""
    return check.status is Status.LIMIT and 'vacuous' in check.text


#: The bridges verify_all re-derives; each has its own line and replay section.
_BRIDGES = ('px4_bridge', 'ap_bridge', 'mavros_bridge')


def _section(document: Mapping[str, JsonValue] | None, name: str) -> Mapping[str, JsonValue]:
    if document is None:
        return {}
    key = _SECTIONS.get(name)
    if key is None and name == 'cycles':
        return {'incomplete_cycles': document.get('incomplete_cycles')}
    if key is None and name in _BRIDGES:  # each bridge's re-derivation, in the replay's
        replay = document.get('replay')
        value = replay.get(name) if isinstance(replay, Mapping) else None
    else:
        value = document.get(key or '')
    return value if isinstance(value, Mapping) else {}


def _stamps(value: JsonValue) -> Iterator[int]:
    """Every cycle stamp in an entry that says what failed (nested entries too)."""
    if isinstance(value, Mapping):
        for key, inner in value.items():
            if key in _STAMP_KEYS and isinstance(inner, int) and not isinstance(inner, bool):
                yield inner
            elif isinstance(inner, (Mapping, list)):
                yield from _stamps(inner)
    elif isinstance(value, list):
        for item in value:
            yield from _stamps(item)


def _first_stamp(section: Mapping[str, JsonValue]) -> int | None:
    found = [stamp for key in _FAILURE_KEYS for stamp in _stamps(section.get(key))]
    return min(found) if found else None


def _status(name: str, text: str, section: Mapping[str, JsonValue]) -> Status:
    if name in ('note', 'warning'):
        return Status.INFO
    if section.get('possible') is False or section.get('applicable') is False:
        # Could not be checked at all: a limit (the gate's line is printed only when it applies).
        return Status.LIMIT
    if section.get('holds') is False or section.get('ok') is False \
            or any(word in text for word in _FAIL_WORDS):
        return Status.FAIL
    if section.get('vacuous') is True or name == 'unverifiable' or 'vacuous' in text:
        return Status.LIMIT
    if name == 'manifest' and section.get('status') != 'verified':
        return Status.INFO
    return Status.PASS


def _limits(checks: Sequence[Check], document: Mapping[str, JsonValue] | None,
            extra: Sequence[str]) -> list[str]:
    limits = [f'{check.name} vacuous' for check in checks
              if _vacuous(check)]
    replay = _section(document, 'replay')
    if replay.get('possible') is False:
        limits.append('re-derivation not possible')
    parameters = _section(document, 'parameters')
    authority = parameters.get('authority') if parameters else None
    if any(check.name == 'warning' and 'configuration is not recorded' in check.text
           for check in checks) or authority not in (None, 'run_configuration'):
        limits.append('no configuration record')
    elif document is not None and not parameters:
        limits.append('no configuration record')
    unverifiable = document.get('cycles_unverifiable') if document is not None else None
    if isinstance(unverifiable, int) and unverifiable > 0:
        seen = document.get('cycles_seen') if document is not None else None
        limits.append(f'coverage: {unverifiable} of {seen} cycles unverifiable')
    return list(dict.fromkeys([*limits, *extra]))


def verdict_of(lines: Sequence[str], code: int, document: Mapping[str, JsonValue] | None,
               extra_limits: Sequence[str] = ()) -> Verdict:
    """The verdict of one flight from verify_all's lines, exit code and JSON document.

    `extra_limits`: what the review knows the verification cannot see besides (e.g. fixes
    from the GNSS the estimator fuses).
    """
    checks = []
    for line in lines:
        if line.startswith(('VERIFIED', 'NOT VERIFIED')):
            continue  # the verdict line: the word says it
        name = line.split(':', 1)[0] if ':' in line else line
        section = _section(document, name)
        status = _status(name, line, section)
        stamp = _first_stamp(section) if status is Status.FAIL else None
        checks.append(Check(name, line, status, stamp))
    limits = tuple(_limits(checks, document, extra_limits))
    if code != 0:
        # The failure verify_all names first leads (its verdict line names it).
        named = next((line for line in lines if line.startswith('NOT VERIFIED: ')), '')
        first = named.removeprefix('NOT VERIFIED: ').split(':', 1)[0]
        if not any(check.status is Status.FAIL for check in checks):
            first = 'verification'
            checks.insert(0, Check(first, named or f'exit code {code}', Status.FAIL))
        return Verdict(NOT_VERIFIED, Status.FAIL, limits, tuple(checks), first)
    if limits:
        return Verdict(WITH_LIMITS, Status.LIMIT, limits, tuple(checks))
    return Verdict(VERIFIED, Status.PASS, limits, tuple(checks))
