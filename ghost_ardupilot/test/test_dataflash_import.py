"""ghost_import on ArduPilot DataFlash logs: the shared real logs and synthetic EKF2/EKF3 logs."""

from __future__ import annotations

from collections.abc import Iterator
import math
from pathlib import Path
import statistics

from dataflash_writer import DataflashWriter
import pytest

from ghost_ardupilot.dataflash_read import load_dataflash
from ghost_ardupilot.events import ardupilot_events
from ghost_bag.recorded_inputs import read_inputs
from ghost_core.levels import DecisionKind
from ghost_core.rederive import Replay, TimedInput
from ghost_core.samples import BeliefSample, Observation
from ghost_px4.ulog_import import main

REPO = Path(__file__).resolve().parents[2]
REALDATA = REPO.parent / 'shared' / 'realdata' / 'ardupilot'
CUBE = REALDATA / 'uob_cubeorange_ac436_loiter_rtl.bin'
SITL = REALDATA / 'sitl_copter_ac444.bin'
needs_realdata = pytest.mark.skipif(not REALDATA.is_dir(),
                                    reason=f'{REALDATA} (the shared ArduPilot logs) is missing')
#: XKF4.SS of a healthy GPS solution (ghost_ardupilot.ekf.SOLUTION_BITS).
HEALTHY = 107327
GLITCHING = HEALTHY | 1 << 14


def _import(log: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main([str(log), '--output', str(out)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _inputs(bag: Path) -> list[TimedInput]:
    return [TimedInput(m.log_time_ns, m.sample) for m in read_inputs(bag)]


def _replay(items: list[TimedInput]) -> list[object]:
    from ghost_nodes.agent_config import pipeline_config_from_files

    config = pipeline_config_from_files([REPO / 'config' / 'ghost.yaml'])
    return list(Replay(config).run(items))


# --- synthetic logs ---

def _ekf_log(path: Path, generation: int, *, variances: bool = True,
             glitch: tuple[float, float] | None = None, seconds: float = 20.0,
             flagged: int = GLITCHING) -> Path:
    """A hovering copter at the origin, EKF and GNSS at 10 / 5 Hz, core 0 primary.

    During ``glitch`` (s after the start) XKF4.SS is ``flagged`` instead of HEALTHY.
    """
    prefix = 'XK' if generation == 3 else 'NK'
    log = DataflashWriter()
    log.define('MSG', 'QZ', 'TimeUS,Message')
    log.define(f'{prefix}F1', 'QBffffff', 'TimeUS,C,VN,VE,VD,PN,PE,PD')
    log.define(f'{prefix}Q', 'QBffff', 'TimeUS,C,Q1,Q2,Q3,Q4')
    log.define(f'{prefix}F4', 'QBIBHb', 'TimeUS,C,SS,TS,FS,PI')
    log.define(f'{prefix}FS', 'QBBB', 'TimeUS,C,GI,SS')
    log.define('XKV1', 'QB' + 'f' * 12, 'TimeUS,C,' + ','.join(f'V{k:02d}' for k in range(12)))
    log.define('XKV2', 'QB' + 'f' * 12,
               'TimeUS,C,' + ','.join(f'V{k:02d}' for k in range(12, 24)))
    log.define('ORGN', 'QBLLf', 'TimeUS,Type,Lat,Lng,Alt')
    log.define('GPS', 'QBBLLf', 'TimeUS,I,Status,Lat,Lng,Alt')
    log.define('GPA', 'QBff', 'TimeUS,I,HAcc,VAcc')
    log.parameters([('AHRS_EKF_TYPE', generation), ('EK3_SRC1_POSZ', 1),
                    ('EK2_ALT_SOURCE', 0), ('GPS_DELAY_MS', 100)])
    log.row('MSG', 1_000_000, 'ArduCopter V4.3.6 (0c5e999c)')
    log.row('ORGN', 1_000_000, 0, 52.0, -4.0, 10.0)
    start = 1_000_000
    for k in range(int(seconds * 10)):
        t = start + 100_000 * (k + 1)
        glitching = glitch is not None and glitch[0] <= (t - start) / 1e6 < glitch[1]
        for core in (0, 1):
            log.row(f'{prefix}F1', t, core, 0.0, 0.0, 0.0, 0.0, 0.0, -5.0)
            log.row(f'{prefix}Q', t, core, 1.0, 0.0, 0.0, 0.0)
            log.row(f'{prefix}F4', t, core, flagged if glitching else HEALTHY, 0, 0, 0)
            log.row(f'{prefix}FS', t, core, 0, 0)
        if variances and generation == 3 and k % 5 == 0:
            log.row('XKV1', t, 0, 1e-5, 1e-5, 1e-5, 1e-4, 0.01, 0.01, 0.01, 0.04, 0.04, 0.09,
                    0.0, 0.0)
            log.row('XKV2', t, 0, *([0.0] * 12))
        if k % 2 == 0:
            log.row('GPS', t + 100_000, 0, 3, 52.0, -4.0, 15.0)
            log.row('GPA', t + 100_000, 0, 0.3, 0.5)
    path.write_bytes(log.bytes() + b'\xff' * 700)
    return path


def test_an_ekf3_log_gives_beliefs_with_the_xkv_covariance_and_fixes_about_orgn(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _import(_ekf_log(tmp_path / 'ekf3.bin', 3), tmp_path / 'bag', capsys)
    assert code == 0, err
    # The padded tail: one warning line, no parser chatter.
    assert err.count('\n') == 1 and 'ends in padding (0xff)' in err
    items = _inputs(tmp_path / 'bag')
    beliefs = [i.sample for i in items if isinstance(i.sample, BeliefSample)]
    fixes = [i.sample for i in items if isinstance(i.sample, Observation)]
    assert len(beliefs) == 200 and len(fixes) == 100  # core 0 only; every fix
    first = beliefs[0]
    assert first.position == pytest.approx((0.0, 0.0, 5.0))  # NED (0, 0, -5) -> ENU
    pose = first.pose_covariance
    assert (pose[0], pose[7], pose[14]) == pytest.approx((0.04, 0.04, 0.09))
    assert (pose[21], pose[28], pose[35]) == pytest.approx((4e-5, 4e-5, 4e-4))
    fix = fixes[0]
    assert fix.stamp_ns == 1_200_000_000 - 100_000_000  # GPS.TimeUS - GPS_DELAY_MS
    assert fix.position[:2] == pytest.approx((0.0, 0.0), abs=1e-9)
    assert fix.covariance[0] == pytest.approx(0.045)  # HAcc² / 2
    assert fix.covariance[8] == 1e6  # EK3_SRC1_POSZ=1: baro height, vertical not compared
    assert 'EK3_SRC1_POSZ=1 (barometric)' in out and 'GPS 1: 100 ms (GPS_DELAY_MS)' in out
    assert 'is the GNSS EKF3 fuses' in out and 'independent source (RTK' in out


def test_an_ekf2_log_imports_and_is_never_proceeded_on(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _import(_ekf_log(tmp_path / 'ekf2.bin', 2), tmp_path / 'bag', capsys)
    assert code == 0, err
    assert out.count('EKF2 logs no state variances') == 1
    assert 'EKF2 states no uncertainty' in err
    items = _inputs(tmp_path / 'bag')
    beliefs = [i.sample for i in items if isinstance(i.sample, BeliefSample)]
    assert beliefs and all(not any(b.pose_covariance) and not any(b.twist_covariance)
                           for b in beliefs)
    traces = _replay(items)
    assert traces and all(t.rationale.decision.kind != DecisionKind.PROCEED for t in traces)
    assert {t.raw.position.reason for t in traces} <= {'no_covariance_information',
                                                      'held_by_hysteresis'}


def test_an_ekf3_log_without_xkv_states_no_uncertainty(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = _ekf_log(tmp_path / 'noxkv.bin', 3, variances=False)
    code, out, err = _import(log, tmp_path / 'bag', capsys)
    assert code == 0, err
    assert 'this EKF3 log has no XKV1/XKV2' in out and 'no XKV1/XKV2 in this log' in err
    traces = _replay(_inputs(tmp_path / 'bag'))
    assert all(t.rationale.decision.kind != DecisionKind.PROCEED for t in traces)


def test_beliefs_the_ekf_flags_glitching_are_judged_and_never_proceeded_on(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = _ekf_log(tmp_path / 'glitch.bin', 3, glitch=(8.0, 12.0))
    code, out, err = _import(log, tmp_path / 'bag', capsys)
    assert code == 0, err
    assert '40: GPS glitching (XKF4.SS gps_glitching)' in out
    items = _inputs(tmp_path / 'bag')
    flagged = {i.sample.stamp_ns for i in items if isinstance(i.sample, BeliefSample)
               and i.sample.pose_covariance[0] == math.inf}
    assert len(flagged) == 40
    traces = _replay(items)
    judged = [t for t in traces if t.stamp_ns in flagged]
    assert len(judged) == 40
    assert all(t.rationale.decision.kind != DecisionKind.PROCEED for t in judged)
    assert {t.raw.position.reason for t in judged} == {'estimator_position_invalid'}


def test_beliefs_whose_attitude_the_ekf_flags_unusable_are_never_proceeded_on(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # XKF4.SS without its attitude bit (0): ArduPilot's own "attitude not usable", whatever
    # the attitude variance says. The position bits stay set: only the attitude is flagged.
    log = _ekf_log(tmp_path / 'attitude.bin', 3, glitch=(8.0, 12.0), flagged=HEALTHY & ~1)
    code, out, err = _import(log, tmp_path / 'bag', capsys)
    assert code == 0, err
    assert '40: attitude not usable (XKF4.SS: no attitude)' in out
    assert 'flags invalid (XKF4 SS/TS/FS): 40 (kept' in out
    items = _inputs(tmp_path / 'bag')
    beliefs = [i.sample for i in items if isinstance(i.sample, BeliefSample)]
    flagged = {b.stamp_ns for b in beliefs if b.pose_covariance[21] == math.inf}
    assert len(flagged) == 40
    for belief in beliefs:
        if belief.stamp_ns in flagged:
            rotation = [belief.pose_covariance[row * 6 + col] for row in range(6)
                        for col in range(3, 6)]
            assert sorted(rotation)[-3:] == [math.inf] * 3 and not any(
                math.isnan(x) for x in rotation)
            assert belief.pose_covariance[0] == pytest.approx(0.04)  # position kept
    judged = [t for t in _replay(items) if t.stamp_ns in flagged]
    assert len(judged) == 40
    assert all(t.rationale.decision.kind != DecisionKind.PROCEED for t in judged)
    assert {t.raw.orientation.reason for t in judged} == {'estimator_orientation_invalid'}


def _old_layout_log(path: Path, generation: int) -> Path:
    """An ArduCopter 3.6-style log (before 4.1): one message name per core, no C field.

    Core 0 is NKF1/NKQ1/NKF4 (EKF3: XKF1/XKQ1/XKF4), core 1 NKF6/NKQ2/NKF9, never read; GPS
    and GPA carry no instance field. No XKV: neither generation states variances here.
    """
    prefix = 'XK' if generation == 3 else 'NK'
    log = DataflashWriter()
    log.define('MSG', 'QZ', 'TimeUS,Message')
    for name in (f'{prefix}F1', f'{prefix}F6'):
        log.define(name, 'Qffffff', 'TimeUS,VN,VE,VD,PN,PE,PD')
    for name in (f'{prefix}Q1', f'{prefix}Q2'):
        log.define(name, 'Qffff', 'TimeUS,Q1,Q2,Q3,Q4')
    log.define(f'{prefix}F4', 'QIBHb', 'TimeUS,SS,TS,FS,PI')
    log.define('ORGN', 'QBLLf', 'TimeUS,Type,Lat,Lng,Alt')
    log.define('GPS', 'QBLLf', 'TimeUS,Status,Lat,Lng,Alt')
    log.define('GPA', 'Qff', 'TimeUS,HAcc,VAcc')
    log.parameters([('AHRS_EKF_TYPE', generation), ('EK2_ALT_SOURCE', 0),
                    ('EK3_ALT_SOURCE', 0), ('GPS_DELAY_MS', 100)])
    log.row('MSG', 1_000_000, 'APM:Copter V3.6.12 (fcf2b90b)')
    log.row('ORGN', 1_000_000, 0, 52.0, -4.0, 10.0)
    for k in range(100):
        t = 1_000_000 + 100_000 * (k + 1)
        log.row(f'{prefix}F1', t, 0.0, 0.0, 0.0, 0.0, 0.0, -5.0)
        log.row(f'{prefix}F6', t, 9.0, 9.0, 9.0, 99.0, 99.0, -99.0)
        log.row(f'{prefix}Q1', t, 1.0, 0.0, 0.0, 0.0)
        log.row(f'{prefix}Q2', t, 0.0, 0.0, 0.0, 1.0)
        log.row(f'{prefix}F4', t, HEALTHY, 0, 0, 0)
        if k % 2 == 0:
            log.row('GPS', t + 100_000, 3, 52.0, -4.0, 15.0)
            log.row('GPA', t + 100_000, 0.3, 0.5)
    path.write_bytes(log.bytes())
    return path


@pytest.mark.parametrize('generation', [2, 3])
def test_a_log_older_than_4_1_imports_core_0_and_is_never_proceeded_on(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], generation: int) -> None:
    log = _old_layout_log(tmp_path / f'old{generation}.bin', generation)
    code, out, err = _import(log, tmp_path / 'bag', capsys)
    assert code == 0, err
    items = _inputs(tmp_path / 'bag')
    beliefs = [i.sample for i in items if isinstance(i.sample, BeliefSample)]
    fixes = [i.sample for i in items if isinstance(i.sample, Observation)]
    assert len(beliefs) == 100 and len(fixes) == 50
    # Core 0's state and attitude, never core 1's (NKF6/NKQ2).
    assert all(b.position == pytest.approx((0.0, 0.0, 5.0)) for b in beliefs)
    half = math.sqrt(0.5)  # NED yaw 0 (core 0) is ROS yaw +90°; core 1 faces south
    assert all(b.orientation_xyzw == pytest.approx((0.0, 0.0, half, half)) for b in beliefs)
    assert fixes[0].position[:2] == pytest.approx((0.0, 0.0), abs=1e-9)
    why = 'EKF2 logs no state variances' if generation == 2 else 'no XKV1/XKV2'
    assert out.count(why) == 1 and why in err
    traces = _replay(items)
    assert len(traces) == 100
    assert all(t.rationale.decision.kind != DecisionKind.PROCEED for t in traces)


def test_a_log_without_an_ekf_state_is_one_line_exit_3(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = DataflashWriter()
    log.define('MSG', 'QZ', 'TimeUS,Message')
    log.row('MSG', 1, 'ArduCopter V4.3.6')
    (tmp_path / 'x.bin').write_bytes(log.bytes())
    code, _, err = _import(tmp_path / 'x.bin', tmp_path / 'bag', capsys)
    assert code == 3 and err.count('\n') == 1
    assert 'no EKF state is logged (neither XKF1 nor NKF1)' in err
    assert not (tmp_path / 'bag').exists()


# --- the shared real logs ---

@pytest.fixture(scope='module')
def imported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple[Path, str]]]:
    if not REALDATA.is_dir():
        pytest.skip(f'{REALDATA} (the shared ArduPilot logs) is missing')
    import contextlib
    import io

    found = {}
    for log in (CUBE, SITL):
        bag = tmp_path_factory.mktemp('ardupilot') / log.stem
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            assert main([str(log), '--output', str(bag)]) == 0
        found[log.stem] = (bag, out.getvalue())
    yield found


@needs_realdata
@pytest.mark.parametrize('log', [CUBE, SITL], ids=lambda p: p.stem)
def test_the_shared_logs_import_with_a_covariance_for_every_belief(
        log: Path, imported: dict[str, tuple[Path, str]]) -> None:
    bag, summary = imported[log.stem]
    items = _inputs(bag)
    beliefs = [i.sample for i in items if isinstance(i.sample, BeliefSample)]
    fixes = [i.sample for i in items if isinstance(i.sample, Observation)]
    rows = load_dataflash(log, ['XKF1', 'XKF4', 'GPS'])
    primary = rows.rows('XKF4')[-1]['PI']
    assert len(beliefs) == sum(r['C'] == primary for r in rows.rows('XKF1'))
    assert len(fixes) >= len(rows.rows('GPS')) - 1  # the first may precede the origin
    assert all(b.pose_covariance[0] > 0 and b.pose_covariance[21] + b.pose_covariance[28]
               + b.pose_covariance[35] > 0 for b in beliefs)  # an orientation block stated
    assert all(math.isfinite(b.pose_covariance[0]) for b in beliefs)  # no flagged belief
    # The EKF agrees with its GNSS: the fix against the belief just after it (horizontal).
    stamps = [b.stamp_ns for b in beliefs]
    residuals = []
    for fix in fixes:
        index = next((k for k, s in enumerate(stamps) if s >= fix.stamp_ns), None)
        if index is not None:
            belief = beliefs[index]
            residuals.append(math.dist(fix.position[:2], belief.position[:2]))
    assert statistics.median(residuals) < 0.15
    assert 'ArduCopter V4' in summary.splitlines()[0] and 'damage: ' in summary
    assert "ArduPilot's own events (ERR, EV, MODE, MSG):" in summary
    assert 'FS_EKF_THRESH 0.8 (log)' in summary


@needs_realdata
def test_the_cubeorange_height_source_is_gnss_and_sitl_baro(
        imported: dict[str, tuple[Path, str]]) -> None:
    cube = [i.sample for i in _inputs(imported[CUBE.stem][0]) if isinstance(i.sample, Observation)]
    sitl = [i.sample for i in _inputs(imported[SITL.stem][0]) if isinstance(i.sample, Observation)]
    assert all(f.covariance[8] < 1.0 for f in cube)  # EK3_SRC1_POSZ=3: compared
    assert all(f.covariance[8] == 1e6 for f in sitl)  # EK3_SRC1_POSZ=1: not measured
    assert '120 ms (the u-blox driver' in imported[CUBE.stem][1]
    assert "SITL's simulated lag SIM_GPS_LAG_MS" in imported[SITL.stem][1]


@needs_realdata
def test_the_shared_logs_events_are_ardupilots_own() -> None:
    events = ardupilot_events(load_dataflash(CUBE, ['ERR', 'EV', 'MODE']))
    details = [e.detail for e in events]
    assert 'MODE LOITER -> RTL (RC_COMMAND)' in details
    assert 'EV EKF_YAW_RESET' in details and 'EV DISARMED' in details
    assert not any(e.safety for e in events)  # no failsafe, no glitch in this flight
