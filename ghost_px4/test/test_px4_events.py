"""px4_events: PX4's own failsafes, modes, position verdicts, resets and warnings in a ULog."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
import io
import math
from pathlib import Path
import struct
import subprocess
import sys
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy
import pytest
from pyulog import ULog  # type: ignore[import-untyped]
from test_ulog_import import ulog_bytes

from ghost_px4.events import (
    EVENT_KINDS,
    EVENT_TOPICS,
    LIMIT_PARAMETERS,
    load_px4_events,
    nav_state_name,
    px4_events,
    px4_limits,
    Px4Event,
    Px4Limits,
    SAFETY_KINDS,
)

REALDATA = Path(__file__).resolve().parents[3] / 'shared' / 'realdata'
SITL_LOG = REALDATA / '14_19_29.ulg'
ESC_LOG = REALDATA / 'esc_status_log.ulg'
LOG_123 = REALDATA / 'log_123_2024-3-1-14-47-02.ulg'
QUAD_LOG = REALDATA / 'quadrotor_local.ulg'
ALL_LOGS = [SITL_LOG, ESC_LOG, LOG_123, QUAD_LOG]
needs_realdata = pytest.mark.skipif(not REALDATA.is_dir(),
                                    reason=f'{REALDATA} (the shared real logs) is missing')
S = 1_000_000  # one second in ULog microseconds


# --- a stand-in for pyulog's ULog ---

@dataclass
class Data:
    name: str
    data: dict[str, numpy.ndarray]
    multi_id: int = 0


@dataclass
class Message:
    log_level: int
    timestamp: int
    message: str


@dataclass
class FakeUlog:
    data_list: list[Data] = field(default_factory=list)
    logged_messages: list[Message] = field(default_factory=list)
    start_timestamp: int = 0


def topic(name: str, multi_id: int = 0, **columns: Sequence[float]) -> Data:
    """A topic instance with its columns (timestamps in us)."""
    dtypes = {'timestamp': numpy.uint64, 'timestamp_sample': numpy.uint64}
    return Data(name, {key: numpy.asarray(values, dtype=dtypes.get(key, numpy.uint8))
                       for key, values in columns.items()}, multi_id)


def times(count: int, start_s: int = 10) -> list[int]:
    return [(start_s + k) * S for k in range(count)]


def of_kind(events: Sequence[Px4Event], *kinds: str) -> list[tuple[float, str, str]]:
    """(seconds, kind, detail) of the events of ``kinds``."""
    return [(e.time_ns / 1e9, e.kind, e.detail) for e in events if e.kind in kinds]


# --- edges, on a stand-in log ---

def test_failsafe_edges_name_the_nav_state_at_that_moment() -> None:
    status = topic('vehicle_status', timestamp=times(5), failsafe=[0, 0, 1, 1, 0],
                   nav_state=[2, 2, 5, 5, 2])
    events = px4_events(FakeUlog([status]))
    assert of_kind(events, 'failsafe') == [
        (12.0, 'failsafe', 'failsafe on (nav_state AUTO_RTL)'),
        (14.0, 'failsafe', 'failsafe off (nav_state POSCTL)')]
    assert of_kind(events, 'nav_state') == [
        (10.0, 'nav_state', 'POSCTL (first sample)'),
        (12.0, 'nav_state', 'POSCTL -> AUTO_RTL'),
        (14.0, 'nav_state', 'AUTO_RTL -> POSCTL')]


def test_failsafe_at_the_first_sample_is_an_event_and_a_clear_first_sample_is_not() -> None:
    on = topic('vehicle_status', timestamp=times(2), failsafe=[1, 1], nav_state=[18, 18])
    assert of_kind(px4_events(FakeUlog([on])), 'failsafe') == [
        (10.0, 'failsafe', 'failsafe on (nav_state AUTO_LAND) at first sample')]
    off = topic('vehicle_status', timestamp=times(2), failsafe=[0, 0], nav_state=[0, 0])
    assert of_kind(px4_events(FakeUlog([off])), 'failsafe') == []


def test_a_log_without_the_topics_has_no_events() -> None:
    assert px4_events(FakeUlog()) == ()
    bare = topic('vehicle_status', timestamp=times(3))  # neither failsafe nor nav_state
    assert px4_events(FakeUlog([bare])) == ()


def test_commander_verdict_from_failsafe_flags_wins_over_older_topics() -> None:
    """v1.14+: failsafe_flags.local_position_invalid; vehicle_status_flags then is not read."""
    flags = topic('failsafe_flags', timestamp=times(4), local_position_invalid=[0, 1, 1, 0])
    old = topic('vehicle_status_flags', timestamp=times(4),
                condition_local_position_valid=[0, 0, 0, 0])
    local = topic('vehicle_local_position', timestamp=times(4, 20), xy_valid=[1, 1, 0, 1])
    events = px4_events(FakeUlog([flags, old, local]))
    assert of_kind(events, 'position_invalid', 'position_valid') == [
        (11.0, 'position_invalid', 'failsafe_flags.local_position_invalid true'),
        (13.0, 'position_valid', 'failsafe_flags.local_position_invalid false'),
        (22.0, 'position_invalid', 'vehicle_local_position.xy_valid false'),
        (23.0, 'position_valid', 'vehicle_local_position.xy_valid true')]


@pytest.mark.parametrize(('name', 'field_name'), [
    ('vehicle_status_flags', 'condition_local_position_valid'),
    ('vehicle_status_flags', 'local_position_valid'),
    ('vehicle_status', 'condition_local_position_valid'),
])
def test_older_commander_verdicts_are_read_by_their_own_field_names(name: str,
                                                                    field_name: str) -> None:
    data = topic(name, timestamp=times(3), **{field_name: [0, 1, 1]})
    assert of_kind(px4_events(FakeUlog([data])), 'position_invalid', 'position_valid') == [
        (10.0, 'position_invalid', f'{name}.{field_name} false at first sample'),
        (11.0, 'position_valid', f'{name}.{field_name} true')]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=40))
def test_validity_events_alternate_and_count_the_changes(valid: list[bool]) -> None:
    """Any xy_valid sequence: invalid/valid alternate, one per change, invalid first."""
    local = topic('vehicle_local_position', timestamp=times(len(valid)),
                  xy_valid=[int(v) for v in valid])
    kinds = [e.kind for e in px4_events(FakeUlog([local]))]
    changes = sum(a != b for a, b in zip(valid, valid[1:], strict=False))
    assert len(kinds) == changes + (0 if valid[0] else 1)
    expected = ['position_invalid', 'position_valid'] * len(kinds)
    assert kinds == expected[:len(kinds)]


def test_reset_counters_count_changes_not_their_first_value() -> None:
    """A counter's first value counts resets from before the log; a wrap is one reset too."""
    local = topic('vehicle_local_position', timestamp=times(4), xy_reset_counter=[7, 7, 8, 8],
                  heading_reset_counter=[254, 255, 0, 0], xy_valid=[1, 1, 1, 1])
    assert of_kind(px4_events(FakeUlog([local])), 'ekf_reset') == [
        (11.0, 'ekf_reset', 'heading_reset_counter 254 -> 255'),
        (12.0, 'ekf_reset', 'heading_reset_counter 255 -> 0'),
        (12.0, 'ekf_reset', 'xy_reset_counter 7 -> 8')]


def event_flags(multi_id: int, stamps: list[int], samples: list[int], changes: list[int],
                reset_pos_to_gps: list[int]) -> Data:
    return topic('estimator_event_flags', multi_id, timestamp=stamps, timestamp_sample=samples,
                 information_event_changes=changes, reset_pos_to_gps=reset_pos_to_gps,
                 reset_vel_to_zero=[0] * len(stamps))


def test_event_flags_count_new_samples_of_the_primary_estimator_only() -> None:
    """A republished sample (same counter) or a pre-log event is no reset; nor is another EKF's."""
    stamps = times(4)
    stale_first = event_flags(0, stamps, [1 * S, 1 * S, 12 * S, 12 * S], [3, 3, 4, 4],
                              [1, 1, 1, 1])
    other = event_flags(1, stamps, stamps, [5, 6, 7, 8], [1, 1, 1, 1])
    selector = topic('estimator_selector_status', timestamp=[5 * S, 13 * S],
                     primary_instance=[0, 1])
    events = px4_events(FakeUlog([stale_first, other, selector], start_timestamp=9 * S))
    assert of_kind(events, 'ekf_reset') == [
        (12.0, 'ekf_reset', 'reset_pos_to_gps (estimator 0)'),
        (13.0, 'ekf_reset', 'reset_pos_to_gps (estimator 1)')]


def test_event_flags_first_sample_counts_when_it_happened_in_the_log() -> None:
    fresh = event_flags(0, times(2), times(2), [1, 1], [1, 1])
    events = px4_events(FakeUlog([fresh], start_timestamp=9 * S))
    assert of_kind(events, 'ekf_reset') == [(10.0, 'ekf_reset', 'reset_pos_to_gps (estimator 0)')]


def test_log_messages_keep_warnings_and_worse_with_px4s_character_levels() -> None:
    """PX4 writes the level as the character '0'..'7': ord('4') is a warning, ord('6') info."""
    ulog = FakeUlog(logged_messages=[
        Message(ord('6'), 11 * S, '[commander] Takeoff detected\t'),
        Message(ord('4'), 12 * S, '[failsafe] Failsafe activated\t'),
        Message(ord('3'), 13 * S, ' [health_and_arming_checks] Low battery '),
        Message(2, 14 * S, 'a raw critical level')])
    assert of_kind(px4_events(ulog), 'log_message') == [
        (12.0, 'log_message', '[failsafe] Failsafe activated'),
        (13.0, 'log_message', '[health_and_arming_checks] Low battery'),
        (14.0, 'log_message', 'a raw critical level')]


def test_tagged_messages_are_read_once() -> None:
    ulog: Any = FakeUlog(logged_messages=[Message(ord('4'), 12 * S, 'twice')])
    ulog.logged_messages_tagged = {0: [Message(ord('4'), 12 * S, 'twice'),
                                       Message(ord('1'), 15 * S, 'tagged alert')]}
    assert [e.detail for e in px4_events(ulog)] == ['twice', 'tagged alert']


def test_events_are_sorted_by_time_then_kind() -> None:
    status = topic('vehicle_status', timestamp=times(2), failsafe=[0, 1], nav_state=[3, 5])
    local = topic('vehicle_local_position', timestamp=times(2), xy_valid=[1, 0])
    events = px4_events(FakeUlog([status, local],
                                 [Message(ord('4'), 11 * S, 'warning at 11 s')]))
    assert list(events) == sorted(events, key=lambda e: (e.time_ns, e.kind, e.detail))
    assert [e.kind for e in events] == ['nav_state', 'failsafe', 'log_message', 'nav_state',
                                        'position_invalid']


# --- names and types ---

def test_nav_state_names_follow_the_px4_generation() -> None:
    assert nav_state_name(5) == 'AUTO_RTL'
    assert nav_state_name(15, (1, 7)) == 'STAB'
    assert nav_state_name(6, (1, 9)) == 'AUTO_RCRECOVER'
    assert nav_state_name(6, (1, 16)) == 'POSITION_SLOW'
    assert nav_state_name(6) == 'AUTO_RCRECOVER/POSITION_SLOW'
    assert nav_state_name(8, (1, 16)) == '8'
    assert nav_state_name(8, (1, 17)) == 'ALTITUDE_CRUISE'
    assert nav_state_name(23, (1, 15)) == 'EXTERNAL1'
    assert nav_state_name(23, (1, 14)) == '23'
    assert nav_state_name(99) == '99'


def test_the_log_version_picks_the_names() -> None:
    status = topic('vehicle_status', timestamp=times(1), nav_state=[6])
    ulog: Any = FakeUlog([status])
    ulog.msg_info_dict = {'ver_sw_release': 0x011000FF}  # v1.16.0 release
    assert [e.detail for e in px4_events(ulog)] == ['POSITION_SLOW (first sample)']


def test_px4_event_refuses_what_is_not_an_event() -> None:
    with pytest.raises(ValueError, match="kind: 'crash' is not one of failsafe"):
        Px4Event(1, 'crash', '')
    with pytest.raises(ValueError, match='time_ns: -1 is not a non-negative'):
        Px4Event(-1, 'failsafe', '')
    with pytest.raises(ValueError, match='time_ns: 1.5'):
        Px4Event(1.5, 'failsafe', '')  # type: ignore[arg-type]
    assert set(SAFETY_KINDS) <= set(EVENT_KINDS)


@pytest.mark.parametrize(('kind', 'detail', 'safety'), [
    ('failsafe', 'failsafe on (nav_state AUTO_RTL)', True),
    ('failsafe', 'failsafe off (nav_state POSCTL)', False),
    ('position_invalid', 'vehicle_local_position.xy_valid false', True),
    ('position_valid', 'vehicle_local_position.xy_valid true', False),
    ('ekf_reset', 'xy_reset_counter 1 -> 2', False),
    # PX4's failsafe announcements, by generation (the module tag from v1.14 on).
    ('log_message', '[failsafe] Failsafe activated', True),
    ('log_message', 'Failsafe activated, entering Hold for 5 seconds', True),
    ('log_message', 'Failsafe enabled: no global position', True),
    ('log_message', 'failsafe mode on', True),
    ('log_message', 'failsafe mode off', False),
    ('log_message', '[health_and_arming_checks] Preflight Fail: Flight termination active',
     False),
    ('log_message', 'Failsafe warning: RC lost', False),
])
def test_safety_events_are_failsafe_starts_invalid_positions_and_failsafe_messages(
        kind: str, detail: str, safety: bool) -> None:
    """What Ghost's lead is measured against, whatever PX4 generation wrote the log."""
    assert Px4Event(1, kind, detail).safety is safety


def test_px4_events_is_pure() -> None:
    """The module loads without rclpy."""
    code = 'import sys, ghost_px4.events; print("rclpy" in sys.modules)'
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    assert out.strip() == 'False'


# --- limits ---

def test_limits_of_an_empty_mapping_are_px4s_defaults() -> None:
    limits = px4_limits({})
    assert limits == Px4Limits() and limits.from_log == frozenset()
    assert (limits.com_pos_fs_eph_m, limits.com_pos_fs_epv_m, limits.com_vel_fs_evh_m_s,
            limits.ekf2_noaid_tout_us, limits.com_pos_fs_delay_s, limits.ekf2_req_eph_m) == (
        5.0, 10.0, 1.0, 5_000_000.0, 1.0, 3.0)
    lines = limits.lines()
    assert len(lines) == len(LIMIT_PARAMETERS)
    assert lines[0].startswith('COM_POS_FS_EPH 5 m (not in this log: PX4 default): '
                               "PX4's position failsafe")
    assert lines[3].startswith('EKF2_NOAID_TOUT 5000000 us (not in this log: PX4 default): ')


def test_limits_the_log_states_are_marked_as_the_logs() -> None:
    limits = px4_limits({'COM_POS_FS_EPH': 2.5, 'EKF2_NOAID_TOUT': 1_000_000, 'OTHER': 1})
    assert limits.com_pos_fs_eph_m == 2.5 and limits.ekf2_noaid_tout_us == 1e6
    assert limits.from_log == {'COM_POS_FS_EPH', 'EKF2_NOAID_TOUT'}
    assert limits.value('COM_POS_FS_EPH') == 2.5
    assert limits.lines()[0].startswith('COM_POS_FS_EPH 2.5 m (log): ')
    assert limits.lines()[1].startswith('COM_POS_FS_EPV 10 m (not in this log: PX4 default): ')


def test_limits_refuse_a_value_that_is_not_a_finite_number() -> None:
    with pytest.raises(ValueError, match='parameter COM_VEL_FS_EVH: nan is not a finite'):
        px4_limits({'COM_VEL_FS_EVH': math.nan})
    with pytest.raises(ValueError, match='from_log: BOGUS not among'):
        Px4Limits(from_log=frozenset({'BOGUS'}))
    with pytest.raises(KeyError, match='BOGUS'):
        Px4Limits().value('BOGUS')


# --- through a written ULog file ---

def _logging_message(level: str, timestamp_us: int, text: str) -> bytes:
    payload = struct.pack('<BQ', ord(level), timestamp_us) + text.encode()
    return struct.pack('<HB', len(payload), ord('L')) + payload


def test_load_px4_events_reads_a_written_log(tmp_path: Path) -> None:
    fields = [('uint64_t', 'timestamp'), ('uint8_t', 'nav_state'), ('bool', 'failsafe')]
    samples = [dict(timestamp=t, nav_state=n, failsafe=f)
               for t, n, f in ((2 * S, 2, False), (3 * S, 5, True), (4 * S, 5, False))]
    data = ulog_bytes({'vehicle_status': (fields, samples)}, {'COM_POS_FS_EPH': 3.0})
    log = tmp_path / 'flight.ulg'
    log.write_bytes(data + _logging_message('4', 3 * S + 5, 'RTL: position lost'))
    assert of_kind(load_px4_events(log), 'failsafe', 'log_message') == [
        (3.0, 'failsafe', 'failsafe on (nav_state AUTO_RTL)'),
        (3.000005, 'log_message', 'RTL: position lost'),
        (4.0, 'failsafe', 'failsafe off (nav_state AUTO_RTL)')]
    assert load_px4_events(str(log)) == load_px4_events(log)


def test_load_px4_events_names_a_file_that_is_no_log(tmp_path: Path) -> None:
    bad = tmp_path / 'notes.ulg'
    bad.write_text('not a log')
    with pytest.raises(ValueError, match='notes.ulg: not a ULog file'):
        load_px4_events(bad)


# --- the real logs ---

def read(path: Path) -> Any:
    """The log as pyulog reads it, with every topic px4_events may read."""
    return ULog(io.BytesIO(path.read_bytes()), list(EVENT_TOPICS))


def first(ulog: Any, name: str) -> dict[str, numpy.ndarray]:
    return next(d.data for d in ulog.data_list if d.name == name and d.multi_id == 0)


@needs_realdata
@pytest.mark.parametrize('path', ALL_LOGS, ids=lambda p: p.stem)
def test_real_logs_events_are_sorted_known_and_within_the_log(path: Path) -> None:
    ulog = read(path)
    events = load_px4_events(path)
    assert events and list(events) == sorted(events)
    assert {e.kind for e in events} <= set(EVENT_KINDS)
    # The logger starts each topic with the last message published before it: a first sample
    # may be older than start_timestamp, never older than the earliest one logged.
    earliest = min([int(d.data['timestamp'][0]) for d in ulog.data_list]
                   + [m.timestamp for m in ulog.logged_messages])
    assert all(earliest * 1000 <= e.time_ns <= ulog.last_timestamp * 1000 for e in events)
    status = first(ulog, 'vehicle_status')
    mode_changes = int(numpy.count_nonzero(numpy.diff(status['nav_state'].astype(int))))
    assert len([e for e in events if e.kind == 'nav_state']) == mode_changes + 1


@needs_realdata
def test_quadrotor_local_position_is_invalid_from_the_first_sample() -> None:
    """v1.16, no GNSS fix: both PX4's verdict and EKF2's xy_valid say invalid at once."""
    ulog = read(QUAD_LOG)
    local, flags = first(ulog, 'vehicle_local_position'), first(ulog, 'failsafe_flags')
    assert not local['xy_valid'].any() and flags['local_position_invalid'].all()
    invalid = of_kind(load_px4_events(QUAD_LOG), 'position_invalid', 'position_valid')
    assert invalid == [
        (int(flags['timestamp'][0]) / 1e6, 'position_invalid',
         'failsafe_flags.local_position_invalid true at first sample'),
        (int(local['timestamp'][0]) / 1e6, 'position_invalid',
         'vehicle_local_position.xy_valid false at first sample')]


@needs_realdata
def test_quadrotor_battery_failsafe_is_a_warning_not_a_vehicle_status_failsafe() -> None:
    """The battery failsafe near the end is warn-only: no failsafe event, a log_message.

    With COM_LOW_BAT_ACT 0 (warning) PX4 v1.16 says 'Failsafe activated', and its
    vehicle_status.failsafe, which leaves out warn-only actions, stays false.
    """
    ulog = read(QUAD_LOG)
    assert ulog.initial_parameters['COM_LOW_BAT_ACT'] == 0
    assert not first(ulog, 'vehicle_status')['failsafe'].any()
    said = [m for m in ulog.logged_messages if 'Failsafe activated' in m.message]
    assert len(said) == 1 and said[0].log_level <= ord('4')
    span = ulog.last_timestamp - ulog.start_timestamp
    assert said[0].timestamp > ulog.start_timestamp + 0.8 * span  # near the end
    events = load_px4_events(QUAD_LOG)
    assert of_kind(events, 'failsafe') == []
    assert (said[0].timestamp / 1e6, 'log_message', '[failsafe] Failsafe activated') in \
        of_kind(events, 'log_message')


@needs_realdata
def test_log_123_has_no_failsafe_and_states_its_limits() -> None:
    ulog = read(LOG_123)
    assert not first(ulog, 'vehicle_status')['failsafe'].any()
    events = load_px4_events(LOG_123)
    assert of_kind(events, 'failsafe', 'position_invalid') == []
    limits = px4_limits(ulog.initial_parameters)
    assert limits.com_pos_fs_eph_m == 5.0 and 'COM_POS_FS_EPH' in limits.from_log
    assert 'COM_POS_FS_EPV' not in limits.from_log  # gone by v1.14
    assert limits.lines()[0].startswith('COM_POS_FS_EPH 5 m (log): ')


@needs_realdata
def test_sitl_position_turns_valid_when_gnss_fusion_starts() -> None:
    """v1.7: the verdict is vehicle_status_flags.condition_local_position_valid."""
    ulog = read(SITL_LOG)
    flags = first(ulog, 'vehicle_status_flags')
    valid = flags['condition_local_position_valid']
    assert not valid[0] and valid.any()
    turns = int(flags['timestamp'][int(numpy.argmax(valid != 0))])
    events = of_kind(load_px4_events(SITL_LOG), 'position_valid')
    assert (turns / 1e6, 'position_valid',
            'vehicle_status_flags.condition_local_position_valid true') in events


@needs_realdata
def test_fmuv3_mission_to_return() -> None:
    status = first(read(ESC_LOG), 'vehicle_status')
    row = int(numpy.argmax(status['nav_state'] != status['nav_state'][0]))
    assert of_kind(load_px4_events(ESC_LOG), 'nav_state') == [
        (int(status['timestamp'][0]) / 1e6, 'nav_state', 'AUTO_MISSION (first sample)'),
        (int(status['timestamp'][row]) / 1e6, 'nav_state', 'AUTO_MISSION -> AUTO_RTL')]
