"""Real PX4 flights played as PX4 would, through px4_bridge and the command gate, verified.

``ghost_run --px4-ulog LOG --speed X`` (what ``make demo-px4`` runs): px4_log_player plays a
log of ../shared/realdata on fmu/out/... with PX4's QoS; px4_bridge, the agent, the stand-in
mission and the PX4-mode command gate run as real processes over real DDS; the recorder's bag
holds the bridge's fmu/out inputs, the gate's records and the setpoints it sent; verify_all
checks BAUD, ERUR, the chain and GATE-v1, and re-derives the bridge's conversion and the
agent from the recorded inputs. The same graph with a deliberately leaky gate (the real
node, its verdict always PASSED) is caught by GATE-v1. ``make demo-px4`` plays every log of
the folder.

The single-log tests play the SITL flight (14_19_29.ulg): its EKF flags its position invalid
for the first seconds and again later, so Ghost proceeds on part of the flight and abstains
on the rest, and both gate paths are exercised.
"""

import collections
from dataclasses import replace
from pathlib import Path
import re
import subprocess
import sys
import time

from graph_runs import payloads_by_topic, PER_CYCLE_TOPICS, recorded_counts
import pytest

from ghost.bringup import closed_loop_graph, GraphOptions, Source
from ghost.launcher import GraphProcesses
from ghost_bag.manifest import MANIFEST_NAME
from ghost_core.graph import PX4_OUT_TOPICS
from ghost_core.levels import DecisionKind

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CONFIG = REPO / 'config'
REALDATA = REPO.parent / 'shared' / 'realdata'
LOG = REALDATA / '14_19_29.ulg'
LEAKY_GATE = HERE / 'leaky_gate.py'
SPEED = '8'

pytestmark = pytest.mark.skipif(not LOG.is_file(),
                                reason=f'{LOG} not found (../shared/realdata beside the clone)')

PASSED, HELD = 0, 1


def _gate_records(bag: Path) -> tuple[list[dict], dict[int, dict]]:
    payloads = payloads_by_topic(bag)
    actuations = {a['header']['stamp']['sec'] * 10**9 + a['header']['stamp']['nanosec']: a
                  for a in payloads['/actuations']}
    # Every setpoint the gate sent has its record (the same stamp, PX4 microseconds). Not the
    # reverse: the setpoints go out best-effort (PX4's QoS), the records reliable, so the
    # recorder may lose a setpoint, never a record. Two topics are not delivered in lockstep,
    # so the pairs are compared from the first actuation (the gate's first holds may go out
    # before the recorder matched one of the topics) to the last stamp the recording holds on
    # both (it stops between two deliveries).
    setpoints, gate = payloads['/fmu/in/trajectory_setpoint'], payloads['/ghost/gate']

    def us(record: dict) -> int:
        stamp = record['header']['stamp']
        return stamp['sec'] * 1_000_000 + stamp['nanosec'] // 1000

    recorded = {us(g) for g in gate}
    sent = {int(s['timestamp']) for s in setpoints}
    first = min((us(g) for g in gate if g['reason'] != 'no_actuation'), default=None)
    assert first is not None and recorded and sent
    last = min(max(recorded), max(sent))
    window = range(first, last + 1)
    assert {t for t in sent if t in window} <= recorded, sorted(
        t for t in sent if t in window and t not in recorded)
    return gate, actuations


def test_ghost_run_px4_ulog_passes_on_proceed_holds_otherwise_and_verifies(
        tmp_path, px4_env) -> None:
    run = tmp_path / 'run'
    result = subprocess.run(
        [sys.executable, '-m', 'ghost.run', '--px4-ulog', str(LOG), '--speed', SPEED,
         '--run-dir', str(run)], env=px4_env, text=True, capture_output=True, timeout=240,
        check=False)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    for line in ('BAUD-v1: HOLDS', 'ERUR-v1: HOLDS', 'GATE-v1: HOLDS', 'conformance:'):
        assert line in out, out
    assert "'px4_log_player': 0" in out, out
    # The bag holds the bridge's PX4 inputs, and verify_all (ghost_run runs it) re-derived
    # both the bridge's conversion and the agent from them, exactly.
    counts = recorded_counts(run / 'bag')
    # Every PX4 topic the log holds (this log has no mission_result: its player stays silent).
    assert all(counts.get(topic, 0) > 0 for topic in PX4_OUT_TOPICS
               if not topic.endswith('/mission_result')), counts
    assert re.search(r'^replay: (\d+)/\1 messages re-derived exactly \(', out, re.M), out
    bridge = re.search(r'^px4_bridge: (\d+)/\1 outputs re-derived exactly from the PX4 samples '
                       r'they name \(/state/nav '
                       r'(\d+), /observations (\d+), /vehicle_status (\d+); from', out, re.M)
    assert bridge is not None, out
    assert int(bridge[2]) > 100 and int(bridge[3]) > 10 and int(bridge[4]) > 0, out
    gate, actuations = _gate_records(run / 'bag')
    by = collections.Counter((g['action'], g['reason']) for g in gate)
    # The gate let the mission through while Ghost proceeded, and held before the first
    # actuation, during the cycles PX4 flagged its position invalid (ABSTAIN) and once the log
    # (and so the actuations) ended: fail closed.
    assert by[(PASSED, 'proceed')] > 50, by
    assert by[(HELD, 'no_actuation')] > 0 and by[(HELD, 'actuation_stale')] > 0, by
    assert by[(HELD, 'decision_not_proceed')] > 0, by
    for record in gate:
        if record['action'] == PASSED:
            stamp = record['actuation_stamp']
            cited = actuations[stamp['sec'] * 10**9 + stamp['nanosec']]
            assert cited['decision']['kind'] == DecisionKind.PROCEED
            assert cited['rationale_sha256'] == record['rationale_sha256']
        else:
            assert list(record['velocity']) == [0.0, 0.0, 0.0], record


def _wait_until_played(graph: GraphProcesses, bag: Path, timeout_s: float) -> None:
    """Wait until the player has played the log and its last cycles are recorded.

    The last cycles: a manifest the recorder wrote after the player ended that holds as many
    messages of every Ghost topic with one per cycle: every belief judged, decided, actuated
    and, idle_flush_s after the last input, resolved. Not a count of the bridge's beliefs: the
    inputs are best-effort, the recorder may miss one the graph got.
    """
    deadline = time.monotonic() + timeout_s
    ended_at = None
    while time.monotonic() < deadline:
        exited = graph.failed()
        died = {name: code for name, code in exited.items()
                if not (name == 'px4_log_player' and code == 0)}
        assert not died, f'{died} exited (logs in {graph.log_dir})'
        if ended_at is None and 'px4_log_player' in exited:
            ended_at = time.time()
        if ended_at is not None and (bag / MANIFEST_NAME).stat().st_mtime > ended_at:
            counts = recorded_counts(bag)
            per_topic = {counts.get(topic, 0) for topic in PER_CYCLE_TOPICS}
            if len(per_topic) == 1 and per_topic != {0}:
                return
        time.sleep(0.2)
    what = ('the log was not played' if ended_at is None else
            f'the last cycles were not recorded (recorded: {recorded_counts(bag)})')
    pytest.fail(f'{what} within {timeout_s} s (logs in {graph.log_dir})')


def test_a_leaky_gate_in_the_same_run_violates_gate_v1(tmp_path, px4_env) -> None:
    bag = tmp_path / 'bag'
    specs = closed_loop_graph(
        CONFIG, GraphOptions(record=True, bag_path=str(bag), source=Source.PX4_ULOG,
            px4_ulog=str(LOG),
            overrides={'px4_log_player': {'speed': float(SPEED), 'exit_when_done': True}}))
    leaky = tmp_path / 'leaky_gate'
    leaky.write_text(f'#!/bin/sh\nexec {sys.executable} {LEAKY_GATE} "$@"\n')
    leaky.chmod(0o755)
    specs = [replace(spec, executable=str(leaky)) if spec.name == 'command_gate' else spec
             for spec in specs]
    graph = GraphProcesses(specs, tmp_path / 'logs', px4_env)
    graph.start()
    try:
        _wait_until_played(graph, bag, 180)
    finally:
        graph.stop()
    verdict = subprocess.run([sys.executable, '-m', 'ghost_verify', str(bag)], env=px4_env,
                             text=True, capture_output=True, timeout=120, check=False)
    assert verdict.returncode == 1, verdict.stdout + verdict.stderr
    assert 'GATE-v1: VIOLATED' in verdict.stdout, verdict.stdout
    # BAUD/ERUR and the chain still hold: only the gate leaked.
    assert 'ERUR-v1: HOLDS' in verdict.stdout and 'BAUD-v1: HOLDS' in verdict.stdout
    gate, actuations = _gate_records(bag)
    leaked = [g for g in gate if g['action'] == PASSED and g['decision_kind'] != 0]
    assert leaked, 'the leaky gate passed nothing during a non-PROCEED cycle'


#: One summary line of scripts/demo_px4.sh per log.
SUMMARY = re.compile(r'^(?P<log>\S+\.ulg): (?P<verdict>verified|NOT verified); '
                     r'Ghost: (?P<decisions>.+) of (?P<cycles>\d+) cycles; '
                     r'ERUR on \d+, BAUD on \d+ cycles; gate: (?P<gate>.+)$')
#: What the README of ../shared/realdata says of each flight, as the gate must act on it:
#: flights Ghost should let proceed, and the one it must never (no GNSS fix: PX4 flags its
#: position invalid all flight, so Ghost abstains on every cycle and the gate holds all).
PROCEEDS = ('14_19_29.ulg', 'esc_status_log.ulg', 'log_123_2024-3-1-14-47-02.ulg')
NEVER_PROCEEDS = ('quadrotor_local.ulg',)


def _counts(text: str) -> dict[str, int]:
    """'PROCEED 3, HOLD 1' or '2 held/no_actuation, 5 passed/proceed' as {name: count}."""
    counts = {}
    for item in text.split(', '):
        first, second = item.split(' ')
        name, count = (second, first) if first.isdigit() else (first, second)
        counts[name] = int(count)
    return counts


def test_demo_px4_script_runs_every_real_log_and_says_what_the_gate_did(tmp_path,
                                                                        px4_env) -> None:
    """What ``make demo-px4`` runs (after the bootstrap): scripts/demo_px4.sh on every log.

    Every log of ../shared/realdata is played (at 8x rather than the demo's 4x, to keep the
    suite's budget: about 4 min of flight in 30 s of playback), verified, and summed up in one
    line: the gate passes the mission only on cycles Ghost proceeded on, and on the flight
    without a position (quadrotor_local) Ghost abstains throughout and the gate holds all.
    """
    logs = sorted(REALDATA.glob('*.ulg'))
    assert {log.name for log in logs} >= {*PROCEEDS, *NEVER_PROCEEDS}, logs
    result = subprocess.run(
        ['bash', str(REPO / 'scripts' / 'demo_px4.sh')],
        env={**px4_env, 'PX4_SPEED': SPEED, 'RUNS': str(tmp_path / 'runs')}, text=True,
        capture_output=True, timeout=600, check=False, cwd=REPO)
    output = result.stdout[-4000:] + result.stderr[-4000:]
    assert result.returncode == 0, output
    summaries = {}
    for line in (result.stderr + result.stdout).splitlines():
        match = SUMMARY.match(line.strip())
        if match:
            summaries[match['log']] = match
    assert sorted(summaries) == [log.name for log in logs], output
    for name, match in summaries.items():
        decisions, gate = _counts(match['decisions']), _counts(match['gate'])
        assert match['verdict'] == 'verified', (name, output)
        assert sum(decisions.values()) == int(match['cycles']) > 0, (name, match[0])
        # The gate passes only what Ghost proceeded on, and holds everything else.
        assert all(key == 'passed/proceed' for key in gate if key.startswith('passed/')), (
            name, match[0])
        if name in PROCEEDS:
            assert decisions.get('PROCEED', 0) > 0 and gate.get('passed/proceed', 0) > 0, (
                name, match[0])
        if name in NEVER_PROCEEDS:
            assert decisions == {'ABSTAIN_UNCERTAIN': int(match['cycles'])}, (name, match[0])
            assert not any(key.startswith('passed/') for key in gate), (name, match[0])
            assert gate.get('held/decision_not_proceed', 0) > 0, (name, match[0])
    assert len(list((tmp_path / 'runs').glob('px4-*/bag/metadata.yaml'))) == len(logs)
