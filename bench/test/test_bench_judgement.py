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
REAL = ('14_19_29', 'esc_status_log')


def _finite(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(
        value)


def _percent(value: object) -> bool:
    return _finite(value) and 0.0 <= value <= 100.0  # type: ignore[operator]


def test_quick_judgement_reports_every_section_with_finite_in_range_numbers(tmp_path) -> None:
    """judgement.py --quick: all four sections, every number finite and in range, targets."""
    out = tmp_path / 'judgement.json'
    done = subprocess.run(
        [sys.executable, str(BENCH / 'judgement.py'), '--quick', '--out-dir', str(tmp_path),
         '--json', str(out)], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, f'stdout:\n{done.stdout}\nstderr:\n{done.stderr}'
    result = json.loads(out.read_text())['judgement']
    assert result['mode'] == 'quick'
    assert {'config', 'false_alarms', 'latency', 'real_flights', 'tradeoff', 'targets',
            'elapsed_s'} <= set(result)

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
    for row in latency.values():
        for key in ('detection_cycles', 'recovery_cycles'):
            assert isinstance(row[key], int) and 0 <= row[key] <= row['cycles'], (key, row)
    assert latency['gnss_outage']['crossing_cycle'] == 81
    assert latency['gnss_outage']['back_below_cycle'] == 201

    real = result['real_flights']
    if 'skipped' not in real:
        assert set(real) == set(REAL)
        for name in REAL:
            row = real[name]
            assert 'error' not in row, row
            assert row['cycles'] > 0
            assert _percent(row['percent_proceed'])
            for key in ('raw_level_changes_per_min', 'decision_changes_per_min'):
                assert _finite(row[key]) and row[key] >= 0
            assert Path(row['plot']).read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
            assert Path(row['plot']).name == f'quick_real_{name}.png'

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
        for flight in row['real'].values():
            assert _percent(flight['percent_proceed'])

    assert result['targets']
    assert all(set(t) == {'target', 'measured', 'met'} for t in result['targets'])
    assert all(t['met'] in (True, False, None) for t in result['targets'])
    for heading in ('### False alarms', '### Detection and recovery', '### Real flights',
                    '### Trade-off', '### Judgement targets'):
        assert heading in done.stdout

