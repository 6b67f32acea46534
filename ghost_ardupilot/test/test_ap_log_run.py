"""Real ArduPilot flights played as AP_DDS would, through ap_bridge and the command gate, verified.

``ghost_run --ardupilot-log LOG`` (what ``make demo-ardupilot`` runs): ap_log_player plays a
DataFlash log of ../shared/realdata/ardupilot on /ap/... with AP_DDS's QoS; ap_bridge, the
agent, the stand-in mission and the ardupilot-mode command gate run as real processes over real
DDS; the recorder's bag holds the bridge's /ap inputs, its source_samples, the gate's records
and the cmd_vel it sent; verify_all checks BAUD, ERUR, the chain and GATE-v1 and re-derives the
agent from the recorded inputs.
"""

from collections import defaultdict
from pathlib import Path
import re
import subprocess

from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory
import pytest
import yaml

from ghost_core.graph import AP_OUT_TOPICS
from ghost_core.hashing import hash_form

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
REALDATA = REPO.parent / 'shared' / 'realdata' / 'ardupilot'
SITL = REALDATA / 'sitl_copter_ac444.bin'
SPEED = '4'

pytestmark = pytest.mark.skipif(not SITL.is_file(),
                                reason=f'{SITL} not found (../shared/realdata beside the clone)')

#: One summary line of scripts/demo_ardupilot.sh per log.
SUMMARY = re.compile(r'^(?P<log>\S+\.bin): (?P<verdict>verified|NOT verified); '
                     r'Ghost: (?P<decisions>.+) of (?P<cycles>\d+) cycles; '
                     r'ERUR on \d+, BAUD on \d+ cycles; gate: (?P<gate>.+)$')


def payloads_by_topic(bag: Path) -> dict[str, list[dict[str, object]]]:
    """Every message of the bag decoded as a message dict, per topic, in recorded order."""
    meta = yaml.safe_load((bag / 'metadata.yaml').read_text())
    out: dict[str, list[dict[str, object]]] = defaultdict(list)
    for name in meta['rosbag2_bagfile_information']['relative_file_paths']:
        with (bag / name).open('rb') as stream:
            reader = make_reader(stream, decoder_factories=[DecoderFactory()])
            for _s, channel, _m, decoded in reader.iter_decoded_messages(log_time_order=True):
                out[channel.topic].append(hash_form(decoded))
    return dict(out)


def _counts(text: str) -> dict[str, int]:
    """'PROCEED 3, HOLD 1' or '2 held/no_actuation, 5 passed/proceed' as {name: count}."""
    counts = {}
    for item in text.split(', '):
        first, second = item.split(' ')
        name, count = (second, first) if first.isdigit() else (first, second)
        counts[name] = int(count)
    return counts


def test_demo_ardupilot_runs_every_real_log_and_says_what_the_gate_did(tmp_path,
                                                                       ardupilot_env) -> None:
    """What ``make demo-ardupilot`` runs: every log played, verified and summed up in one line.

    Both flights are healthy (README of ../shared/realdata): Ghost proceeds on most cycles,
    the gate passes the mission only on PROCEED, and the one time Ghost holds it asks
    /ap/mode_switch for BRAKE (nobody answers in a log replay).
    """
    logs = sorted(REALDATA.glob('*.bin'))
    result = subprocess.run(
        ['bash', str(REPO / 'scripts' / 'demo_ardupilot.sh')],
        env={**ardupilot_env, 'AP_SPEED': SPEED, 'RUNS': str(tmp_path / 'runs')}, text=True,
        capture_output=True, timeout=900, check=False, cwd=REPO)
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
        assert decisions.get('PROCEED', 0) > int(match['cycles']) / 2, (name, match[0])
        assert gate.get('passed/proceed', 0) > 0, (name, match[0])
        assert all(key == 'passed/proceed' for key in gate if key.startswith('passed/')), (
            name, match[0])
        if set(decisions) != {'PROCEED'}:
            assert gate.get('vehicle_command/decision_not_proceed', 0) >= 1, (name, match[0])
    bags = sorted((tmp_path / 'runs').glob('ardupilot-*/bag'))
    assert len(bags) == len(logs)
    payloads = payloads_by_topic(bags[0])
    # The bridge's inputs are recorded with the outputs that name them, and what the gate sent.
    assert set(AP_OUT_TOPICS) <= set(payloads), sorted(payloads)
    assert {'/source_samples', '/ap/cmd_vel'} <= set(payloads)
    named = {topic for message in payloads['/source_samples']
             for topic in message['source_topics']}
    assert named == {'/ap/odometry/filtered', '/ap/status', '/ap/navsat',
                     '/ap/gps_global_origin/filtered'}, named
    assert {twist['header']['frame_id'] for twist in payloads['/ap/cmd_vel']} <= {'map'}
    asked = [g for g in payloads['/ghost/gate'] if g['action'] == 2]
    assert [(g['vehicle_command'], g['output_topic']) for g in asked] == [
        (17, '/ap/mode_switch')] * len(asked)
    # Nobody answers /ap/mode_switch in a replay: every later record says so (3: unanswered).
    # (A flight Ghost proceeds on throughout asks for none: the first log's is one now.)
    after = [g for g in payloads['/ghost/gate'] if asked and g['mode_asked'] == 17]
    assert all(g['mode_answer'] in (0, 3) for g in after)
    assert not asked or after[-1]['mode_answer'] == 3


def test_without_odometry_ghost_abstains_and_the_bridge_says_why_once(tmp_path,
                                                                     ardupilot_env) -> None:
    """Released AP_DDS firmware (pose and twist only): UNKNOWN beliefs, Ghost never proceeds.

    ap_log_player with odometry:=false publishes what AP_DDS publishes today; every belief has
    an all-zero covariance, so every cycle is ABSTAIN_UNCERTAIN, the gate passes nothing, and
    ap_bridge says once why.
    """
    params = tmp_path / 'released.yaml'
    params.write_text('/**/ap_log_player:\n  ros__parameters:\n    odometry: false\n',
                      encoding='utf-8')
    run = tmp_path / 'run'
    result = subprocess.run(
        ['ghost_run', '--ardupilot-log', str(SITL), '--speed', SPEED, '--run-dir', str(run),
         '--params-file', str(params), '--no-report'],
        env=ardupilot_env, text=True, capture_output=True, timeout=600, check=False)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    payloads = payloads_by_topic(run / 'bag')
    assert '/ap/odometry/filtered' not in payloads or not payloads['/ap/odometry/filtered']
    decisions = {d['decision']['kind'] for d in payloads['/decisions']}
    assert decisions == {6}, decisions  # ABSTAIN_UNCERTAIN on every cycle
    assert not any(g['action'] == 0 for g in payloads['/ghost/gate'])
    named = {topic for message in payloads['/source_samples']
             for topic in message['source_topics']}
    assert {'/ap/pose/filtered', '/ap/twist/filtered'} <= named
    said = (run / 'logs' / 'ap_bridge.log').read_text(encoding='utf-8')
    assert said.count('no /ap/odometry/filtered: this firmware publishes no EKF variances') == 1
