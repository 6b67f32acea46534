"""The decision trace (ADR-0022) and every SHA-256 link of the chain of SPEC section 4."""

from __future__ import annotations

from dataclasses import replace
import hashlib
import json
from pathlib import Path
from typing import Any

from ghost_verify_test.bags import (
    ACTUATION,
    CALIBRATED,
    edit,
    Entry,
    RATIONALE,
    RAW,
    scenario_traces,
    trace_entries,
    write_bag,
)
import pytest

from ghost_core.actions import emit_reference_action
from ghost_core.loop import CycleResult
from ghost_verify.report_json import canonical_report_json
from ghost_verify.trace import ChainLink, ChainStatus, DecisionTraceReport, trace_decisions

STATUSES = [status.value for status in ChainStatus]


def _entries() -> list[Entry]:
    return trace_entries(scenario_traces('smoke'))


def _stamp(cycle: int) -> int:
    return scenario_traces('smoke')[cycle - 1].stamp_ns


def _links(report: DecisionTraceReport, status: ChainStatus) -> list[tuple[str, int, str]]:
    return [(r.link.value, r.timestamp_ns, r.detail) for r in report.links
            if r.chain_status is status]


def test_the_smoke_run_has_an_intact_chain(tmp_path: Path) -> None:
    """Ten decisions, every link verified, ADR-0022 aggregates and the bag's SHA-256."""
    bag = write_bag(tmp_path / 'bag', _entries())
    report = trace_decisions(bag)
    assert report.total_decisions == report.verified_count == 10
    assert report.broken_count == report.assessment_missing_count == 0
    assert dict(report.per_decision_kind_counts) == {'proceed': 4, 'hold': 6}
    assert dict(report.per_policy_id_counts) == {'uncertainty_aware_reference_v1': 10}
    assert report.timestamp_first_ns == _stamp(1)
    assert report.timestamp_last_ns == _stamp(10)
    assert report.timestamp_span_ns == _stamp(10) - _stamp(1)
    assert report.chain_intact and report.decisions_end_to_end_verified == 10
    assert {link: dict(counts)[ChainStatus.VERIFIED]
            for link, counts in report.link_counts} == dict.fromkeys(ChainLink, 10)
    assert report.source_mcap_sha256 == hashlib.sha256(
        (bag / 'bag.mcap').read_bytes()).hexdigest()
    assert report.summary() == 'chain: 10/10 verified'
    record = report.records[0]
    assert record.claimed_assessment_sha256 == record.recomputed_assessment_sha256
    assert record.chain_status is ChainStatus.VERIFIED


def test_a_tampered_assessment_is_broken(tmp_path: Path) -> None:
    """Editing the published raw assessment of cycle 3 breaks both links that name it."""
    def tamper(msg: dict[str, Any]) -> dict[str, Any]:
        return {**msg, 'assessor_id': 'forged_assessor'}

    report = trace_decisions(write_bag(tmp_path / 'bag',
                                       edit(_entries(), RAW[0], _stamp(3), tamper)))
    assert report.broken_count == 1 and report.verified_count == 9
    assert report.records[2].chain_status is ChainStatus.BROKEN
    assert report.records[2].claimed_assessment_sha256 != \
        report.records[2].recomputed_assessment_sha256
    assert _links(report, ChainStatus.BROKEN) == [
        ('calibrated_to_assessment', _stamp(3), 'hash_mismatch'),
        ('rationale_to_assessment', _stamp(3), 'hash_mismatch'),
    ]
    assert not report.chain_intact
    assert report.summary() == 'chain: VIOLATED (9/10 verified; links: 2 broken)'
    assert report.problems()[0].startswith(f'calibrated_to_assessment at {_stamp(3)} ns')


def test_a_deleted_assessment_is_assessment_missing(tmp_path: Path) -> None:
    """Dropping cycle 4's raw assessment leaves its claims pointing at nothing."""
    report = trace_decisions(write_bag(tmp_path / 'bag',
                                       edit(_entries(), RAW[0], _stamp(4), lambda m: None)))
    assert report.assessment_missing_count == 1
    assert report.records[3].chain_status is ChainStatus.ASSESSMENT_MISSING
    assert report.records[3].recomputed_assessment_sha256 is None
    assert _links(report, ChainStatus.ASSESSMENT_MISSING) == [
        ('calibrated_to_assessment', _stamp(4), ''),
        ('rationale_to_assessment', _stamp(4), ''),
    ]
    assert not report.chain_intact


def test_a_decision_without_introspection_is_no_assessment_claimed(tmp_path: Path) -> None:
    """A rationale that claims no assessment is legitimate (ADR-0021).

    The chain stays intact, but that decision is not verified end to end.
    """
    traces = list(scenario_traces('smoke'))
    trace = traces[1]
    rationale = replace(trace.rationale, self_assessment_sha256=None,
                        calibrated_assessment_sha256=None, policy_id='no_introspection_v1')
    result = CycleResult(trace.calibrated, rationale, emit_reference_action(rationale))
    traces[1] = type(trace)(trace.stamp_ns, trace.raw, trace.prediction, trace.outcome, result)
    report = trace_decisions(write_bag(tmp_path / 'bag', trace_entries(traces)))
    assert report.no_assessment_claimed_count == 1
    assert report.records[1].calibrated_chain_status is ChainStatus.NO_ASSESSMENT_CLAIMED
    assert report.chain_intact
    assert report.summary() == 'chain: 9/10 verified (intact; links: 2 no_assessment_claimed)'


def test_a_calibrated_assessment_whose_inline_raw_was_edited_is_broken(tmp_path: Path) -> None:
    """The inline raw must hash to raw_assessment_sha256.

    And the rationale naming the edited calibrated assessment no longer matches it.
    """
    def tamper(msg: dict[str, Any]) -> dict[str, Any]:
        return {**msg, 'raw_assessment': {**msg['raw_assessment'], 'overall_level': 1}}

    report = trace_decisions(write_bag(tmp_path / 'bag',
                                       edit(_entries(), CALIBRATED[0], _stamp(2), tamper)))
    assert _links(report, ChainStatus.BROKEN) == [
        ('calibrated_to_assessment', _stamp(2), 'inline_raw_mismatch'),
        ('rationale_to_calibrated', _stamp(2), 'hash_mismatch'),
    ]
    assert report.records[1].calibrated_chain_status is ChainStatus.BROKEN


def test_an_actuation_must_carry_the_decision_of_the_rationale_it_names(tmp_path: Path) -> None:
    """Same rationale_sha256 but a different inline decision: broken, not verified."""
    def tamper(msg: dict[str, Any]) -> dict[str, Any]:
        return {**msg, 'decision': {**msg['decision'], 'kind': 1}}

    report = trace_decisions(write_bag(tmp_path / 'bag',
                                       edit(_entries(), ACTUATION[0], _stamp(1), tamper)))
    assert _links(report, ChainStatus.BROKEN) == [
        ('actuation_to_rationale', _stamp(1), 'inline_decision_mismatch')]
    assert report.decisions_end_to_end_verified == 9


def test_an_edited_or_missing_rationale_breaks_its_actuation_link(tmp_path: Path) -> None:
    """The actuation names H(rationale): an edited rationale is broken, a deleted one missing."""
    def tamper(msg: dict[str, Any]) -> dict[str, Any]:
        return {**msg, 'policy_id': 'someone_else_v1'}

    entries = edit(_entries(), RATIONALE[0], _stamp(5), tamper)
    entries = edit(entries, RATIONALE[0], _stamp(6), lambda m: None)
    report = trace_decisions(write_bag(tmp_path / 'bag', entries))
    assert report.total_decisions == 9
    assert _links(report, ChainStatus.BROKEN) == [
        ('actuation_to_rationale', _stamp(5), 'hash_mismatch')]
    assert _links(report, ChainStatus.ASSESSMENT_MISSING) == [
        ('actuation_to_rationale', _stamp(6), '')]


def test_the_report_is_canonical_json_with_the_adr_0022_fields(tmp_path: Path) -> None:
    """sort_keys, indent 2, UTF-8, trailing newline; ADR-0022's fields by name."""
    report = trace_decisions(write_bag(tmp_path / 'bag', _entries()))
    text = canonical_report_json(report.to_json())
    document = json.loads(text)
    assert text == json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False) + '\n'
    for name in ('source_mcap_sha256', 'total_decisions', 'verified_count', 'broken_count',
                 'assessment_missing_count', 'no_assessment_claimed_count',
                 'per_decision_kind_counts', 'per_policy_id_counts', 'timestamp_first_ns',
                 'timestamp_last_ns', 'timestamp_span_ns', 'records', 'analysis_version'):
        assert name in document
    assert set(document['records'][0]) >= {
        'timestamp_ns', 'decision_kind', 'decision_reason', 'policy_id',
        'claimed_assessment_sha256', 'recomputed_assessment_sha256', 'chain_status',
        'analysis_version'}
    assert set(document['link_counts']) == {link.value for link in ChainLink}
    assert all(set(counts) == set(STATUSES) for counts in document['link_counts'].values())


def test_the_report_invariant_is_enforced() -> None:
    """Verified + broken + missing + not claimed == total_decisions (ADR-0022)."""
    with pytest.raises(ValueError, match='total_decisions'):
        DecisionTraceReport((), 2, 1, 0, 0, 0, (), (), None, None, None, 0, (), (), ())
