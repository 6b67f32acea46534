"""The command gate in ardupilot mode over real DDS, against a stand-in ArduCopter.

ap_stand_in.py plays Ghost (actuations), the mission (cmd_vel_in) and the vehicle: AP_DDS's
/ap/cmd_vel reader and /ap/mode_switch service, and Copter's GUIDED timeout (it stops by itself
about 3 s after the last cmd_vel, GUID_TIMEOUT). The gate is the installed command_gate.
"""

import json
from pathlib import Path
import signal
import sys

from ghost_core.levels import ActuatorCommandKind as C
from ghost_core.levels import DecisionKind as D

HERE = Path(__file__).resolve().parent
GATE = HERE.parents[1] / 'install' / 'ghost_nodes' / 'lib' / 'ghost_nodes' / 'command_gate'
STAND_IN = HERE / 'ap_stand_in.py'
PASSED, HELD, VEHICLE_COMMAND = 0, 1, 2
SWITCHED, REFUSED = 1, 2
BRAKE, LAND = 17, 9
PROCEED = [D.PROCEED, C.CONTINUE_MISSION]


def _gate(processes, env, namespace: str):
    return processes.start([str(GATE), '--ros-args', '-r', f'__ns:=/{namespace}', '-p',
                            'mode:=ardupilot', '-p', 'timeout_s:=1.0'], env)


def _stand_in(processes, env, tmp_path, namespace: str, phases: list, *extra: str):
    path = tmp_path / 'phases.json'
    path.write_text(json.dumps(phases))
    return processes.start([sys.executable, str(STAND_IN), str(path), *extra, '--ros-args',
                            '-r', f'__ns:=/{namespace}'], env)


def test_cmd_vel_passes_only_on_proceed_and_a_hold_asks_the_vehicle_for_a_mode(
        tmp_path, processes, ardupilot_env) -> None:
    """PROCEED passes /ap/cmd_vel; HOLD asks BRAKE, LAND asks LAND; the answers are recorded.

    The vehicle accepts BRAKE and refuses LAND: the records after each request carry the mode
    asked, the answer and the mode the vehicle reported. While holding, the gate sends zero
    twists (Copter stops at once, not 3 s later).
    """
    phases = [
        {'name': 'go', 'actuation': PROCEED, 'until': {'action': PASSED}, 'count': 3},
        {'name': 'hold', 'actuation': [D.HOLD, C.HOLD_POSITION],
         'until': {'action': HELD, 'mode_asked': BRAKE, 'mode_answer': SWITCHED}},
        {'name': 'land', 'actuation': [D.ENGAGE_LAND, C.LAND],
         'until': {'action': HELD, 'mode_asked': LAND, 'mode_answer': REFUSED}},
    ]
    gate = _gate(processes, ardupilot_env, 'apgate')
    stand_in = _stand_in(processes, ardupilot_env, tmp_path, 'apgate', phases, '--refuse', '9')
    out, err = stand_in.communicate(timeout=120)
    assert stand_in.returncode == 0, err
    seen = json.loads(out.strip().splitlines()[-1])
    assert all(phase['ok'] for phase in seen['phases']), (seen['phases'], gate.poll())
    records = seen['records']
    assert {r['mode'] for r in records} == {'ardupilot'}
    for record in records:
        if record['action'] == PASSED:
            assert (record['decision_kind'], record['command_kind']) == tuple(PROCEED)
            assert record['output_topic'] == '/apgate/ap/cmd_vel' and record['twist_x'] == 1.0
            assert record['frame_id'] == 'map'
        elif record['action'] == HELD:
            assert record['twist_x'] == 0.0
    asked = [(r['vehicle_command'], r['output_topic']) for r in records
             if r['action'] == VEHICLE_COMMAND]
    assert asked == [(BRAKE, '/apgate/ap/mode_switch'), (LAND, '/apgate/ap/mode_switch')]
    assert seen['requests'] == [{'mode': BRAKE, 'accepted': True},
                                {'mode': LAND, 'accepted': False}]
    brake = next(r for r in records if r['mode_answer'] == SWITCHED)
    assert brake['vehicle_mode'] == BRAKE
    refused = next(r for r in records if r['mode_answer'] == REFUSED)
    assert refused['vehicle_mode'] == BRAKE  # the vehicle stayed in BRAKE
    # What reached the vehicle: the mission's 1 m/s only while Ghost proceeded, else zeros.
    assert {c['x'] for c in seen['cmd_vel']} <= {0.0, 1.0}
    passed = sum(r['action'] == PASSED for r in records)
    assert sum(c['x'] == 1.0 for c in seen['cmd_vel']) <= passed
    assert seen['cmd_vel'][-1]['x'] == 0.0


def test_a_frame_ardupilot_would_drop_is_held_and_copter_stops_by_itself_without_the_gate(
        tmp_path, processes, ardupilot_env) -> None:
    """A frame AP_DDS drops is held; without the gate, Copter stops by itself after 3 s.

    A cmd_vel in 'odom' is held (AP_DDS would drop it silently); a gate killed while passing
    sends nothing more, and Copter in GUIDED stops by itself 3 s after the last cmd_vel.
    """
    phases = [
        {'name': 'go', 'actuation': PROCEED, 'until': {'action': PASSED}, 'count': 3},
        {'name': 'odom', 'actuation': PROCEED, 'frame': 'odom',
         'until': {'action': HELD, 'reason': 'invalid_mission_output'}, 'count': 2},
        {'name': 'again', 'actuation': PROCEED, 'until': {'action': PASSED}, 'count': 3,
         'announce': 'KILL_THE_GATE'},
        {'name': 'gone', 'actuation': PROCEED, 'until_event': 'guided_timeout_stop'},
    ]
    gate = _gate(processes, ardupilot_env, 'apstop')
    stand_in = _stand_in(processes, ardupilot_env, tmp_path, 'apstop', phases)
    assert stand_in.stdout is not None
    line = stand_in.stdout.readline()
    assert line.strip() == 'KILL_THE_GATE', (line, stand_in.stderr.read() if stand_in.stderr
                                             else '')
    gate.send_signal(signal.SIGKILL)
    gate.wait(timeout=10)
    rest, err = stand_in.communicate(timeout=60)
    assert stand_in.returncode == 0, err
    seen = json.loads(rest.strip().splitlines()[-1])
    assert all(phase['ok'] for phase in seen['phases']), seen['phases']
    assert {c['frame_id'] for c in seen['cmd_vel']} == {'map'}  # never the dropped frame
    held = [r for r in seen['records'] if r['reason'] == 'invalid_mission_output']
    assert held and all(r['action'] == HELD and r['twist_x'] == 0.0 for r in held)
    # The gate was killed mid-PROCEED: its last cmd_vel moved the vehicle, and the stop came
    # from Copter's own timeout, at least 3 s after that last cmd_vel.
    last = seen['cmd_vel'][-1]
    assert last['x'] == 1.0 and last['vehicle_mode'] == 4
    stop = seen['events'][-1]
    assert stop['event'] == 'guided_timeout_stop' and stop['at'] - last['at'] >= 3.0
