"""GATE-v1 over bags: the command gate's records judged against the recorded actuations."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
import json
import math
from pathlib import Path
import tempfile

from ghost_verify_test.bags import (
    Entry,
    gate_entry,
    gate_records,
    GateRecordView,
    merged,
    MISSION_VELOCITY,
    scenario_traces,
    trace_entries,
    with_policy,
    write_bag,
)
from ghost_verify_test.run_bags import configuration_change
from ghost_verify_test.strategies import gate_record_runs
from hypothesis import given, HealthCheck, settings
from hypothesis import strategies as st
import pytest

from ghost_core.cli import ExitCode
from ghost_core.evidence import TRANSPORT_BOUND_NS
from ghost_core.gate import GateAction, GateReason, may_pass
from ghost_core.gate_property import (
    CitedActuationFacts,
    CitedActuationView,
    DEFAULT_TIMEOUT_NS,
    GateRecordFacts,
    GateViolation,
    judge_gate,
    NewerActuation,
)
from ghost_core.gate_property import GateViolationKind as K
from ghost_core.levels import DecisionKind
from ghost_core.pipeline import CycleTrace
from ghost_verify import cli
from ghost_verify.bag import GhostBag
from ghost_verify.events import GateRecord
from ghost_verify.gate import GATE_REACH, GateChecker, GateReport
from ghost_verify.verify import verify_all

#: docs/properties.md shows the GATE-v1 lines these bags print.
DOCS = Path(__file__).resolve().parents[2] / 'docs' / 'properties.md'
SMOKE = scenario_traces('smoke')  # cycles 1-4 PROCEED, 5-10 HOLD
STAMPS = [trace.stamp_ns for trace in SMOKE]
#: Not ghost topics: the gate's own outputs (a twist, here) and the vehicle state.
CMD_VEL = ('/cmd_vel', 'geometry_msgs/msg/Twist')
#: How long after its actuation's log time a PASSED record may be logged: timeout and bound.
LOG_AGE_LIMIT = DEFAULT_TIMEOUT_NS + TRANSPORT_BOUND_NS

#: Why a test bag has no configuration (no records in it, no manifest.json).
_NONE = ('no start configuration is recorded in the bag, and no manifest.json: the run '
         'configuration is not recorded')


def _twist_entries() -> list[Entry]:
    zero = {'x': 0.0, 'y': 0.0, 'z': 0.0}
    return [Entry(CMD_VEL[0], CMD_VEL[1], {'linear': dict(zero), 'angular': dict(zero)},
                  stamp + 20_000_000, stamp + 20_000_000) for stamp in STAMPS]


def _landing_traces() -> list[CycleTrace]:
    """Smoke with its last three cycles deciding ENGAGE_LAND (the chain stays intact)."""
    return [*SMOKE[:7], *with_policy(SMOKE[7:], DecisionKind.ENGAGE_LAND, 'always_land_v1')]


def _bag(path: Path, records: Sequence[GateRecordView],
         traces: Sequence[CycleTrace] = SMOKE) -> Path:
    return write_bag(path, merged(trace_entries(traces), _twist_entries(),
                                  [gate_entry(record) for record in records]))


def _check(bag: Path, *, reach: int, cycle_window: int = 256,
           strict: bool = False) -> GateReport:
    """GATE-v1 over a bag with a chosen reach (verify_gate keeps at least GATE_REACH)."""
    checker = GateChecker(strict=strict, reach=reach)
    ghost_bag = GhostBag(bag, cycle_window=cycle_window)
    for event in ghost_bag.events():
        if isinstance(event, GateRecord):
            checker.record(event)
        else:
            checker.update(event)
    return checker.result(ghost_bag.info)


def verify_gate(bag: Path, *, cycle_window: int = 256, strict: bool = False) -> GateReport:
    """GATE-v1 alone over a bag, as verify_all's pass feeds it (the default reach)."""
    return _check(bag, reach=max(cycle_window, GATE_REACH), cycle_window=cycle_window,
                  strict=strict)


def _kinds(report: GateReport) -> dict[str, int]:
    return {kind.value: count for kind, count in report.violation_counts}


def test_a_gate_that_follows_its_rule_holds_gate_v1_with_every_other_check(
    tmp_path: Path,
) -> None:
    """Passes during PROCEED, holds during HOLD; non-ghost topics beside it are ignored."""
    records = gate_records(SMOKE)
    result = verify_all(_bag(tmp_path / 'bag', records))
    assert result.holds
    gate = result.gate
    assert gate is not None and gate.holds and gate.applicable
    assert dict(gate.action_counts) == {'passed': 8, 'held': 12}
    assert dict(gate.gates) == {'/ghost/gate': 20}
    assert tuple(line for line in result.summary_lines()
                 if not line.startswith('evidence: HOLDS')) == (
        'BAUD-v1: HOLDS (6 cycles evaluated)',
        'ERUR-v1: HOLDS (4 cycles evaluated)',
        'chain: 10/10 verified',
        'cycles: 10/10 complete',
        'history: 10/10 consistent',
        'conformance: 10/10 conform',
        'RECOVERY-v1: not applicable (' + _NONE + ')',
        'GATE-v1: HOLDS (20 gate records: 8 passed, 12 held, 0 vehicle commands)',
        'replay: not possible (' + _NONE + ')',
        'note: replay: what the recording cannot show is a limit, not a failure '
        '(--strict makes it one)',
        f"warning: self-reported parameters: {_NONE} (Ghost's recorder writes it: "
        "ghost_run, ros2 launch ghost); -m, -k, -w not "
        "given, so those parameters are the ones the agent's own messages claim (give them to "
        'judge with yours)',
    )
    document = result.to_json()['gate']
    assert isinstance(document, dict)
    assert document['holds'] is True and document['applicable'] is True
    assert document['records_total'] == 20 and document['violations'] == []


def _gate_configuration(timeout_s: float, log_time_ns: int) -> Entry:
    """The configuration record the command gate publishes at start (its timeout)."""
    change = configuration_change('/command_gate', -1, {'gate': {'timeout_s': timeout_s}},
                                  log_time_ns)
    return Entry(change.topic, change.type_name, change.msg, change.log_time_ns, 0)


def test_the_gate_timeout_in_force_is_the_one_the_bag_records(tmp_path: Path) -> None:
    """A gate run with timeout_s 1.0 records it: G3 judges with 1.0, not the default.

    Without the record the same gate records are a timeout_mismatch (the default is 0.5 s);
    a recorded timeout beyond its declared bound (5 s) fails the parameters check.
    """
    records = [replace(record, timeout_s=1.0) for record in gate_records(SMOKE)]
    entries = merged(trace_entries(SMOKE), _twist_entries(),
                     [gate_entry(record) for record in records])
    recorded = write_bag(tmp_path / 'recorded', merged([_gate_configuration(1.0, 1)], entries))
    result = verify_all(recorded)
    assert result.gate is not None and result.gate.holds, result.gate.summary()
    unrecorded = verify_all(write_bag(tmp_path / 'unrecorded', entries)).gate
    assert unrecorded is not None and _kinds(unrecorded) == {'timeout_mismatch': 8}  # every pass
    lax = verify_all(write_bag(tmp_path / 'lax', merged([_gate_configuration(1e6, 1)],
                                                       entries)))
    assert not lax.holds and lax.parameters is not None
    assert 'gate.timeout_s must be a number in (0, 5] s' in lax.parameters.summary()


def test_the_gate_topic_is_found_by_schema_and_other_topics_are_never_decoded(
    tmp_path: Path,
) -> None:
    bag = GhostBag(_bag(tmp_path / 'bag', gate_records(SMOKE)))
    events = list(bag.events())
    assert sum(isinstance(event, GateRecord) for event in events) == 20
    assert len([event for event in events if not isinstance(event, GateRecord)]) == 10
    topics = dict(bag.info.ghost_topics)
    assert topics['/ghost/gate'] == 'ghost_interfaces/msg/GateEmission'
    assert '/cmd_vel' not in topics and '/state/nav' not in topics


def test_a_land_decision_is_sent_once_as_a_land_command_and_held_meanwhile(
    tmp_path: Path,
) -> None:
    records = gate_records(_landing_traces())
    report = verify_gate(_bag(tmp_path / 'bag', records, _landing_traces()))
    assert report.holds, report.violations
    assert dict(report.action_counts) == {'held': 12, 'passed': 8, 'vehicle_command': 1}
    assert report.summary() == (
        'GATE-v1: HOLDS (21 gate records: 8 passed, 12 held, 1 vehicle command)')
    assert f'\n{report.summary()}\n' in DOCS.read_text(encoding='utf-8')


def test_a_bag_without_gate_records_is_not_applicable_never_holding(tmp_path: Path) -> None:
    bag = write_bag(tmp_path / 'bag', trace_entries(SMOKE))
    report = verify_gate(bag)
    assert not report.applicable and not report.holds and not report.violated
    assert report.summary() == 'GATE-v1: not applicable (no gate records)'
    result = verify_all(bag)
    assert result.holds  # not applicable fails nothing
    assert not any(line.startswith('GATE-v1') for line in result.summary_lines())
    document = result.to_json()['gate']
    assert isinstance(document, dict)
    assert (document['applicable'], document['holds'], document['records_total']) == (
        False, False, 0)


def _at(records: list[GateRecordView], stamp_ns: int,
        change: Callable[[GateRecordView], GateRecordView]) -> list[GateRecordView]:
    assert any(record.stamp_ns == stamp_ns for record in records)
    return [change(record) if record.stamp_ns == stamp_ns else record for record in records]


PROCEED_SENT = STAMPS[1] + 20_000_000  # a PASSED record of a PROCEED cycle
LAST_PROCEED_SENT = STAMPS[1] + 60_000_000  # the cycle's last: a later stamp breaks no order
HOLD_SENT = STAMPS[5] + 60_000_000     # a HELD record of a HOLD cycle
LAND_SENT = STAMPS[7] + 10_000         # the LAND command of the landing bag

FAULTS: list[tuple[str, Callable[[GateRecordView], GateRecordView], int, bool]] = [
    ('unknown_action', lambda r: replace(r, action=7), HOLD_SENT, False),
    ('no_actuation_cited', lambda r: replace(
        r, has_actuation=False, actuation_stamp_ns=0, rationale_sha256='', decision_kind=0,
        command_kind=0, actuation_received_ns=0), PROCEED_SENT, False),
    ('actuation_missing', lambda r: replace(r, actuation_stamp_ns=r.actuation_stamp_ns + 1),
     LAST_PROCEED_SENT, False),
    ('rationale_mismatch', lambda r: replace(r, rationale_sha256='0' * 64), PROCEED_SENT,
     False),
    ('passed_not_proceed', lambda r: replace(r, action=GateAction.PASSED,
                                             reason=GateReason.PROCEED,
                                             velocity=MISSION_VELOCITY), HOLD_SENT, False),
    ('kinds_mismatch', lambda r: replace(r, decision_kind=DecisionKind.HOLD), PROCEED_SENT,
     False),
    ('actuation_stale', lambda r: replace(
        r, actuation_received_ns=r.stamp_ns - 700_000_000), PROCEED_SENT, False),
    ('invalid_timeout', lambda r: replace(r, timeout_s=0.0), PROCEED_SENT, False),
    ('actuation_went_backwards', lambda r: replace(
        r, actuation_stamp_ns=STAMPS[4],
        rationale_sha256=SMOKE[4].result.emission.rationale_sha256), HOLD_SENT, False),
    ('held_output_moves', lambda r: replace(r, velocity=(0.0, 0.0, 1.0)), HOLD_SENT, False),
    ('invalid_vehicle_command', lambda r: replace(r, vehicle_command=185), LAND_SENT, True),
    ('vehicle_command_mismatch', lambda r: replace(r, vehicle_command=20), LAND_SENT, True),
]


@pytest.mark.parametrize('kind,change,stamp_ns,landing', FAULTS,
                         ids=[fault[0] for fault in FAULTS])
def test_each_fault_of_a_gate_record_is_its_violation_at_that_record(
    tmp_path: Path,
    kind: str,
    change: Callable[[GateRecordView], GateRecordView],
    stamp_ns: int,
    landing: bool,
) -> None:
    traces = _landing_traces() if landing else list(SMOKE)
    records = _at(gate_records(traces), stamp_ns, change)
    bag = _bag(tmp_path / 'bag', records, traces)
    report = verify_gate(bag)
    assert _kinds(report) == {kind: 1}
    (violation,) = report.violations
    assert violation.record_stamp_ns == stamp_ns and violation.gate == '/ghost/gate'
    assert report.summary().startswith('GATE-v1: VIOLATED (')
    assert report.summary().endswith(f'; 1 {kind}, the first at {stamp_ns} ns)')
    if not landing:
        result = verify_all(bag)
        assert not result.holds
        assert result.gate is not None and _kinds(result.gate) == {kind: 1}
        assert result.baud.holds and result.erur.holds and result.conformance.holds


def test_an_actuation_no_longer_held_is_out_of_reach_not_a_pass(tmp_path: Path) -> None:
    """A second gate whose first record cites a cycle long delivered: not checked, failed.

    It passes cycle 2's PROCEED 450 ms after it, 150 ms after cycle 5's HOLD: fresh by the
    recorder's clock (the timeout and the transport bound), so only the reach decides.
    """
    late = STAMPS[1] + 450_000_000
    stray = replace(gate_records(SMOKE[1:2])[0], gate='/uav2/ghost/gate', stamp_ns=late,
                    actuation_received_ns=late - 1_000_000)
    bag = _bag(tmp_path / 'bag', [*gate_records(SMOKE), stray])
    assert verify_gate(bag).holds  # the default reach holds every cycle of this bag
    report = _check(bag, reach=2, cycle_window=2)
    assert _kinds(report) == {'actuation_out_of_reach': 1}
    assert report.violations[0].gate == '/uav2/ghost/gate'


def test_a_gate_stuck_on_its_last_actuation_is_still_judged_against_it(
    tmp_path: Path,
) -> None:
    """Its latest cited actuation is kept beyond the reach: a leak then is stale, not unknown."""
    records = gate_records(SMOKE[:1])  # the gate heard only the first actuation
    first = records[0]
    leaks = [replace(first, stamp_ns=stamp + 30_000_000) for stamp in STAMPS[1:]]
    report = _check(_bag(tmp_path / 'bag', [*records, *leaks]), reach=2, cycle_window=1)
    # By its own account (received at 1.00001 s, timeout 0.5 s): fresh up to 1.43 s, stale
    # from 1.53 s on. By the recorder's: logged more than the timeout and the transport
    # bound after cycle 1's actuation, or more than the bound after cycle 5's HOLD.
    logged = {trace.stamp_ns: entry.log_time_ns for trace in SMOKE
              for entry in trace_entries([trace]) if entry.topic == '/actuations'}
    stale = [r for r in leaks if r.stamp_ns - logged[STAMPS[0]] > LOG_AGE_LIMIT]
    superseded = [r for r in leaks if r.stamp_ns - logged[STAMPS[4]] > TRANSPORT_BOUND_NS]
    assert _kinds(report) == {'actuation_stale': 5, 'stale_in_log_time': len(stale),
                              'superseded_by_conservative': len(superseded)}
    assert len(stale) == 2 and len(superseded) == 3
    assert [v.record_stamp_ns for v in report.violations
            if v.kind is K.ACTUATION_STALE] == [r.stamp_ns for r in leaks[4:]]


def test_records_logged_before_the_actuation_they_cite_are_judged_alike(
    tmp_path: Path,
) -> None:
    """The recorder may log a gate record before the actuation it cites (other topic)."""
    records = [replace(record, stamp_ns=record.actuation_stamp_ns + 1)
               if record.action is GateAction.PASSED else record
               for record in gate_records(SMOKE)]
    report = verify_gate(_bag(tmp_path / 'bag', records), cycle_window=1)
    assert report.holds and dict(report.action_counts)['passed'] == 8


def test_an_actuation_before_the_recording_is_unverifiable_unless_strict(
    tmp_path: Path,
) -> None:
    """A recorder started after the gate heard cycle 1: its records citing it prove nothing."""
    entries = [entry for entry in trace_entries(SMOKE) if entry.stamp_ns != STAMPS[0]]
    bag = write_bag(tmp_path / 'bag', merged(
        entries, [gate_entry(record) for record in gate_records(SMOKE)]))
    report = verify_gate(bag)
    assert report.holds and report.records_unverifiable == 2
    assert [item.actuation_stamp_ns for item in report.unverifiable] == [STAMPS[0]] * 2
    assert report.summary().endswith(', 2 unverifiable)')
    strict = verify_gate(bag, strict=True)
    assert _kinds(strict) == {'actuation_missing': 2} and strict.records_unverifiable == 0


def _json(path: Path) -> dict[str, object]:
    document = json.loads(path.read_text())
    assert isinstance(document, dict)
    return document


def test_verify_all_prints_gate_v1_and_exits_1_on_a_violation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    good = _bag(tmp_path / 'good', gate_records(SMOKE))
    leaky = _bag(tmp_path / 'leaky', _at(gate_records(SMOKE), HOLD_SENT, lambda r: replace(
        r, action=GateAction.PASSED, reason=GateReason.PROCEED, velocity=MISSION_VELOCITY)))
    plain = write_bag(tmp_path / 'plain', trace_entries(SMOKE))

    assert cli.verify_all_main([str(good), '--json', str(tmp_path / 'good.json')]) == ExitCode.OK
    out = capsys.readouterr().out
    assert 'GATE-v1: HOLDS (20 gate records: 8 passed, 12 held, 0 vehicle commands)\n' in out
    gate = _json(tmp_path / 'good.json')['gate']
    assert isinstance(gate, dict) and gate['holds'] is True

    assert cli.verify_all_main([str(leaky), '--json', str(tmp_path / 'leaky.json')]) == (
        ExitCode.VIOLATED)
    out = capsys.readouterr().out
    line = (f'GATE-v1: VIOLATED (20 gate records: 9 passed, 11 held, 0 vehicle commands; '
            f'1 passed_not_proceed, the first at {HOLD_SENT} ns)\n')
    assert line in out
    assert f'\n{line}' in DOCS.read_text(encoding='utf-8')
    gate = _json(tmp_path / 'leaky.json')['gate']
    assert isinstance(gate, dict)
    assert gate['violation_counts'] == {'passed_not_proceed': 1}
    (violation,) = gate['violations']  # type: ignore[misc]
    assert violation['record_stamp_ns'] == HOLD_SENT
    assert violation['observed']['recorded_decision_kind'] == 'HOLD'

    assert cli.verify_all_main([str(plain)]) == ExitCode.OK
    assert 'GATE-v1' not in capsys.readouterr().out


def test_a_gate_schema_without_a_field_the_verifier_reads_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """The GateEmission schema is checked like every ghost schema (exit 3 names the field)."""
    from ghost_bag.write import ghost_typestore

    msg_dir = tmp_path / 'msg'
    msg_dir.mkdir()
    source = Path(__file__).resolve().parents[2] / 'ghost_interfaces' / 'msg'
    for item in source.glob('*.msg'):
        text = item.read_text()
        if item.name == 'GateEmission.msg':
            text = text.replace('float32[3] velocity', 'float32 velocity')
        (msg_dir / item.name).write_text(text)
    record = gate_records(SMOKE[:1])[0]
    entry = gate_entry(record)
    entry = replace(entry, msg={**entry.msg, 'velocity': 0.0})
    bag = write_bag(tmp_path / 'bag', merged(trace_entries(SMOKE[:1]), [entry]),
                    typestore=ghost_typestore(msg_dir))
    assert cli.verify_all_main([str(bag)]) == ExitCode.BAD_INPUT
    assert "'velocity' is float32, expected a float[3] array" in capsys.readouterr().err


def judge_gate_records(
    records: Iterable[GateRecordFacts],
    actuations: Mapping[int, Sequence[CitedActuationFacts]],
) -> tuple[GateViolation, ...]:
    """The reference: every record judged in the order its gate sent it, every cycle held.

    By the recorder's clock too: each record logged at its stamp (as ``gate_entry`` writes
    it), each actuation when its bag entry is, the newer one that may not pass the earliest
    logged.
    """
    latest: dict[str, int] = {}
    found: list[GateViolation] = []
    for record in records:
        blocking = [NewerActuation(stamp, item.log_time_ns, item.decision_kind,
                                   item.command_kind)
                    for stamp, items in actuations.items() if stamp > record.actuation_stamp_ns
                    for item in items if item.log_time_ns is not None
                    and not may_pass(item.decision_kind, item.command_kind)]
        found.extend(judge_gate(record, actuations.get(record.actuation_stamp_ns, ()),
                                latest_cited_ns=latest.get(record.gate),
                                record_log_time_ns=record.stamp_ns,
                                newer=min(blocking, key=lambda item: item.log_time_ns,
                                          default=None)))
        if record.has_actuation:
            latest[record.gate] = max(latest.get(record.gate, record.actuation_stamp_ns),
                                      record.actuation_stamp_ns)
    return tuple(found)


def _reference(records: Sequence[GateRecordView]) -> Counter[tuple[int, str, K]]:
    logged = {entry.stamp_ns: entry.log_time_ns for entry in trace_entries(SMOKE)
              if entry.topic == '/actuations'}
    actuations = {trace.stamp_ns: (CitedActuationView(
        trace.result.emission.decision.kind, trace.result.emission.command.kind,
        trace.result.emission.rationale_sha256, logged[trace.stamp_ns]),) for trace in SMOKE}
    return Counter((v.record_stamp_ns, v.gate, v.kind)
                   for v in judge_gate_records(records, actuations))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gate_record_runs([trace.result.emission for trace in SMOKE],
                        ['/ghost/gate', '/uav2/ghost/gate']), st.sampled_from([1, 256]))
def test_the_streaming_verifier_agrees_with_the_whole_recording_judge(
    records: list[GateRecordView], cycle_window: int,
) -> None:
    """Any records, logged before or after what they cite, get the reference's violations."""
    with tempfile.TemporaryDirectory() as directory:
        bag = _bag(Path(directory) / 'bag', records)
        # A reach over every cycle (the reference holds them all); a window of 1 delivers
        # each cycle as soon as the next begins, so records wait for, or come after, theirs.
        report = _check(bag, reach=len(SMOKE), cycle_window=cycle_window, strict=True)
    found = Counter((v.record_stamp_ns, v.gate, v.kind) for v in report.violations)
    assert report.violations_total == len(report.violations)  # few enough to list them all
    assert found == _reference(records)
    assert report.records_total == len(records)


def test_nan_in_a_held_velocity_survives_the_bag(tmp_path: Path) -> None:
    """Uncontrolled axes (NaN) of a PX4 hold are a hold, read back as NaN."""
    records = _at(gate_records(SMOKE), HOLD_SENT,
                  lambda r: replace(r, velocity=(math.nan, math.nan, 0.0)))
    assert verify_gate(_bag(tmp_path / 'bag', records)).holds


def test_gate_records_do_not_open_cycles(tmp_path: Path) -> None:
    """Stamped when sent, they are no cycle: completeness and the window never see them."""
    result = verify_all(_bag(tmp_path / 'bag', gate_records(SMOKE)), cycle_window=1)
    assert result.completeness.cycles_seen == 10 and result.holds
