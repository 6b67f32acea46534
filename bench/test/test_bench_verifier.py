"""Smoke runs of the verifier benchmark, its bag generator and its decode-only floor."""

import json
from pathlib import Path
import subprocess
import sys

from ghost_bag.manifest import MANIFEST_NAME
from ghost_verify import verify_all
from ghost_verify.manifest import chains_from_mcap

BENCH = Path(__file__).resolve().parents[1]
#: What a cycle of a generated bag records: three inputs, then six Ghost messages.
INPUTS = ('/vehicle_status', '/observations', '/state/nav')
PER_CYCLE = 9


def _run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          timeout=timeout, check=False)


def test_generated_bag_verifies_and_re_derives_every_cycle(tmp_path) -> None:
    """bagsynth.py: first flight, then repetitions; every check holds, every cycle re-derived.

    The bag carries the inputs and manifest.json as a recorded run does, so verify_all's
    re-derivation re-runs the agent over all 130 cycles (into the third flight, past the
    templates) and finds every recorded message; its --json says so too.
    """
    bag = tmp_path / 'bag'
    done = _run(str(BENCH / 'bagsynth.py'), '130', str(bag))
    assert done.returncode == 0, done.stderr
    result = verify_all(bag)
    assert result.holds, result.summary_lines()
    assert result.baud.covered and result.erur.covered
    assert result.trace.total_decisions == 130
    assert result.trace.decisions_end_to_end_verified == 130
    replay = result.replay
    assert replay is not None and replay.holds and replay.complete, replay and replay.summary()
    assert replay.cycles_compared == 130
    assert replay.messages_compared == 130 * 6
    assert (replay.beliefs, replay.observations) == (130, 130)
    assert result.recovery is not None and result.recovery.holds
    assert result.parameters is not None and result.parameters.holds
    report = tmp_path / 'report.json'
    cli = subprocess.run(['verify_all', str(bag), '--json', str(report)], capture_output=True,
                         text=True, timeout=120, check=False)
    assert cli.returncode == 0, cli.stdout + cli.stderr
    assert 'replay: 780/780 messages re-derived exactly (130 cycles' in cli.stdout
    section = json.loads(report.read_text())['replay']
    assert section['holds'] and section['possible'] and section['cycles_compared'] == 130
    assert section['messages_differing'] == 0


def test_generated_manifest_is_what_a_recorder_writes(tmp_path) -> None:
    """manifest.json: the run configuration, every file, every topic's count and chain."""
    bag = tmp_path / 'bag'
    assert _run(str(BENCH / 'bagsynth.py'), '70', str(bag)).returncode == 0
    manifest = json.loads((bag / MANIFEST_NAME).read_text())
    assert manifest['complete'] is True
    assert manifest['config']['input_topics'] == {'state': '/state/nav',
                                                  'observations': '/observations'}
    assert set(manifest['files']) == {'bag.mcap', 'metadata.yaml'}
    chains, problems = chains_from_mcap(sorted(bag.glob('*.mcap')))
    assert not problems
    assert {topic: chain.to_json() for topic, chain in chains.items()} == manifest['topics']
    assert set(INPUTS) <= set(manifest['topics'])
    assert all(entry['count'] == 70 for entry in manifest['topics'].values())


def test_input_free_bag_has_no_re_derivation(tmp_path) -> None:
    """bagsynth.py --no-inputs: the earlier bag, six Ghost messages a cycle and no manifest."""
    bag = tmp_path / 'bag'
    assert _run(str(BENCH / 'bagsynth.py'), '60', str(bag), '--no-inputs').returncode == 0
    assert not (bag / MANIFEST_NAME).exists()
    result = verify_all(bag)
    assert result.holds, result.summary_lines()
    assert result.replay is not None and not result.replay.replayed
    assert result.trace.decisions_end_to_end_verified == 60


def test_every_decoder_decodes_every_message(tmp_path) -> None:
    """decode_floor.py: each decoder sees the 9 messages of each cycle, the inputs included."""
    bag = tmp_path / 'bag'
    assert _run(str(BENCH / 'bagsynth.py'), '60', str(bag)).returncode == 0
    for decoder in ('rosbags', 'mcap_ros2', 'ghost_verify', 'rclpy'):
        done = _run(str(BENCH / 'decode_floor.py'), str(bag), '--decoder', decoder)
        assert done.returncode == 0, done.stderr
        line = json.loads(done.stdout)
        assert line['decoder'] == decoder
        assert line['messages'] == 60 * PER_CYCLE
        assert set(INPUTS) <= set(line['topics'])
        assert sum(line['topics'].values()) == line['messages']


def test_verify_parts_times_the_re_derivation_apart(tmp_path) -> None:
    """verify_parts.py: the reading, each checker, then the re-derivation on the same cycles."""
    bag = tmp_path / 'bag'
    assert _run(str(BENCH / 'bagsynth.py'), '80', str(bag)).returncode == 0
    done = _run(str(BENCH / 'verify_parts.py'), str(bag))
    assert done.returncode == 0, done.stderr
    parts = json.loads(done.stdout)
    assert parts['cycles'] == 80
    assert {'conformance', 'history', 'tracer', 'recovery'} <= set(parts['checkers'])
    for key in ('read_s', 'rederive_with_recovery_s', 'rederive_s', 'recovery_alone_s',
                'rederive_inputs_s'):
        assert parts[key] >= 0
    assert parts['recovery_follows'] in (True, False)
    assert parts['inputs_read'] == 80 * len(INPUTS)
    assert parts['rederive']['replayed'] and parts['rederive']['holds']
    assert parts['rederive']['cycles_compared'] == 80


def test_verifier_script_reports_time_memory_and_ratio_per_size(tmp_path) -> None:
    """verifier.py on bags of 100 and 250 cycles: one row per size, verdict holds.

    Every row re-derived all its cycles. With --jobs 2 on each size, the decode passes, where
    the time goes, and a fleet of two 100-cycle bags on 1 and 2 local workers and a one-worker
    Dask LocalCluster.
    """
    out = tmp_path / 'verifier.json'
    done = _run(str(BENCH / 'verifier.py'), '--sizes', '100', '250', '--no-cache',
                '--jobs', '2', '--fleet-bags', '2', '--fleet-cycles', '100',
                '--fleet-workers', '1', '2', '--dask-workers', '1', '--json', str(out),
                timeout=300)
    assert done.returncode == 0, f'{done.stdout}\n{done.stderr}'
    result = json.loads(out.read_text())['verifier']
    assert result['floor_decoder'] in ('rosbags', 'mcap_ros2')
    assert set(result['decoder_trial_s']) == {'rosbags', 'mcap_ros2'}
    assert result['config']['inputs'] and result['config']['messages_per_cycle'] == PER_CYCLE
    assert [row['cycles'] for row in result['sizes']] == [100, 250]
    for row in result['sizes']:
        assert row['verifier']['verdict'] == 'holds'
        assert row['verifier']['replay']['holds']
        assert row['verifier']['replay']['cycles'] == row['cycles']
        assert row['floor']['messages'] == row['messages'] == row['cycles'] * PER_CYCLE
        for side in ('verifier', 'floor'):
            assert row[side]['returncode'] == 0
            assert row[side]['wall_s'] > 0 and row[side]['max_rss_bytes'] > 0
        assert row['ratio_time'] > 0
    assert {'time_exponent', 'rss_mb_per_1e6_cycles', 'us_per_cycle'} <= set(result['growth'])
    assert '| cycles | bag MB |' in done.stdout
    assert 're-derivation ran (250 cycles re-derived)' in done.stdout
    for row in result['sizes']:
        split = row['jobs']['2']
        assert split['verdict'] == 'holds' and split['ratio_time'] > 0
    assert set(result['reference_decoders_s']) == {'ghost_verify', 'rclpy'}
    breakdown = result['breakdown']
    assert breakdown['cycles'] == 250
    assert {'conformance', 'history', 'tracer'} <= set(breakdown['checkers'])
    assert breakdown['rederive']['holds'] and breakdown['rederive']['cycles_compared'] == 250
    assert result['fleet']['replay']['holds']
    runs = result['fleet']['runs']
    assert [(run['runner'], run['workers']) for run in runs] == [
        ('local', 1), ('local', 2), ('dask', 1)]
    assert all(run['verdict'] == 'holds' and run['bags_per_s'] > 0 for run in runs)
    assert '| --jobs 2 s |' in done.stdout and '| bags/s |' in done.stdout
