"""command_gate over real DDS: what leaves for the vehicle, per decision, and when Ghost stops.

The node runs as its installed executable; gate_feed.py plays Ghost's actuations and the
mission's outputs phase by phase (each phase waits for the gate's record to show it acted on
the phase's actuation) and records everything that leaves the gate. The assertions read the
record (ghost/gate, GateEmission) and check it against what arrived on the output topics.
"""

import hashlib
import json
import math
from pathlib import Path
import signal
import sys

import pytest

from ghost.launcher import signal_group
from ghost_core.gate import GateAction
from ghost_core.levels import ActuatorCommandKind as C
from ghost_core.levels import DecisionKind as D

HERE = Path(__file__).resolve().parent
GATE = HERE.parents[1] / 'install' / 'ghost_nodes' / 'lib' / 'ghost_nodes' / 'command_gate'
LEAKY_GATE = HERE / 'leaky_gate.py'
FEED = HERE / 'gate_feed.py'
NAN = float('nan')
PASSED, HELD, VEHICLE_COMMAND = (int(a) for a in GateAction)


def sha(name):
    return hashlib.sha256(name.encode()).hexdigest()


def _local(x, y, z, heading, xy_valid=True, heading_good=True):
    return {'timestamp': 1, 'xy_valid': xy_valid, 'z_valid': True, 'x': x, 'y': y, 'z': z,
            'heading': heading, 'heading_good_for_control': heading_good}


def _phase(name, actuation=None, until=None, count=3, outputs=3, **extra):
    phase = {'name': name, 'until': until if until is not None else {'cites': name},
             'count': count, 'outputs': outputs, **extra}
    if actuation is not None:
        phase['actuation'] = [int(actuation[0]), int(actuation[1])]
    return phase


PROCEED = (D.PROCEED, C.CONTINUE_MISSION)
#: The last phase: passing again, so no hold is in flight when the feed stops listening.
RESUME = _phase('resume', PROCEED, {'cites': 'resume', 'action': PASSED}, count=1, outputs=1)
HOLD = (D.HOLD, C.HOLD_POSITION)
LAND = (D.ENGAGE_LAND, C.LAND)
RTL = (D.ENGAGE_RTL, C.RETURN_TO_LAUNCH)

#: The PX4 run: each decision, the vehicle commands' once-per-transition rule, the hold point
#: (latched when the hold begins, NaN where the position is not valid), then the timeout.
PX4_PHASES = [
    _phase('start', until={'reason': 'no_actuation'}),           # no actuation, no position
    _phase('here', local_position=_local(1.0, 2.0, -3.0, 0.25), outputs=0, count=2,
           until={'reason': 'no_actuation', 'position': [1.0, 2.0, -3.0]}),
    _phase('proceed', PROCEED, {'cites': 'proceed', 'action': PASSED},
           local_position=_local(5.0, 6.0, -7.0, 0.5)),
    _phase('hold', HOLD, {'cites': 'hold', 'action': HELD}),
    # The vehicle moves during the hold: the hold point stays where the hold began.
    _phase('abstain', (D.ABSTAIN_UNCERTAIN, C.HOLD_POSITION),
           local_position=_local(9.0, 9.0, -9.0, 1.0)),
    _phase('land', LAND, {'cites': 'land', 'action': HELD}),
    _phase('land_again', LAND, {'cites': 'land_again', 'action': HELD}),   # no second LAND
    _phase('rtl', RTL, {'cites': 'rtl', 'action': HELD}),
    _phase('proceed2', PROCEED, {'cites': 'proceed2', 'action': PASSED},
           local_position=_local(9.0, 9.0, -4.0, 1.0, xy_valid=False, heading_good=False)),
    _phase('hold_no_xy', HOLD, {'cites': 'hold_no_xy', 'action': HELD}),
    _phase('land_after_hold', LAND, {'cites': 'land_after_hold', 'action': HELD}),
    _phase('proceed3', PROCEED, {'cites': 'proceed3', 'action': PASSED}, outputs=10),
    _phase('stale', until={'reason': 'actuation_stale', 'cites': 'proceed3'}, outputs=0,
           stop_actuations=True),
    RESUME,
]

#: Where each phase's hold is (x, y, z NED, yaw); the phase is the actuation the hold cites.
HOLD_POINTS = {
    'hold': (5.0, 6.0, -7.0, 0.5), 'abstain': (5.0, 6.0, -7.0, 0.5),
    'land': (5.0, 6.0, -7.0, 0.5), 'land_again': (5.0, 6.0, -7.0, 0.5),
    'rtl': (5.0, 6.0, -7.0, 0.5), 'hold_no_xy': (NAN, NAN, -4.0, NAN),
    'land_after_hold': (NAN, NAN, -4.0, NAN), 'proceed3': (NAN, NAN, -4.0, NAN),
}
REASONS = {'hold': 'decision_not_proceed', 'abstain': 'decision_not_proceed',
           'hold_no_xy': 'decision_not_proceed', 'land': 'land', 'land_again': 'land',
           'land_after_hold': 'land', 'rtl': 'return_to_launch', 'proceed3': 'actuation_stale'}
KINDS = {phase['name']: tuple(phase['actuation']) for phase in PX4_PHASES if 'actuation' in phase}
BY_SHA = {sha(name): name for name in KINDS}


def _same(a, b):
    """Equal vectors, NaN equal to NaN."""
    return len(a) == len(b) and all((math.isnan(x) and math.isnan(y)) or x == pytest.approx(y)
                                    for x, y in zip(a, b, strict=True))


def _reporting(argv):
    """The gate's command line with its readiness report on: the feed waits for it."""
    return [*argv, *([] if '--ros-args' in argv else ['--ros-args']), '-p', 'graph_status:=true']


def _play(tmp_path, processes, env, phases, gate_argv, feed_args=(), name='phases'):
    """Run a gate and a feed playing ``phases``; what the feed saw."""
    path = tmp_path / f'{name}.json'
    path.write_text(json.dumps(phases))
    gate = processes.start(_reporting(gate_argv), env)
    feed = processes.start([sys.executable, str(FEED), str(path), *feed_args], env)
    out, err = feed.communicate(timeout=120)
    assert feed.returncode == 0, f'feed: {err}\ngate: {_stderr_if_dead(gate)}'
    assert gate.poll() is None, _stderr_if_dead(gate)
    return json.loads(out.strip().splitlines()[-1])


def _stderr_if_dead(proc):
    return proc.stderr.read() if proc.poll() is not None and proc.stderr else '(running)'


def _mission_k(position):
    return int(position[0]) - 1000 if position[0] >= 1000 else None


def _check_cites_truthfully(emission, seen, timeout_s):
    """The actuation fields name one the feed published, and the verdict fits its age."""
    assert emission['schema_version'] == 1 and emission['timeout_s'] == timeout_s
    age_ns = emission['stamp_ns'] - emission['received_ns']
    if not emission['has_actuation']:
        assert emission['reason'] == 'no_actuation' and emission['action'] == HELD, emission
        assert (emission['rationale_sha256'], emission['decision_kind']) == ('', 0)
        return
    published = {(a['rationale_sha256'], a['stamp_ns']) for a in seen['actuations']}
    assert (emission['rationale_sha256'], emission['actuation_stamp_ns']) in published
    assert age_ns >= 0
    stale = age_ns > timeout_s * 1e9
    assert (emission['reason'] == 'actuation_stale') == stale, emission


def test_px4_gate_passes_only_on_proceed_holds_otherwise_and_lands_once(
        tmp_path, processes, px4_env) -> None:
    """Every decision over DDS, then the timeout; the record says exactly what was sent."""
    seen = _play(tmp_path, processes, px4_env, PX4_PHASES,
                 [str(GATE), '--ros-args', '-p', 'timeout_s:=1.0'])
    emissions = seen['gate']
    setpoints = [e for e in emissions if e['output_topic'] == '/fmu/in/trajectory_setpoint']
    commands = [e for e in emissions if e['output_topic'] == '/fmu/in/vehicle_command']
    assert len(setpoints) + len(commands) == len(emissions)
    for emission in emissions:
        _check_cites_truthfully(emission, seen, 1.0)
        assert emission['mode'] == 'px4'
        assert emission['twist'] == {'linear': [0.0] * 3, 'angular': [0.0] * 3}
        cited = BY_SHA.get(emission['rationale_sha256'])
        if emission['has_actuation']:
            assert (emission['decision_kind'], emission['command_kind']) == KINDS[cited]

    # PASSED: only on PROCEED / CONTINUE_MISSION, the mission's setpoint unchanged.
    passed = [e for e in setpoints if e['action'] == PASSED]
    assert {BY_SHA[e['rationale_sha256']] for e in passed} == {
        name for name, kinds in KINDS.items() if kinds == PROCEED}
    for emission in passed:
        assert emission['reason'] == 'proceed' and emission['frame_id'] == 'ned'
        assert _mission_k(emission['position']) is not None, emission
        assert _same(emission['velocity'], [NAN] * 3) and emission['yaw'] == 0.5
        assert emission['vehicle_command'] == 0

    # HELD: at the hold point, zero velocity; before any actuation, NaN until a position.
    held = [e for e in setpoints if e['action'] == HELD]
    for emission in held:
        assert emission['frame_id'] == 'ned' and emission['velocity'] == [0.0] * 3
        point = emission['position'] + [emission['yaw']]
        if not emission['has_actuation']:
            assert _same(point, [NAN] * 4) or _same(point, [1.0, 2.0, -3.0, 0.25]), emission
            continue
        cited = BY_SHA[emission['rationale_sha256']]
        assert emission['reason'] == REASONS[cited], emission
        assert _same(point, HOLD_POINTS[cited]), emission
    held_phases = {BY_SHA[e['rationale_sha256']] for e in held if e['has_actuation']}
    assert held_phases == set(HOLD_POINTS)
    start = [e for e in held if e['phase'] == 'start']
    assert start and all(_same(e['position'], [NAN] * 3) for e in start)

    # LAND / RTL: one VehicleCommand per transition into the command.
    assert [(BY_SHA[e['rationale_sha256']], e['vehicle_command'], e['reason'])
            for e in commands] == [('land', 21, 'land'), ('rtl', 20, 'return_to_launch'),
                                   ('land_after_hold', 21, 'land')]
    assert all(e['action'] == VEHICLE_COMMAND and e['frame_id'] == '' for e in commands)
    assert [c['command'] for c in seen['commands']] == [21, 20, 21]
    for command in seen['commands']:
        assert (command['target_system'], command['target_component'],
                command['source_system'], command['source_component']) == (1, 1, 1, 1)
        assert command['from_external'] and command['timestamp'] > 0

    # The outputs are what the record says: the passed mission setpoints and the holds.
    sent = {s['k']: s for s in seen['sent']}
    out_mission = {_mission_k(s['position']): s for s in seen['setpoints']
                   if _mission_k(s['position']) is not None}
    assert sorted(out_mission) == sorted(_mission_k(e['position']) for e in passed)
    assert not [k for k in out_mission if sent[k]['after_match']
                and KINDS.get(sent[k]['phase']) != PROCEED]
    for k, setpoint in out_mission.items():
        assert setpoint['timestamp'] == (123456 + k if k % 2 else setpoint['timestamp'])
        assert setpoint['timestamp'] > 0
    # Each hold that arrived is one recorded, and the other way round (the timestamp of a hold
    # is its record's stamp, in us).
    holds = {s['timestamp']: s for s in seen['setpoints'] if _mission_k(s['position']) is None}
    recorded = {e['stamp_ns'] // 1000: e for e in held}
    assert set(holds) == set(recorded)
    for stamp_us, hold in holds.items():
        assert _same(hold['position'] + [hold['yaw']],
                     recorded[stamp_us]['position'] + [recorded[stamp_us]['yaw']])
        assert hold['velocity'] == [0.0] * 3

    # The timeout: holds without mission traffic or actuations, citing the last actuation.
    stale = [e for e in held if e['reason'] == 'actuation_stale']
    assert len(stale) >= 3 and all(e['phase'] in ('stale', 'resume') for e in stale)
    assert not [s for s in seen['sent'] if s['phase'] == 'stale']

    # offboard_control_mode, kept alive: velocity control while the hold has no position,
    # position control at a hold point, and on in every phase.
    offboard = seen['offboard']
    assert {o['phase'] for o in offboard} >= {p['name'] for p in PX4_PHASES}
    assert all(o['velocity'] and not o['position'] for o in offboard if o['phase'] == 'start')
    for phase in ('hold', 'abstain', 'land', 'rtl', 'hold_no_xy', 'proceed3', 'stale'):
        assert all(o['position'] and not o['velocity']
                   for o in offboard if o['phase'] == phase), phase
    assert len([o for o in offboard if o['phase'] == 'stale']) >= 3


def _kill_run(processes, env, tmp_path, namespace, gate_params):
    """Start a gate, Ghost (a process publishing PROCEED) and the mission (which records)."""
    phases = [_phase('passing', until={'action': PASSED}, announce='passing'),
              _phase('gone', until={'action': HELD})]
    path = tmp_path / f'{namespace}.json'
    path.write_text(json.dumps(phases))
    ns = ['-r', f'__ns:=/{namespace}']
    gate = processes.start(_reporting([str(GATE), '--ros-args', *ns, *gate_params]), env)
    ghost = processes.start([sys.executable, str(FEED), '--actuate-only', str(int(D.PROCEED)),
                             str(int(C.CONTINUE_MISSION)), '--namespace', namespace], env)
    mission = processes.start([sys.executable, str(FEED), str(path), '--no-actuations',
                               '--namespace', namespace], env)
    return gate, ghost, mission


def _after_stop(gate, ghost, mission, stop_signal):
    """Once the mission sees setpoints pass, stop Ghost with ``stop_signal``; what it saw."""
    for line in mission.stdout:
        if line.strip() == 'passing':
            break
    else:
        pytest.fail(f'the mission never saw a setpoint pass: {mission.stderr.read()}')
    signal_group(ghost, stop_signal)
    out, err = mission.communicate(timeout=60)
    assert mission.returncode == 0, f'{err}\ngate: {_stderr_if_dead(gate)}'
    return json.loads(out.strip().splitlines()[-1])


def test_gate_fails_closed_when_ghost_is_killed_or_stops(tmp_path, processes, px4_env) -> None:
    """Ghost killed: held after the timeout; Ghost stopped: held at once, before the timeout.

    Stopped, Ghost's writer unmatches and the gate holds although the rule (5 s timeout, the
    declared bound) would still pass. DDS notices a killed process only when its lease
    expires (20 s with Fast DDS): there the timeout is what holds.
    """
    killed = _kill_run(processes, px4_env, tmp_path, 'killed', [])
    stopped = _kill_run(processes, px4_env, tmp_path, 'stopped', ['-p', 'timeout_s:=5.0'])
    for run, sig, timeout_s in ((killed, signal.SIGKILL, 0.5), (stopped, signal.SIGINT, 5.0)):
        seen = _after_stop(*run, sig)
        gone = [e for e in seen['gate'] if e['phase'] == 'gone' and e['action'] == HELD]
        assert len(gone) >= 3
        for emission in gone:
            assert emission['reason'] == ('actuation_stale' if sig is signal.SIGKILL
                                          else 'actuation_source_gone'), emission
            assert emission['rationale_sha256'] == sha('actuate_only')
            assert (emission['decision_kind'], emission['command_kind']) == PROCEED
            assert _same(emission['position'], [NAN] * 3)
            assert emission['velocity'] == [0.0] * 3
            age_s = (emission['stamp_ns'] - emission['received_ns']) / 1e9
            # Killed: held for the timeout. Stopped: held although the rule would still pass.
            assert age_s > 0.5 if sig is signal.SIGKILL else age_s < timeout_s
        after = {s['k'] for s in seen['sent'] if s['phase'] == 'gone' and s['after_match']}
        out = {int(s['position'][0]) - 1000 for s in seen['setpoints']
               if s['position'][0] >= 1000}
        assert after and not after & out


def test_leaky_gate_passes_setpoints_during_hold(tmp_path, processes, px4_env) -> None:
    """The GATE-v1 tests' leaky gate: the real node with ``_verdict`` always PASSED."""
    phases = [_phase('hold', HOLD, {'cites': 'hold', 'action': PASSED})]
    seen = _play(tmp_path, processes, px4_env, phases, [sys.executable, str(LEAKY_GATE)])
    during = [e for e in seen['gate'] if e['rationale_sha256'] == sha('hold')]
    assert during and all(e['action'] == PASSED and e['decision_kind'] == D.HOLD
                          for e in during)
    after = {s['k'] for s in seen['sent'] if s['after_match']}
    out = {int(s['position'][0]) - 1000 for s in seen['setpoints']}
    assert after and after <= out
    assert not seen['commands'] and not [e for e in seen['gate'] if e['action'] != PASSED]


TWIST_PHASES = [
    _phase('start', until={'reason': 'no_actuation'}, outputs=2),
    _phase('proceed', PROCEED, {'cites': 'proceed', 'action': PASSED}),
    _phase('hold', HOLD, {'cites': 'hold', 'action': HELD}),
    _phase('land', LAND, {'cites': 'land', 'action': HELD}),
    _phase('proceed2', PROCEED, {'cites': 'proceed2', 'action': PASSED}, outputs=2),
    _phase('stale', until={'reason': 'actuation_stale', 'cites': 'proceed2'}, outputs=0,
           stop_actuations=True),
    RESUME,
]
TWIST_REASONS = {'hold': 'decision_not_proceed', 'land': 'land', 'proceed2': 'actuation_stale'}
TWIST_BY_SHA = {sha(p['name']): p['name'] for p in TWIST_PHASES if 'actuation' in p}


@pytest.mark.parametrize('stamped', [False, True], ids=['Twist', 'TwistStamped'])
def test_twist_gate_passes_on_proceed_and_zeroes_otherwise(tmp_path, processes, ros_env,
                                                           stamped) -> None:
    """Generic mode: cmd_vel_in -> cmd_vel passed on PROCEED, a zero twist otherwise."""
    namespace = 'stamped' if stamped else 'plain'
    params = ['-p', 'mode:=twist', '-p', f'twist_stamped:={str(stamped).lower()}']
    seen = _play(tmp_path, processes, ros_env, TWIST_PHASES,
                 [str(GATE), '--ros-args', '-r', f'__ns:=/{namespace}', *params],
                 ['--mode', 'twist', '--namespace', namespace, *(['--stamped'] * stamped)],
                 name=namespace)
    frame = 'base_link' if stamped else ''
    zero = {'linear': [0.0] * 3, 'angular': [0.0] * 3}
    for emission in seen['gate']:
        _check_cites_truthfully(emission, seen, 0.5)
        assert emission['mode'] == 'twist' and emission['output_topic'] == f'/{namespace}/cmd_vel'
        assert emission['position'] == emission['velocity'] == [0.0] * 3
        assert emission['action'] != VEHICLE_COMMAND and emission['vehicle_command'] == 0
        cited = TWIST_BY_SHA.get(emission['rationale_sha256'])
        if emission['action'] == PASSED:
            assert cited in ('proceed', 'proceed2', 'resume') and emission['frame_id'] == frame
            assert emission['twist']['linear'][0] >= 1000
            assert emission['twist']['angular'] == [0.0, 0.0, 0.5]
        else:
            assert emission['twist'] == zero
            assert emission['reason'] == TWIST_REASONS.get(cited, 'no_actuation'), emission
    assert {TWIST_BY_SHA.get(e['rationale_sha256']) for e in seen['gate']
            if e['action'] == HELD} == {None, 'hold', 'land', 'proceed2'}
    passed_k = sorted(int(e['twist']['linear'][0]) - 1000 for e in seen['gate']
                      if e['action'] == PASSED)
    out_k = sorted(int(t['linear'][0]) - 1000 for t in seen['twists'] if t['linear'][0] >= 1000)
    assert passed_k == out_k and out_k
    zeros = [t for t in seen['twists'] if t['linear'][0] < 1000]
    assert zeros and all(t['linear'] == [0.0] * 3 and t['angular'] == [0.0] * 3 for t in zeros)
    assert len(zeros) == len([e for e in seen['gate'] if e['action'] == HELD])
    assert len([t for t in zeros if t['phase'] == 'stale']) >= 3
    if stamped:
        # A held input keeps its header; a zero twist of the timer is stamped now, in the
        # last input's frame.
        kept = [t for t in zeros if t['stamp_ns'] < 1000 * 10**9]
        assert kept and all(t['frame_id'] == 'base_link' for t in kept)
        assert all(t['frame_id'] == 'base_link' for t in zeros
                   if t['phase'] not in ('', 'start'))  # '': while the feed waited to match


def _play_then_stop(tmp_path, processes, env, phases, gate_argv, feed_args=(), name='phases'):
    """``_play``; then the gate, still running, is stopped: what the feed saw, what it logged."""
    path = tmp_path / f'{name}.json'
    path.write_text(json.dumps(phases))
    gate = processes.start(_reporting(gate_argv), env)
    feed = processes.start([sys.executable, str(FEED), str(path), *feed_args], env)
    out, err = feed.communicate(timeout=120)
    assert feed.returncode == 0, f'feed: {err}\ngate: {_stderr_if_dead(gate)}'
    assert gate.poll() is None, f'the gate died: {_stderr_if_dead(gate)}'
    signal_group(gate, signal.SIGINT)
    _, log = gate.communicate(timeout=30)
    return json.loads(out.strip().splitlines()[-1]), log


def _finite_or_nan(values):
    return all(math.isfinite(v) or math.isnan(v) for v in values)


#: A foreign publisher's actuations: not a SHA-256 (the second one only by its case).
NOT_A_SHA = 'not-a-sha256'
UPPER_SHA = sha('foreign').upper()
HERE_A, HERE_B = (1.0, 2.0, -3.0, 0.25), (7.0, 8.0, -9.0, 1.0)
INVALID = {'cites': 'proceed', 'reason': 'invalid_mission_output'}
#: Foreign PROCEEDs before any valid actuation (no_actuation), PROCEED, invalid setpoints
#: (the vehicle moves during them: the hold stays where it began), valid ones again, then
#: foreign PROCEEDs: the gate goes on acting on 'proceed' until it is stale.
FAIL_SAFE_PHASES = [
    _phase('foreign_first', PROCEED, {'reason': 'no_actuation', 'position': list(HERE_A[:3])},
           actuation_sha=NOT_A_SHA, local_position=_local(*HERE_A)),
    _phase('proceed', PROCEED, {'cites': 'proceed', 'action': PASSED}),
    _phase('invalid', until=INVALID, count=4, outputs=4, invalid_outputs=True),
    _phase('invalid_moved', until=INVALID, count=4, outputs=4, invalid_outputs=True,
           local_position=_local(*HERE_B)),
    _phase('valid_again', until={'cites': 'proceed', 'action': PASSED}),
    _phase('foreign', PROCEED, {'cites': 'proceed', 'reason': 'actuation_stale'},
           actuation_sha=UPPER_SHA),
    RESUME,
]


def test_px4_gate_ignores_foreign_actuations_and_holds_invalid_setpoints(
        tmp_path, processes, px4_env) -> None:
    """Fail-safe on bad input: foreign actuations never justify, +inf setpoints are held."""
    seen, log = _play_then_stop(tmp_path, processes, px4_env, FAIL_SAFE_PHASES,
                                [str(GATE), '--ros-args', '-p', 'timeout_s:=2.0'])
    emissions = seen['gate']
    by_phase = {p['name']: [e for e in emissions if e['phase'] == p['name']]
                for p in FAIL_SAFE_PHASES}
    for emission in emissions:
        _check_cites_truthfully(emission, seen, 2.0)
        assert emission['rationale_sha256'] in ('', sha('proceed'), sha('resume')), emission
        assert emission['output_topic'] == '/fmu/in/trajectory_setpoint', emission
    foreign = {(a['phase'], a['rationale_sha256']) for a in seen['actuations']}
    assert {('foreign_first', NOT_A_SHA), ('foreign', UPPER_SHA)} <= foreign
    assert f"ignored actuation #1: rationale_sha256 '{NOT_A_SHA}' is not a SHA-256" in log, log

    # Foreign PROCEEDs before any valid actuation: held, no actuation.
    assert by_phase['foreign_first'] and all(
        e['action'] == HELD and not e['has_actuation'] for e in by_phase['foreign_first'])

    # Invalid setpoints: each held (not sent), at the point where the first hold began.
    sent = {s['k']: s for s in seen['sent']}
    invalid_k = {k for k, s in sent.items() if 'invalid' in s}
    assert {sent[k]['invalid'] for k in invalid_k} == {'position[1]', 'velocity[2]'}
    assert {sent[k]['phase'] for k in invalid_k} == {'invalid', 'invalid_moved'}
    held_invalid = [e for e in emissions if e['reason'] == 'invalid_mission_output']
    assert len(held_invalid) == len(invalid_k)
    for emission in held_invalid:
        assert emission['action'] == HELD and emission['rationale_sha256'] == sha('proceed')
        assert emission['phase'] in ('invalid', 'invalid_moved'), emission
        assert emission['frame_id'] == 'ned' and emission['velocity'] == [0.0] * 3
        assert _same(emission['position'] + [emission['yaw']], HERE_A), emission
    assert 'held mission output #1: ' in log, log
    holds = {s['timestamp']: s for s in seen['setpoints'] if _mission_k(s['position']) is None}
    for emission in held_invalid:
        hold = holds[emission['stamp_ns'] // 1000]
        assert _same(hold['position'] + [hold['yaw']], HERE_A) and hold['velocity'] == [0.0] * 3

    # What left: no non-finite value; exactly the passed setpoints, none of them invalid.
    assert all(_finite_or_nan(s['position'] + s['velocity'] + [s['yaw']])
               for s in seen['setpoints'])
    passed = [e for e in emissions if e['action'] == PASSED]
    out_k = sorted(_mission_k(s['position']) for s in seen['setpoints']
                   if _mission_k(s['position']) is not None)
    assert out_k == sorted(_mission_k(e['position']) for e in passed)
    assert not invalid_k & set(out_k)
    assert {sent[k]['phase'] for k in out_k} <= {'proceed', 'valid_again', 'foreign', 'resume'}
    # Valid setpoints pass again after the invalid ones.
    assert len([e for e in by_phase['valid_again'] if e['action'] == PASSED]) >= 3

    # Foreign PROCEEDs after a valid one: ignored, so 'proceed' goes on until it is stale; the
    # hold, released by the valid setpoints, is where the vehicle is now.
    during = by_phase['foreign']
    assert [e for e in during if e['action'] == PASSED]
    stale = [e for e in during if e['reason'] == 'actuation_stale']
    assert len(stale) >= 3
    for emission in stale:
        assert emission['action'] == HELD and emission['rationale_sha256'] == sha('proceed')
        assert _same(emission['position'] + [emission['yaw']], HERE_B), emission
    after = {k for k, s in sent.items() if s['phase'] == 'foreign' and s['after_match']}
    assert after and not after & set(out_k)


TWIST_INVALID_PHASES = [
    _phase('proceed', PROCEED, {'cites': 'proceed', 'action': PASSED}),
    _phase('invalid', until=INVALID, count=4, outputs=4, invalid_outputs=True),
    _phase('valid_again', until={'cites': 'proceed', 'action': PASSED}),
]


def test_twist_gate_holds_non_finite_twists(tmp_path, processes, ros_env) -> None:
    """Twist mode: a twist with a NaN or inf component is a zero twist, recorded as held."""
    seen, log = _play_then_stop(
        tmp_path, processes, ros_env, TWIST_INVALID_PHASES,
        [str(GATE), '--ros-args', '-r', '__ns:=/invalid', '-p', 'mode:=twist',
         '-p', 'timeout_s:=2.0'], ['--mode', 'twist', '--namespace', 'invalid'], name='invalid')
    emissions = seen['gate']
    zero = {'linear': [0.0] * 3, 'angular': [0.0] * 3}
    sent = {s['k']: s for s in seen['sent']}
    invalid_k = {k for k, s in sent.items() if 'invalid' in s}
    assert {sent[k]['invalid'] for k in invalid_k} == {'linear.y', 'angular.x'}
    held_invalid = [e for e in emissions if e['reason'] == 'invalid_mission_output']
    assert len(held_invalid) == len(invalid_k)
    for emission in emissions:
        _check_cites_truthfully(emission, seen, 2.0)
    for emission in held_invalid:
        assert emission['action'] == HELD and emission['rationale_sha256'] == sha('proceed')
        assert emission['twist'] == zero and emission['phase'] == 'invalid', emission
    assert 'held mission output #1: ' in log, log

    # What left: finite twists only, exactly the passed ones and a zero twist per hold.
    twists = seen['twists']
    assert all(math.isfinite(v) for t in twists for v in t['linear'] + t['angular'])
    passed_k = sorted(int(e['twist']['linear'][0]) - 1000 for e in emissions
                      if e['action'] == PASSED)
    out_k = sorted(int(t['linear'][0]) - 1000 for t in twists if t['linear'][0] >= 1000)
    assert out_k == passed_k and not invalid_k & set(out_k)
    zeros = [t for t in twists if t['linear'][0] < 1000]
    assert all({'linear': t['linear'], 'angular': t['angular']} == zero for t in zeros)
    assert len(zeros) == len([e for e in emissions if e['action'] == HELD])
    assert len([t for t in zeros if t['phase'] == 'invalid']) >= len(held_invalid)
    # Valid twists pass again after the invalid ones.
    assert len([e for e in emissions if e['phase'] == 'valid_again'
                and e['action'] == PASSED]) >= 3
