"""Smoke run of the judgement benchmark (bench/judgement.py --quick): structure and ranges.

Pure pipeline, no DDS. No timing is asserted: timings are benchmark numbers, not test results.
"""

import json
import math
from pathlib import Path
import subprocess
import sys

import pytest

BENCH = Path(__file__).resolve().parents[1]
#: What bench/judgement.py reads (REALDATA_DIR): every *.ulg there, and ardupilot/*.bin, is a row.
REALDATA = BENCH.parents[1] / 'shared' / 'realdata'
#: The PNG signature, and the size a plot must stay under.
PNG = b'\x89PNG\r\n\x1a\n'
PLOT_MAX_BYTES = 300_000


def _finite(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(
        value)


def _percent(value: object) -> bool:
    return _finite(value) and 0.0 <= value <= 100.0  # type: ignore[operator]


def test_quick_judgement_reports_every_section_with_finite_in_range_numbers(tmp_path) -> None:
    """judgement.py --quick: every section, every number finite and in range, targets.

    Real flights: a row per log of ../shared/realdata (four there), the flight without a valid
    position PROCEEDs on at most 1 % of its cycles, no belief PX4 flags invalid is PROCEEDed.
    """
    out = tmp_path / 'judgement.json'
    done = subprocess.run(
        [sys.executable, str(BENCH / 'judgement.py'), '--quick', '--out-dir', str(tmp_path),
         '--json', str(out)], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, f'stdout:\n{done.stdout}\nstderr:\n{done.stderr}'
    result = json.loads(out.read_text())['judgement']
    assert result['mode'] == 'quick'
    assert {'config', 'false_alarms', 'latency', 'real_flights', 'px4_events',
            'outage_standins', 'tradeoff', 'targets', 'elapsed_s'} <= set(result)

    alarms = result['false_alarms']
    assert alarms['seeds'] == 1 and alarms['cycles_per_flight'] == 1_200
    assert alarms['rewindow_matches_pipeline'] is True
    for name, axes in (('3_axes', [3]), ('2_axes', [2])):
        row = alarms['variants'][name]
        assert row['axes_compared'] == axes
        assert row['cycles'] == 1_200 and row['all_raw_known'] is True
        assert _percent(row['percent_proceed'])
        for key in ('false_episodes_per_hour', 'decision_changes_per_min', 'beyond_3_per_1000',
                    'raw_beyond_3_per_1000'):
            assert _finite(row[key]) and row[key] >= 0, (name, key, row[key])
        assert row['beyond_3_per_1000'] <= row['raw_beyond_3_per_1000']  # z <= d for n > 1
        assert row['beyond_3_per_1000_expected'] == pytest.approx(2.6998, abs=1e-3)

    latency = result['latency']
    assert set(latency) == {'drift_then_recovery_w8', 'drift_then_recovery_w32', 'gnss_outage'}
    for key in ('drift_then_recovery_w8', 'drift_then_recovery_w32'):
        row = latency[key]
        for name in ('detection_cycles', 'recovery_cycles'):
            assert isinstance(row[name], int) and 0 <= row[name] <= row['cycles'], (name, row)
    outage = latency['gnss_outage']
    # Fixes on cycles 1-50, none on 51-200: the shipped unconfirmed horizon catches the outage
    # from the missing fixes, before the declared sigma crosses the KNOWN threshold.
    assert outage['last_fix_cycle'] == 50 and outage['back_below_cycle'] == 201
    assert 50 < outage['first_non_proceed_cycle'] <= outage['crossing_cycle']
    assert outage['detection_cycles'] <= 0 < outage['after_last_fix_cycles']
    assert 0 <= outage['recovery_cycles'] <= outage['window']

    stand_ins = result['outage_standins']
    scenario = stand_ins['scenario']
    assert scenario['px4_invalid_after_last_fix_s'] == 5.0  # PX4's EKF2_NOAID_TOUT default
    assert _finite(scenario['lead_s']) and scenario['lead_s'] > 0
    assert _percent(scenario['percent_proceed_healthy'])

    real = result['real_flights']
    if 'skipped' not in real:
        stems = {path.stem for path in (*REALDATA.glob('*.ulg'),
                                        *(REALDATA / 'ardupilot').glob('*.bin'))}
        assert set(real) == stems
        if REALDATA.is_dir() and (REALDATA / 'quadrotor_local.ulg').is_file():
            assert len([row for row in real.values() if row['file'].endswith('.ulg')]) == 4
        for name, row in real.items():
            assert 'error' not in row, row
            assert row['cycles'] > 0 and row['version'] and row['hardware']
            for key in ('percent_proceed', 'percent_hold', 'percent_abstain'):
                assert _percent(row[key])
            assert sum(row[k] for k in ('percent_proceed', 'percent_hold',
                                        'percent_abstain')) == pytest.approx(100.0)
            assert 0 <= row['valid_cycles'] <= row['cycles']
            assert (row['percent_proceed_valid'] is None) == (row['valid_cycles'] == 0)
            for key in ('decision_changes_per_min', 'raw_level_changes_per_min'):
                assert _finite(row[key]) and row[key] >= 0
            plot = Path(row['plot'])
            assert plot.read_bytes()[:8] == PNG and plot.name == f'quick_real_{name}.png'
            assert plot.stat().st_size < PLOT_MAX_BYTES
            # Every non-PROCEED cycle has a cause ('block: reason' or 'calibration: ...').
            causes = row['non_proceed_causes']
            non_proceed = round(row['cycles'] * (100.0 - row['percent_proceed']) / 100.0)
            assert sum(causes.values()) >= non_proceed and (non_proceed or not causes)
            assert all(cause.split(': ')[0] in ('position', 'velocity', 'orientation',
                                                'calibration') for cause in causes)
        # A belief PX4 flags invalid is never PROCEEDed, over every log: by the raw reason and
        # by the input's own +inf block.
        assert sum(row['invalid_reason_proceed'] for row in real.values()) == 0
        assert sum(row['flagged_invalid_proceed'] for row in real.values()) == 0
        if 'quadrotor_local' in real:
            row = real['quadrotor_local']
            assert row['category'] == 'no valid position' and row['valid_cycles'] == 0
            assert row['percent_proceed'] <= 1.0
            assert row['flagged_invalid_cycles'] == row['cycles']
        events = result['px4_events']
        assert all(e['kind'] in ('failsafe', 'failsafe_message', 'position_invalid',
                                 'ekf_reset', 'error') for e in events)
        assert all(e['file'] in {row['file'] for row in real.values()} for e in events)
        if 'quadrotor_local' in real:
            # The warn-only battery failsafe is a log message only: listed, Ghost ahead of it.
            message = [e for e in events if e['file'] == 'quadrotor_local.ulg'
                       and e['kind'] == 'failsafe_message']
            assert message and all(e['lead_s'] > 0 for e in message)
        healthy = {name for name, row in real.items() if row['category'] == 'healthy'}
        assert set(stand_ins['flights']) == healthy
        for row in stand_ins['flights'].values():
            if 'skipped' not in row:
                assert row['fixes_removed'] > 0
                assert _percent(row['percent_proceed_rest'])
    else:
        assert result['px4_events'] == [] and stand_ins['flights'] == {}

    rows = result['tradeoff']['rows']
    # The shipped configuration (config/ghost.yaml: K = 3) first, then SPEC's reference K = 2.
    assert len(rows) == 2 and [r['K'] for r in rows] == [3, 2]
    assert all(result['tradeoff']['crosscheck_rewindow_matches_pipeline'].values())
    for row in rows:
        assert isinstance(row['meets_all'], bool)
        assert isinstance(row['missed'], list) and row['meets_all'] == (not row['missed'])
        for variant in row['consistent'].values():
            assert _finite(variant['false_episodes_per_hour'])
            assert _percent(variant['percent_proceed'])
        assert set(row['real']) == (set() if 'skipped' in real else set(real))
        for flight in row['real'].values():
            assert _percent(flight['percent_proceed'])
            assert flight['invalid_reason_proceed'] == flight['flagged_invalid_proceed'] == 0

    assert result['targets']
    assert all(set(t) == {'target', 'measured', 'met'} for t in result['targets'])
    assert all(t['met'] in (True, False, None) for t in result['targets'])
    for heading in ('### False alarms', '### Detection and recovery', '### Real flights',
                    "### PX4's own events", '### GNSS outage: two stand-ins', '### Trade-off',
                    '### Judgement targets'):
        assert heading in done.stdout

