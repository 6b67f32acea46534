"""The decision trace of ADR-0022, extended to the whole SHA-256 chain of SPEC section 4.

One cohesive job, kept in one module: the chain check, its report and its streaming tracer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
import os
from typing import TypeVar

from ghost_core.levels import DecisionKind
from ghost_core.properties import JsonValue, kind_name

from .bag import DEFAULT_CYCLE_WINDOW, GhostBag
from .events import BagFileDigest, BagInfo, CycleEvent, GhostMessage, Rationale, ReadError
from .report_json import digests_to_json, read_errors_to_json
from .unverifiable import (
    CycleCuts,
    unverifiable_to_json,
    UnverifiableCycle,
)

__all__ = [
    'TRACE_ANALYSIS_VERSION',
    'ChainLink',
    'ChainStatus',
    'DecisionTraceRecord',
    'DecisionTraceReport',
    'DecisionTracer',
    'LinkRecord',
    'trace_decisions',
]

TRACE_ANALYSIS_VERSION = 1


class ChainStatus(StrEnum):
    """State of one hash link (closed catalogue of ADR-0022).

    `assessment_missing` keeps its ADR-0022 name for every link: the claimed target (an
    assessment, a calibrated assessment or a rationale) is not in the bag at that cycle stamp.
    """

    VERIFIED = 'verified'
    BROKEN = 'broken'
    ASSESSMENT_MISSING = 'assessment_missing'
    NO_ASSESSMENT_CLAIMED = 'no_assessment_claimed'


class ChainLink(StrEnum):
    """The four hash links of SPEC section 4, named source_to_target."""

    RATIONALE_TO_ASSESSMENT = 'rationale_to_assessment'
    RATIONALE_TO_CALIBRATED = 'rationale_to_calibrated'
    CALIBRATED_TO_ASSESSMENT = 'calibrated_to_assessment'
    ACTUATION_TO_RATIONALE = 'actuation_to_rationale'


# Why a link is broken, when more than a plain hash mismatch can explain it.
DETAIL_HASH_MISMATCH = 'hash_mismatch'
DETAIL_INLINE_RAW_MISMATCH = 'inline_raw_mismatch'
DETAIL_INLINE_DECISION_MISMATCH = 'inline_decision_mismatch'


@dataclass(frozen=True, slots=True)
class LinkRecord:
    """One source message's claim on one link, and what re-hashing the target gave."""

    link: ChainLink
    timestamp_ns: int
    source_topic: str
    claimed_sha256: str | None
    recomputed_sha256: str | None
    chain_status: ChainStatus
    detail: str = ''

    def to_json(self) -> dict[str, JsonValue]:
        """Return the record as a JSON object."""
        return {
            'link': self.link.value,
            'timestamp_ns': self.timestamp_ns,
            'source_topic': self.source_topic,
            'claimed_sha256': self.claimed_sha256,
            'recomputed_sha256': self.recomputed_sha256,
            'chain_status': self.chain_status.value,
            'detail': self.detail,
        }


@dataclass(frozen=True, slots=True)
class DecisionTraceRecord:
    """One DecisionRationale (ADR-0022 fields) plus its calibrated link and end-to-end status.

    `end_to_end_verified` is True when this rationale's two links, the link of the calibrated
    assessment it names and the link of an actuation executing it are all `verified`.
    """

    timestamp_ns: int
    decision_kind: str
    decision_reason: str
    policy_id: str
    claimed_assessment_sha256: str | None
    recomputed_assessment_sha256: str | None
    chain_status: ChainStatus
    claimed_calibrated_sha256: str | None
    recomputed_calibrated_sha256: str | None
    calibrated_chain_status: ChainStatus
    end_to_end_verified: bool
    analysis_version: int = TRACE_ANALYSIS_VERSION

    def to_json(self) -> dict[str, JsonValue]:
        """Return the record as a JSON object."""
        return {
            'timestamp_ns': self.timestamp_ns,
            'decision_kind': self.decision_kind,
            'decision_reason': self.decision_reason,
            'policy_id': self.policy_id,
            'claimed_assessment_sha256': self.claimed_assessment_sha256,
            'recomputed_assessment_sha256': self.recomputed_assessment_sha256,
            'chain_status': self.chain_status.value,
            'claimed_calibrated_sha256': self.claimed_calibrated_sha256,
            'recomputed_calibrated_sha256': self.recomputed_calibrated_sha256,
            'calibrated_chain_status': self.calibrated_chain_status.value,
            'end_to_end_verified': self.end_to_end_verified,
            'analysis_version': self.analysis_version,
        }


@dataclass(frozen=True, slots=True)
class DecisionTraceReport:
    """Run-level decision trace (ADR-0022) with the status of every link of the chain.

    The four ``*_count`` fields count the rationale-to-assessment link of each decision, as in
    ADR-0022, and sum to `total_decisions`. `link_counts` counts every link by status.
    """

    bag_files: tuple[BagFileDigest, ...]
    total_decisions: int
    verified_count: int
    broken_count: int
    assessment_missing_count: int
    no_assessment_claimed_count: int
    per_decision_kind_counts: tuple[tuple[str, int], ...]
    per_policy_id_counts: tuple[tuple[str, int], ...]
    timestamp_first_ns: int | None
    timestamp_last_ns: int | None
    timestamp_span_ns: int | None
    decisions_end_to_end_verified: int
    link_counts: tuple[tuple[ChainLink, tuple[tuple[ChainStatus, int], ...]], ...]
    records: tuple[DecisionTraceRecord, ...]
    links: tuple[LinkRecord, ...]
    analysis_version: int = TRACE_ANALYSIS_VERSION
    read_errors: tuple[ReadError, ...] = ()
    #: False when only the broken/missing links were kept (the combined verifier): `records`
    #: is then empty and `links` lists the problems only; the counts cover everything.
    records_kept: bool = True
    #: The cycles cut by the recording at the bag's start or end (never strict): traced and
    #: counted, but their broken or missing links are no problem.
    unverifiable: tuple[UnverifiableCycle, ...] = ()

    def __post_init__(self) -> None:
        counted = (self.verified_count + self.broken_count + self.assessment_missing_count
                   + self.no_assessment_claimed_count)
        if counted != self.total_decisions:
            raise ValueError(
                f'DecisionTraceReport: the four status counts sum to {counted}, '
                f'expected total_decisions = {self.total_decisions}'
            )

    @property
    def source_mcap_sha256(self) -> str | None:
        """SHA-256 of the bag's .mcap file when it has exactly one (ADR-0022), else None."""
        mcaps = [item for item in self.bag_files if item.file != 'metadata.yaml']
        return mcaps[0].sha256 if len(mcaps) == 1 else None

    @property
    def chain_intact(self) -> bool:
        """ADR-0022: True exactly when no link read is `broken` or `assessment_missing`.

        Links of cycles cut by the recording count too: a missing link is a missing link.
        On an incomplete input (`incomplete_input`) this is the verdict over what was read.
        """
        return not (self.status_total(ChainStatus.BROKEN)
                    or self.status_total(ChainStatus.ASSESSMENT_MISSING))

    @property
    def holds(self) -> bool:
        """The verdict: no broken or missing link but in the cycles cut by the recording.

        Those (`links_cut_by_recording`, in the `unverifiable` cycles; never when strict) are
        reported apart and do not fail, but they leave `chain_intact` false.
        """
        return not self.problems()

    @property
    def links_cut_by_recording(self) -> int:
        """How many broken or missing links are in cycles cut by the recording."""
        cut = {cycle.cycle_stamp_ns for cycle in self.unverifiable}
        return sum(1 for record in self.links if record.timestamp_ns in cut
                   and record.chain_status in (ChainStatus.BROKEN, ChainStatus.ASSESSMENT_MISSING))

    @property
    def incomplete_input(self) -> bool:
        """True when part of the bag could not be read (see `read_errors`)."""
        return bool(self.read_errors)

    def status_total(self, status: ChainStatus) -> int:
        """Return how many links of every kind have `status`."""
        return sum(count for _, per_status in self.link_counts
                   for each, count in per_status if each is status)

    def problems(self) -> tuple[str, ...]:
        """Return one human line per broken or missing link (empty when the chain is intact)."""
        lines = []
        cut = {cycle.cycle_stamp_ns for cycle in self.unverifiable}
        for record in self.links:
            if record.timestamp_ns in cut:
                continue
            if record.chain_status in (ChainStatus.BROKEN, ChainStatus.ASSESSMENT_MISSING):
                detail = f' ({record.detail})' if record.detail else ''
                lines.append(
                    f'{record.link.value} at {record.timestamp_ns} ns from '
                    f'{record.source_topic}: {record.chain_status.value}{detail}'
                )
        return tuple(lines)

    def to_json(self) -> dict[str, JsonValue]:
        """Return the report as a JSON object (see docs/properties.md for the fields)."""
        return {
            'analysis_version': self.analysis_version,
            'chain_intact': self.chain_intact,
            'holds': self.holds,
            'links_cut_by_recording': self.links_cut_by_recording,
            'bag_files': digests_to_json(self.bag_files),
            'source_mcap_sha256': self.source_mcap_sha256,
            'total_decisions': self.total_decisions,
            'verified_count': self.verified_count,
            'broken_count': self.broken_count,
            'assessment_missing_count': self.assessment_missing_count,
            'no_assessment_claimed_count': self.no_assessment_claimed_count,
            'per_decision_kind_counts': dict(self.per_decision_kind_counts),
            'per_policy_id_counts': dict(self.per_policy_id_counts),
            'timestamp_first_ns': self.timestamp_first_ns,
            'timestamp_last_ns': self.timestamp_last_ns,
            'timestamp_span_ns': self.timestamp_span_ns,
            'decisions_end_to_end_verified': self.decisions_end_to_end_verified,
            'link_counts': {
                link.value: {status.value: count for status, count in per_status}
                for link, per_status in self.link_counts
            },
            'records_kept': self.records_kept,
            'records': [record.to_json() for record in self.records],
            'links': [record.to_json() for record in self.links],
            'incomplete_input': self.incomplete_input,
            'read_errors': read_errors_to_json(self.read_errors),
            'cycles_unverifiable': len(self.unverifiable),
            'unverifiable': unverifiable_to_json(self.unverifiable),
        }

    def summary(self) -> str:
        """Return the one-line human verdict, e.g. ``chain: 10/10 verified``."""
        verified = f'{self.decisions_end_to_end_verified}/{self.total_decisions} verified'
        if self.unverifiable:
            verified += f', {len(self.unverifiable)} cycles unverifiable'
        others = [
            f'{self.status_total(status)} {status.value}'
            for status in ChainStatus
            if status is not ChainStatus.VERIFIED and self.status_total(status)
        ]
        if not self.holds:
            return f'chain: VIOLATED ({verified}; links: {", ".join(others)})'
        if not self.chain_intact:
            return (f'chain: {verified} (not intact: {self.links_cut_by_recording} links cut '
                    f'by the recording; links: {", ".join(others)})')
        if self.decisions_end_to_end_verified == self.total_decisions and not others:
            return f'chain: {verified}'
        detail = f'links: {", ".join(others)}' if others else 'not every decision was actuated'
        return f'chain: {verified} (intact; {detail})'


def _link(claimed: str, target: GhostMessage | None) -> tuple[ChainStatus, str | None]:
    """Judge a claim against the target found at the same cycle stamp (ADR-0022 steps 4-6)."""
    if not claimed:
        return ChainStatus.NO_ASSESSMENT_CLAIMED, None
    if target is None:
        return ChainStatus.ASSESSMENT_MISSING, None
    status = ChainStatus.VERIFIED if target.sha256 == claimed else ChainStatus.BROKEN
    return status, target.sha256


def _claimed(value: str) -> str | None:
    return value or None


_Key = TypeVar('_Key')


def _add_counts(counts: dict[_Key, int], more: dict[_Key, int]) -> None:
    for key, value in more.items():
        counts[key] = counts.get(key, 0) + value


@dataclass(slots=True)
class DecisionTracer:
    """The trace over a cycle stream: ``update(cycle)`` per cycle, then ``result(info)``.

    Targets are looked up at the source's cycle stamp; when a cycle holds several messages of
    the target's topic, the last one in the stream is the target (ADR-0022's convention).

    With ``keep_records`` (the default, what trace_decisions prints) every decision record and
    link record is kept, so memory grows with the number of decisions. Without it (the combined
    verifier), only counters and the broken or missing links are kept: memory stays bounded
    by the number of problems, not by the bag's length.
    """

    keep_records: bool = True
    #: Unless strict, the links of the cycles cut by the recording are unverifiable, not
    #: problems (see unverifiable.py); :meth:`result` then ends the stream.
    strict: bool = False
    _cuts: CycleCuts = field(default_factory=CycleCuts)
    _records: list[DecisionTraceRecord] = field(default_factory=list)
    _links: list[LinkRecord] = field(default_factory=list)
    _kinds: dict[str, int] = field(default_factory=dict)
    _policies: dict[str, int] = field(default_factory=dict)
    _statuses: dict[ChainStatus, int] = field(
        default_factory=lambda: dict.fromkeys(ChainStatus, 0))
    _per_link: dict[ChainLink, dict[ChainStatus, int]] = field(
        default_factory=lambda: {link: dict.fromkeys(ChainStatus, 0) for link in ChainLink})
    _end_to_end: int = 0
    _first_ns: int | None = None
    _last_ns: int | None = None

    def _add_link(self, record: LinkRecord) -> None:
        self._per_link[record.link][record.chain_status] += 1
        if self.keep_records or record.chain_status in (ChainStatus.BROKEN,
                                                        ChainStatus.ASSESSMENT_MISSING):
            self._links.append(record)

    def __post_init__(self) -> None:
        self._cuts = CycleCuts(strict=self.strict)

    def update(self, cycle: CycleEvent) -> None:
        """Check every link whose source message carries this cycle's stamp."""
        # Every cycle is traced (the counts cover every decision); the cuts only decide
        # which cycles' broken or missing links are unverifiable rather than problems.
        for _ in self._cuts.feed(cycle):
            pass
        stamp_ns = cycle.stamp_ns
        raw = cycle.raw_assessments[-1].message if cycle.raw_assessments else None
        calibrated = cycle.calibrated[-1] if cycle.calibrated else None
        rationale = cycle.rationales[-1] if cycle.rationales else None

        # The rationale's calibrated target is the cycle's last calibrated assessment, so it is
        # that one's own link that counts for the end-to-end status.
        calibrated_ok = False
        for assessment in cycle.calibrated:
            record = self._calibrated_link(stamp_ns, assessment.message.topic,
                                           assessment.raw_assessment_sha256,
                                           assessment.inline_raw_sha256, raw)
            calibrated_ok = record.chain_status is ChainStatus.VERIFIED
        actuated_ok = False
        for actuation in cycle.actuations:
            status, recomputed = _link(actuation.rationale_sha256,
                                       None if rationale is None else rationale.message)
            detail = '' if status is not ChainStatus.BROKEN else DETAIL_HASH_MISMATCH
            if (status is ChainStatus.VERIFIED and rationale is not None
                    and actuation.message.msg.get('decision')
                    != rationale.message.msg.get('decision')):
                status, detail = ChainStatus.BROKEN, DETAIL_INLINE_DECISION_MISMATCH
            actuated_ok = actuated_ok or status is ChainStatus.VERIFIED
            self._add_link(LinkRecord(
                ChainLink.ACTUATION_TO_RATIONALE, stamp_ns, actuation.message.topic,
                _claimed(actuation.rationale_sha256), recomputed, status, detail,
            ))
        for decision in cycle.rationales:
            self._decision(stamp_ns, decision, raw,
                           None if calibrated is None else calibrated.message,
                           last=decision is rationale,
                           calibrated_ok=calibrated_ok, actuated_ok=actuated_ok)

    def _calibrated_link(
        self,
        stamp_ns: int,
        topic: str,
        claimed: str,
        inline_sha256: str,
        raw: GhostMessage | None,
    ) -> LinkRecord:
        # The claim must match the raw assessment carried inline AND the one published on the
        # raw topic: the first guards the calibrated message itself, the second the chain.
        recomputed: str | None
        if claimed and inline_sha256 != claimed:
            status, recomputed, detail = (ChainStatus.BROKEN, inline_sha256,
                                          DETAIL_INLINE_RAW_MISMATCH)
        else:
            status, recomputed = _link(claimed, raw)
            detail = DETAIL_HASH_MISMATCH if status is ChainStatus.BROKEN else ''
        record = LinkRecord(ChainLink.CALIBRATED_TO_ASSESSMENT, stamp_ns, topic,
                            _claimed(claimed), recomputed, status, detail)
        self._add_link(record)
        return record

    def _decision(
        self,
        stamp_ns: int,
        rationale: Rationale,
        raw: GhostMessage | None,
        calibrated: GhostMessage | None,
        *,
        last: bool,
        calibrated_ok: bool,
        actuated_ok: bool,
    ) -> None:
        topic = rationale.message.topic
        raw_status, raw_sha = _link(rationale.self_assessment_sha256, raw)
        cal_status, cal_sha = _link(rationale.calibrated_assessment_sha256, calibrated)
        for link, claimed, status, recomputed in (
            (ChainLink.RATIONALE_TO_ASSESSMENT, rationale.self_assessment_sha256,
             raw_status, raw_sha),
            (ChainLink.RATIONALE_TO_CALIBRATED, rationale.calibrated_assessment_sha256,
             cal_status, cal_sha),
        ):
            detail = DETAIL_HASH_MISMATCH if status is ChainStatus.BROKEN else ''
            self._add_link(LinkRecord(link, stamp_ns, topic, _claimed(claimed), recomputed,
                                      status, detail))
        kind = kind_name(DecisionKind, rationale.decision_kind).lower()
        self._kinds[kind] = self._kinds.get(kind, 0) + 1
        self._policies[rationale.policy_id] = self._policies.get(rationale.policy_id, 0) + 1
        record = DecisionTraceRecord(
            timestamp_ns=stamp_ns,
            decision_kind=kind,
            decision_reason=rationale.decision_reason,
            policy_id=rationale.policy_id,
            claimed_assessment_sha256=_claimed(rationale.self_assessment_sha256),
            recomputed_assessment_sha256=raw_sha,
            chain_status=raw_status,
            claimed_calibrated_sha256=_claimed(rationale.calibrated_assessment_sha256),
            recomputed_calibrated_sha256=cal_sha,
            calibrated_chain_status=cal_status,
            end_to_end_verified=(
                last and calibrated_ok and actuated_ok
                and raw_status is ChainStatus.VERIFIED and cal_status is ChainStatus.VERIFIED
            ),
        )
        self._statuses[raw_status] += 1
        self._end_to_end += record.end_to_end_verified
        self._first_ns = stamp_ns if self._first_ns is None else min(self._first_ns, stamp_ns)
        self._last_ns = stamp_ns if self._last_ns is None else max(self._last_ns, stamp_ns)
        if self.keep_records:
            self._records.append(record)

    def result(self, info: BagInfo) -> DecisionTraceReport:
        """Return the frozen trace report for everything seen so far."""
        for _ in self._cuts.finish():
            pass
        first, last = self._first_ns, self._last_ns
        return DecisionTraceReport(
            bag_files=info.files,
            total_decisions=sum(self._statuses.values()),
            verified_count=self._statuses[ChainStatus.VERIFIED],
            broken_count=self._statuses[ChainStatus.BROKEN],
            assessment_missing_count=self._statuses[ChainStatus.ASSESSMENT_MISSING],
            no_assessment_claimed_count=self._statuses[ChainStatus.NO_ASSESSMENT_CLAIMED],
            per_decision_kind_counts=_sorted_counts(self._kinds),
            per_policy_id_counts=_sorted_counts(self._policies),
            timestamp_first_ns=first,
            timestamp_last_ns=last,
            timestamp_span_ns=None if first is None or last is None else last - first,
            decisions_end_to_end_verified=self._end_to_end,
            link_counts=tuple(
                (link, tuple(per_status.items())) for link, per_status in self._per_link.items()
            ),
            records=tuple(self._records),
            links=tuple(self._links),
            read_errors=info.read_errors,
            records_kept=self.keep_records,
            unverifiable=self._cuts.unverifiable,
        )


def _sorted_counts(counts: Mapping[str, int]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(counts.items()))


def trace_decisions(
    bag: str | os.PathLike[str],
    *,
    cycle_window: int = DEFAULT_CYCLE_WINDOW,
    strict: bool = False,
) -> DecisionTraceReport:
    """Read the bag once and return its decision trace with the status of every chain link.

    Unless `strict`, the links of cycles cut by the recording are unverifiable, not problems.
    """
    tracer = DecisionTracer(strict=strict)
    ghost_bag = GhostBag(bag, cycle_window=cycle_window)
    for cycle in ghost_bag.cycles():
        tracer.update(cycle)
    return tracer.result(ghost_bag.info)
