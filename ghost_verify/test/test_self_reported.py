"""Nothing self-reported decides a verdict (issue 33 §3), tested as the audit built its cases.

Each case starts from an honest recorded run (the smoke scenario's real inputs through the
real agent, the command gate following its rule, manifest.json signed), changes only what
Ghost's own nodes publish (the Ghost topics, the gate's records), and re-signs the manifest
as the recorder would: every hash and the signature verify, so only the recorder's log times
and the installed message definitions can catch the forgery. ``verify_all --public-key``
exits 1 with the violation named (a decoy schema: exit 3), and the honest run verifies.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import contextlib
from dataclasses import replace
import io
from pathlib import Path
import shutil
from typing import Any

from ghost_verify_test.bags import (
    GATE,
    gate_msg,
    GateRecordView,
    MISSION_VELOCITY,
    MSG_DIR,
    SETPOINT_TOPIC,
    shared_typestore,
    VEHICLE_COMMAND_TOPIC,
)
from ghost_verify_test.run_bags import run_config, run_messages, scenario_inputs, Written
import pytest

from ghost_bag.manifest import (
    bag_file_digests,
    load_private_key,
    ManifestBuilder,
    sign_manifest,
    software_versions,
    write_manifest,
)
from ghost_bag.write import ghost_typestore, GhostBagWriter
from ghost_core.cli import ExitCode
from ghost_core.evidence import TRANSPORT_BOUND_NS
from ghost_core.gate import DEFAULT_TIMEOUT_S, gate_verdict, GateAction, LatestActuation
from ghost_core.levels import ActuatorCommandKind, DecisionKind
from ghost_core.scenarios import generate_scenario
from ghost_verify import cli
from ghost_verify.bag import GhostBag
from ghost_verify.cycles import MESSAGES_PER_CYCLE
from ghost_verify.keygen import main as keygen
from ghost_verify.verify import verify_all

ACTUATIONS = '/actuations'
SMOKE = generate_scenario('smoke')
#: When the gate receives an actuation after the recorder logged it, and when the mission
#: sends its setpoints after that (the gate records each output when it sends it).
RECEIVED_AFTER_NS = 10_000
OUTPUTS_AFTER_NS = (20_000_000, 60_000_000)


def honest_run() -> list[Written]:
    """The smoke run as Ghost's recorder records it: inputs, Ghost messages, gate records."""
    written, _ = run_messages(scenario_inputs(SMOKE), SMOKE.parameters.pipeline_config())
    return sorted([*written, *gate_written(written)], key=lambda item: item.log_time_ns)


def gate_written(written: Sequence[Written]) -> list[Written]:
    """What a PX4-mode command gate following ``ghost_core.gate`` records over the run."""
    timeout_ns = round(DEFAULT_TIMEOUT_S * 1e9)
    records: list[Written] = []
    for item in written:
        if item.topic != ACTUATIONS:
            continue
        received = item.log_time_ns + RECEIVED_AFTER_NS
        decision, command = item.msg['decision']['kind'], item.msg['command']['kind']
        latest = LatestActuation(decision, command, received)
        for offset in OUTPUTS_AFTER_NS:
            now = item.log_time_ns + offset
            verdict = gate_verdict(latest, now, timeout_ns)
            passed = verdict.action is GateAction.PASSED
            view = GateRecordView(
                gate=GATE[0], stamp_ns=now, action=verdict.action, reason=verdict.reason,
                output_topic=VEHICLE_COMMAND_TOPIC if verdict.vehicle_command else SETPOINT_TOPIC,
                has_actuation=True, actuation_stamp_ns=item.stamp_ns or 0,
                rationale_sha256=item.msg['rationale_sha256'], decision_kind=decision,
                command_kind=command, actuation_received_ns=received,
                timeout_s=DEFAULT_TIMEOUT_S,
                velocity=MISSION_VELOCITY if passed else (0.0, 0.0, 0.0),
                vehicle_command=verdict.vehicle_command)
            records.append(Written(GATE[0], GATE[1], gate_msg(view), now))
    return records


def record(path: Path, written: Sequence[Written], key: Path, *,
           msg_dir: Path | None = None) -> Path:
    """Write the run and its manifest as the recorder does, signed with `key`."""
    builder = ManifestBuilder(run_config(SMOKE.parameters.pipeline_config()),
                              software_versions())
    typestore = shared_typestore() if msg_dir is None else ghost_typestore(msg_dir)
    with GhostBagWriter(path, typestore=typestore) as writer:
        for item in written:
            data = writer.serialize(item.type_name, item.msg)
            writer.write(item.topic, item.type_name, data, item.log_time_ns)
            builder.add(item.topic, item.type_name, item.log_time_ns, data)
    document = sign_manifest(builder.document(bag_file_digests(path)), load_private_key(key))
    write_manifest(path, document)
    return path


@pytest.fixture(scope='module')
def keys(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp('keys')
    assert keygen(['--output', str(folder / 'ghost')]) == 0
    return folder / 'ghost', folder / 'ghost.pub'


@pytest.fixture(scope='module')
def honest() -> list[Written]:
    return honest_run()


def verify(bag: Path, public: Path) -> tuple[int, list[str]]:
    """verify_all BAG --public-key KEY, in this process: the exit code and every line."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = cli.verify_all_main([str(bag), '--public-key', str(public)])
    return code, out.getvalue().splitlines()


def line_of(lines: list[str], prefix: str) -> str:
    (found,) = [line for line in lines if line.startswith(prefix)]
    return found


def actuations(written: Sequence[Written]) -> list[Written]:
    return [item for item in written if item.topic == ACTUATIONS]


def is_hold(item: Written) -> bool:
    return item.msg['command']['kind'] == ActuatorCommandKind.HOLD_POSITION


def forged(written: Sequence[Written],
           change: Callable[[Written], Written | list[Written] | None]) -> list[Written]:
    """The run with `change` applied to each message (a list: several, None: dropped)."""
    out: list[Written] = []
    for item in written:
        changed = change(item)
        out.extend([] if changed is None else changed if isinstance(changed, list)
                   else [changed])
    return sorted(out, key=lambda item: item.log_time_ns)


def test_the_honest_recorded_run_verifies_signed(
    tmp_path: Path, honest: list[Written], keys: tuple[Path, Path],
) -> None:
    code, lines = verify(record(tmp_path / 'bag', honest, keys[0]), keys[1])
    assert code == ExitCode.OK, lines
    assert line_of(lines, 'GATE-v1:').startswith('GATE-v1: HOLDS (20 gate records: 8 passed')
    assert line_of(lines, 'cycles:') == 'cycles: 10/10 complete'
    assert lines[-1] == 'VERIFIED'


def _last_proceed(written: Sequence[Written]) -> Written:
    return [item for item in actuations(written) if not is_hold(item)][-1]


def _gate_through_the_hold(written: Sequence[Written], *, timeout_s: float,
                           claims_fresh: bool) -> list[Written]:
    """The gate passes the mission through the whole HOLD, citing the last PROCEED."""
    proceed = _last_proceed(written)

    def change(item: Written) -> Written:
        if item.topic != GATE[0] or item.msg['action'] != GateAction.HELD:
            return item
        now = item.log_time_ns
        received = (now - 1_000_000 if claims_fresh
                    else proceed.log_time_ns + RECEIVED_AFTER_NS)
        msg: dict[str, Any] = {
            **item.msg, 'action': int(GateAction.PASSED), 'reason': 'proceed',
            'actuation_stamp': proceed.msg['header']['stamp'],
            'rationale_sha256': proceed.msg['rationale_sha256'],
            'decision_kind': int(DecisionKind.PROCEED),
            'command_kind': int(ActuatorCommandKind.CONTINUE_MISSION),
            'actuation_received': {'sec': received // 10**9, 'nanosec': received % 10**9},
            'timeout_s': timeout_s, 'velocity': list(MISSION_VELOCITY)}
        return replace(item, msg=msg)

    return forged(written, change)


@pytest.mark.parametrize('timeout_s,claims_fresh,expected', [
    # Its receive time, judged with the configured timeout, condemns it too.
    (1e6, False, {'superseded_by_conservative', 'timeout_mismatch', 'actuation_stale'}),
    (DEFAULT_TIMEOUT_S, True, {'superseded_by_conservative'}),
], ids=['self_reported_timeout_of_a_million_seconds', 'self_reported_receive_time'])
def test_a_gate_passing_through_a_hold_on_its_own_numbers_fails_gate_v1(
    tmp_path: Path, honest: list[Written], keys: tuple[Path, Path],
    timeout_s: float, claims_fresh: bool, expected: set[str],
) -> None:
    """Its timeout_s or its receive time say fresh; the recorder's clock says superseded."""
    bag = record(tmp_path / 'bag', _gate_through_the_hold(
        honest, timeout_s=timeout_s, claims_fresh=claims_fresh), keys[0])
    code, lines = verify(bag, keys[1])
    assert code == ExitCode.VIOLATED
    assert line_of(lines, 'manifest:').startswith('manifest: signed')
    gate = verify_all(bag).gate
    assert gate is not None
    assert {kind.value for kind, _ in gate.violation_counts} == expected
    # Every pass logged more than the transport bound after the first HOLD is caught.
    first_hold = next(item for item in actuations(honest) if is_hold(item))
    late = [item for item in _gate_through_the_hold(honest, timeout_s=timeout_s,
                                                    claims_fresh=claims_fresh)
            if item.topic == GATE[0] and item.msg['action'] == GateAction.PASSED
            and item.log_time_ns - first_hold.log_time_ns > TRANSPORT_BOUND_NS]
    assert dict(gate.violation_counts)[next(
        kind for kind, _ in gate.violation_counts
        if kind.value == 'superseded_by_conservative')] == len(late) > 0
    assert 'GATE-v1: VIOLATED' in lines[-1]


def test_a_replayed_proceed_actuation_is_a_replayed_message(
    tmp_path: Path, honest: list[Written], keys: tuple[Path, Path],
) -> None:
    """After each HOLD the emitter re-sends the last PROCEED actuation, byte for byte."""
    proceed = _last_proceed(honest)

    def change(item: Written) -> Written | list[Written]:
        if item.topic == ACTUATIONS and is_hold(item):
            return [item, replace(proceed, log_time_ns=item.log_time_ns + 1000)]
        return item

    bag = record(tmp_path / 'bag', forged(honest, change), keys[0])
    code, lines = verify(bag, keys[1])
    assert code == ExitCode.VIOLATED
    cycles = line_of(lines, 'cycles:')
    assert cycles.startswith('cycles: VIOLATED (10/10 complete; ')
    report = verify_all(bag).completeness
    counts = {kind.value: count for kind, count in report.order_counts}
    # Each copy is an actuation logged after a newer cycle's; those logged more than the
    # transport bound after the next cycle's first message are replays.
    assert set(counts) == {'actuation_out_of_order', 'replayed_message'}
    assert sum(counts.values()) == len([item for item in actuations(honest) if is_hold(item)])
    assert {item.cycle_stamp_ns for item in report.order_violations} == {proceed.stamp_ns}


def test_an_actuation_logged_before_its_rationale_is_out_of_causal_order(
    tmp_path: Path, honest: list[Written], keys: tuple[Path, Path],
) -> None:
    """The decision of cycle 3 logged 300 ms after the actuation that executes it."""
    third = actuations(honest)[2]

    def change(item: Written) -> Written:
        if item.topic == '/decisions' and item.stamp_ns == third.stamp_ns:
            return replace(item, log_time_ns=third.log_time_ns + 300_000_000)
        return item

    bag = record(tmp_path / 'bag', forged(honest, change), keys[0])
    code, lines = verify(bag, keys[1])
    assert code == ExitCode.VIOLATED
    report = verify_all(bag).completeness
    assert [(item.kind.value, item.cycle_stamp_ns, str(item.stream))
            for item in report.order_violations] == [
        ('out_of_causal_order', third.stamp_ns, 'actuation')]
    assert 'before the rationale of its cycle' in line_of(lines, 'cycles:')


def test_an_older_actuation_logged_after_a_newer_one_is_out_of_order(
    tmp_path: Path, honest: list[Written], keys: tuple[Path, Path],
) -> None:
    """Cycle 6's actuation held back until after cycle 7's (its gate records unchanged)."""
    sixth, seventh = actuations(honest)[5:7]

    def change(item: Written) -> Written:
        if item is sixth:
            return replace(item, log_time_ns=seventh.log_time_ns + 1000)
        return item

    bag = record(tmp_path / 'bag', forged(honest, change), keys[0])
    code, _ = verify(bag, keys[1])
    assert code == ExitCode.VIOLATED
    report = verify_all(bag).completeness
    assert [(item.kind.value, item.cycle_stamp_ns) for item in report.order_violations] == [
        ('actuation_out_of_order', sixth.stamp_ns)]


def test_a_decoy_actuation_schema_is_refused(
    tmp_path: Path, honest: list[Written], keys: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """/actuations embeds an ActuatorCommand with an extra field: decoded, it would lie."""
    msg_dir = tmp_path / 'msg'
    shutil.copytree(MSG_DIR, msg_dir)
    path = msg_dir / 'ActuatorCommand.msg'
    path.write_text(path.read_text().replace('uint8 kind\n', 'uint8 kind\nuint8 shadow\n'))

    def change(item: Written) -> Written:
        if item.topic != ACTUATIONS:
            return item
        command = {**item.msg['command'], 'shadow': int(ActuatorCommandKind.HOLD_POSITION)}
        return replace(item, msg={**item.msg, 'command': command})

    bag = record(tmp_path / 'bag', forged(honest, change), keys[0], msg_dir=msg_dir)
    assert cli.verify_all_main([str(bag), '--public-key', str(keys[1])]) == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'Traceback' not in err
    assert ('the embedded schema is not the installed ghost_interfaces definition: '
            'ghost_interfaces/ActuatorCommand is (uint8 kind, uint8 shadow, '
            'geometry_msgs/Twist velocity), the installed definition is (uint8 kind, '
            'geometry_msgs/Twist velocity)') in err


def test_a_flood_of_identical_actuations_in_one_cycle_is_a_violation_in_bounded_memory(
    tmp_path: Path, honest: list[Written], keys: tuple[Path, Path],
) -> None:
    """20,000 copies of one actuation, one stamp: a cycle keeps MESSAGES_PER_CYCLE of them."""
    flood = 20_000
    target = actuations(honest)[4]

    def change(item: Written) -> Written | list[Written]:
        if item is target:
            return [replace(item, log_time_ns=item.log_time_ns + index)
                    for index in range(flood)]
        return item

    bag = record(tmp_path / 'bag', forged(honest, change), keys[0])
    kept = max(len(cycle.actuations) for cycle in GhostBag(bag).cycles())
    assert kept == MESSAGES_PER_CYCLE
    code, lines = verify(bag, keys[1])
    assert code == ExitCode.VIOLATED
    report = verify_all(bag).completeness
    (violation,) = [item for item in report.order_violations if item.kind.value == 'cycle_flood']
    assert (violation.cycle_stamp_ns, violation.reference_ns) == (target.stamp_ns, flood)
    assert f'{flood} actuation messages in one cycle, more than the {MESSAGES_PER_CYCLE} kept' \
        in line_of(lines, 'cycles:')
