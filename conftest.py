"""Test fixtures shared by every package: isolated ROS 2 environments for real-DDS tests."""

from collections.abc import Iterator
import contextlib
import importlib.util
import io
import itertools
import os
from pathlib import Path
import signal
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ghost.isolation import ClaimedDomain

_domains = itertools.count()

ROOT = Path(__file__).resolve().parent
#: The unmodified Jazzy sources of ros2 launch/run/pkg/topic (not in the repository; CI has them).
VENDORED_ROS2 = ROOT.parent / 'shared' / 'vendor' / 'ros2-jazzy'
#: The unmodified px4_msgs subset px4_bridge's tests publish (not in the repository; CI has it).
VENDORED_PX4_MSGS = ROOT.parent / 'shared' / 'vendor' / 'px4_msgs'
#: The unmodified mavros_msgs subset mavros_bridge's tests publish (likewise).
VENDORED_MAVROS_MSGS = ROOT.parent / 'shared' / 'vendor' / 'mavros_msgs'
#: The unmodified ardupilot_msgs subset ap_bridge's tests publish (not in the repository).
VENDORED_ARDUPILOT_MSGS = ROOT.parent / 'shared' / 'vendor' / 'ardupilot_msgs'


#: Fast DDS's own ``fastdds shm clean`` (installed with the fastrtps wheel, beside the venv).
FASTDDS_SHM_CLEAN = Path(sys.prefix) / 'tools' / 'fastdds' / 'shm' / 'clean.py'


def clean_dead_shared_memory() -> None:
    """Remove the Fast DDS shared-memory ports and segments of processes that are gone.

    What ``fastdds shm clean`` does (its own code, loaded in-process: a file is removed only
    when no living process holds its lock). Tests SIGKILL nodes on purpose (faults, a killed
    recorder or gate), and Fast DDS leaves their ports behind; a later participant of the same
    domain and index that opens one goes through Fast DDS's zombie-port recovery, which is not
    robust when the dead owner held the port's mutex. Without the tool, nothing is cleaned.
    """
    if not FASTDDS_SHM_CLEAN.is_file():
        return
    spec = importlib.util.spec_from_file_location('_fastdds_shm_clean', FASTDDS_SHM_CLEAN)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with contextlib.redirect_stdout(io.StringIO()):
        module.Clean().run()


#: The ROS domains tests claim: valid with the default port mapping, and outside 1..100, where
#: ghost_run claims a free domain for runs that set none (ghost.isolation).
TEST_DOMAINS = range(101, 201)


def _refuse_in_fast_tier() -> None:
    """The fast tier starts no DDS: a test that would is misfiled (not marked dds)."""
    if os.environ.get('GHOST_TEST_TIER') == 'fast':
        raise RuntimeError('this test starts ROS 2 processes over DDS but is not marked dds: '
                           'mark it (pytestmark = pytest.mark.dds) or use the ros_env fixture')


def claim_test_domain() -> 'ClaimedDomain':
    """Claim a free domain of ``TEST_DOMAINS`` with ghost_run's own claimer; release() it.

    ``ghost.isolation.claim_free_domain``: an flock on the domain's file in the per-user
    lock folder ghost_run uses, held until ``release()`` (or until this process ends), so two
    pytest workers, or two suites, never hold one domain at once; a domain whose port block
    has a bound UDP port (someone is on it) is skipped. No DDS discovery probe: every
    participant a test starts uses the default port mapping, which the port check sees, and
    a probe would cost its whole window on every free domain and start a participant inside
    pytest. Each claim tries the domains from another start (pid and count), so a test
    rarely gets the domain the previous test's killed processes were on.
    """
    _refuse_in_fast_tier()
    from ghost.isolation import claim_free_domain

    start = (os.getpid() * 13 + next(_domains)) % len(TEST_DOMAINS)
    order = [*TEST_DOMAINS[start:], *TEST_DOMAINS[:start]]
    return claim_free_domain(order, probe_budget_s=0.0)


def isolated_ros_env(domain_id: int) -> dict[str, str]:
    """Return os.environ on the ROS domain ``domain_id``, with localhost-only discovery.

    ``domain_id`` is one the caller holds (``claim_test_domain``; the ``ros_domain`` and
    ``module_ros_env`` fixtures). The shared memory that earlier tests' killed processes left
    behind is cleaned first.
    """
    _refuse_in_fast_tier()
    clean_dead_shared_memory()
    env = dict(os.environ)
    env['ROS_DOMAIN_ID'] = str(domain_id)
    env['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    env.pop('ROS_LOCALHOST_ONLY', None)
    env['PYTHONUNBUFFERED'] = '1'
    env.setdefault('RMW_IMPLEMENTATION', 'rmw_fastrtps_cpp')
    return env


#: Fixtures that start ROS 2 over DDS, or the vendored ros2 command-line tools: a test using one
#: (directly or through another fixture) is in that tier.
_DDS_FIXTURES = frozenset({'ros_domain', 'ros_env', 'module_ros_env', 'processes', 'px4_env',
                           'px4_msgs_env', 'mavros_env', 'mavros_msgs_env', 'ardupilot_env',
                           'ardupilot_msgs_env'})
_ROS2_TOOLS_FIXTURES = frozenset({'ros2_tools', 'ros2_env'})
#: Packages whose tests are pure (no bag, no file, no process): the unit tier.
_UNIT_PACKAGES = frozenset({'ghost_core', 'ghost_interfaces'})
TIERS = ('unit', 'bag', 'dds', 'ros2_tools')
#: Unit and bag tests too slow for the inner loop: ``make test`` runs them, ``make test-fast``
#: leaves them out (marker ``slow``). A file, or a file's test (every parametrization), chosen
#: from ``make test-fast ARGS='--durations=50'`` on the 2 shared cores: real-flight runs, the
#: benchmark scripts, the headless browser, every tool as a process, fuzzers and long
#: randomised sweeps of the verifier. The core's own unit tests stay in the fast tier.
SLOW_TESTS = frozenset({
    'bench/test/test_bench_codegen.py',
    'bench/test/test_bench_judgement.py',
    'bench/test/test_bench_review.py',
    'bench/test/test_bench_run_all.py',
    'bench/test/test_bench_verifier.py',
    'ghost/test/test_every_tool.py',
    'ghost/test/test_executors.py',
    'ghost/test/test_recovery_real_flights.py',
    'ghost/test/test_replay.py',
    'ghost/test/test_replay_outputs.py',
    'ghost/test/test_replay_report.py',
    'ghost_bag/test/test_shims.py::test_no_module_but_a_shim_imports_a_private_name_of_the_bag_libraries',
    'ghost_core/test/test_properties.py::test_the_live_verdict_is_the_offline_verdict',
    'ghost_interfaces/test/test_code_size.py',
    'ghost_interfaces/test/test_import_graph.py',
    'ghost_interfaces/test/test_package_xml.py',
    'ghost_px4/test/test_px4_events.py::test_log_123_has_no_failsafe_and_states_its_limits',
    'ghost_px4/test/test_px4_events.py::test_quadrotor_battery_failsafe_is_a_warning_not_a_vehicle_status_failsafe',
    'ghost_px4/test/test_px4_events.py::test_real_logs_events_are_sorted_known_and_within_the_log',
    'ghost_px4/test/test_px4_events.py::test_validity_events_alternate_and_count_the_changes',
    'ghost_px4/test/test_px4_generations.py::test_every_real_log_imports_with_its_own_orientation_source',
    'ghost_px4/test/test_px4_generations.py::test_healthy_real_flights_proceed',
    'ghost_px4/test/test_px4_generations.py::test_no_source_leaves_the_block_unknown_and_says_why',
    'ghost_px4/test/test_px4_generations.py::test_the_flight_without_a_valid_position_imports_and_never_proceeds',
    'ghost_px4/test/test_px4_status.py::test_real_logs_give_statuses_on_the_ground_and_in_the_air',
    'ghost_px4/test/test_ulog_import.py::test_installed_command_on_a_hanging_input',
    'ghost_px4/test/test_ulog_import.py::test_real_log_truncated_at_several_fractions',
    'ghost_px4/test/test_ulog_import.py::test_real_logs_conventions',
    'ghost_px4/test/test_ulog_import.py::test_real_logs_counts',
    'ghost_px4/test/test_ulog_import.py::test_vehicle_odometry_is_preferred_in_both_layouts',
    'ghost_review/test/test_report_browser.py',
    'ghost_review/test/test_review_cli.py::test_an_input_bag_is_replayed_and_reviewed',
    'ghost_review/test/test_review_fleet.py',
    'ghost_review/test/test_review_usage.py::test_a_bad_input_or_usage_is_one_line_and_its_exit_code',
    'ghost_review/test/test_review_usage.py::test_help_ends_with_the_exit_codes_and_version_names_the_tool',
    'ghost_verify/test/test_bridge_rederive.py',
    'ghost_verify/test/test_cdr.py::test_damaged_ghost_payloads_fail_or_decode_as_the_reference_does',
    'ghost_verify/test/test_cdr.py::test_every_kind_of_field_cut_or_flipped',
    'ghost_verify/test/test_cdr.py::test_every_kind_of_field_in_both_byte_orders',
    'ghost_verify/test/test_cli.py::test_console_entry_points_end_to_end_without_traceback',
    'ghost_verify/test/test_cli.py::test_python_dash_m_runs_the_combined_check',
    'ghost_verify/test/test_conformance.py::test_scenario_runs_of_the_reference_agent_conform',
    'ghost_verify/test/test_conformance.py::test_the_reference_loop_always_conforms_and_any_change_of_output_is_caught',
    'ghost_verify/test/test_fleet.py',
    'ghost_verify/test/test_fuzz.py',
    'ghost_verify/test/test_history.py::test_memory_is_bounded_by_the_outcome_limit_not_the_bag_length',
    'ghost_verify/test/test_jobs.py',
    'ghost_verify/test/test_judge_every_cycle.py::test_an_honest_run_without_its_actuations_does_not_hold',
    'ghost_verify/test/test_manifest.py::test_a_deleted_or_an_added_file_is_caught',
    'ghost_verify/test/test_manifest.py::test_consistent_forgery_resigned_with_another_key_is_caught',
    'ghost_verify/test/test_manifest.py::test_flipped_bytes_anywhere_never_verify',
    'ghost_verify/test/test_manifest.py::test_one_changed_byte_of_any_topic_is_caught',
    'ghost_verify/test/test_parameter_authority.py::test_a_recorded_change_makes_the_same_messages_hold',
    'ghost_verify/test/test_parameter_authority.py::test_an_unusable_change_record_fails_the_check',
    'ghost_verify/test/test_reading_needs_no_writer.py',
    'ghost_verify/test/test_real_recordings.py::test_the_single_property_tools_spare_a_cut_tail_unless_strict',
    'ghost_verify/test/test_recovery.py',
    'ghost_verify/test/test_rederive.py',
    'ghost_verify/test/test_rederive_order.py',
    'ghost_verify/test/test_rederived_contracts.py',
    'ghost_verify/test/test_verify.py::test_both_properties_hold_at_the_m_and_k_boundaries',
    'ghost_verify/test/test_verify.py::test_recovery_as_old_outcomes_leave_the_window',
    'ghost_verify/test/test_verify.py::test_the_reference_policy_pair_satisfies_both_properties_on_any_cycle',
    'ghost_verify/test/test_verify_gate.py::test_a_gate_schema_without_a_field_the_verifier_reads_is_refused',
    'ghost_verify/test/test_verify_gate.py::test_the_streaming_verifier_agrees_with_the_whole_recording_judge',
    'ghost_verify/test/test_verify_gate.py::test_verify_all_prints_gate_v1_and_exits_1_on_a_violation',
})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Give every test exactly one tier marker (docs/development.md, "Test tiers").

    ros2_tools: through the real ros2 launch/run/topic; dds: starts ROS 2 processes (a DDS
    fixture, or an explicit mark); unit: the pure packages' tests; bag: the rest (bags and
    files, no process). `make test-fast` runs unit and bag; in it, starting DDS from a test
    not marked dds fails (isolated_ros_env refuses), so a misfiled test cannot hide there.
    """
    for item in items:
        names = set(getattr(item, 'fixturenames', ()))
        if item.get_closest_marker('ros2_tools') or names & _ROS2_TOOLS_FIXTURES:
            tier = 'ros2_tools'
        elif item.get_closest_marker('dds') or names & _DDS_FIXTURES:
            tier = 'dds'
        elif Path(str(item.fspath)).resolve().relative_to(ROOT).parts[0] in _UNIT_PACKAGES:
            tier = 'unit'
        else:
            tier = 'bag'
        for other in TIERS:
            if other != tier and item.get_closest_marker(other):
                raise pytest.UsageError(f'{item.nodeid}: marked {other} but it is a {tier} test')
        if not item.get_closest_marker(tier):
            item.add_marker(getattr(pytest.mark, tier))
        path, _, name = item.nodeid.partition('::')
        if tier in ('unit', 'bag') and (
                path in SLOW_TESTS or f'{path}::{name.partition("[")[0]}' in SLOW_TESTS):
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def ros_domain() -> Iterator[int]:
    """A ROS domain of this test's own (``claim_test_domain``), held until its teardown.

    Every fixture of the test that starts ROS 2 takes it (``ros_env``, ``ros2_env``,
    ``px4_env``; ``processes`` too, so that the domain is released only after its processes
    are stopped).
    """
    claim = claim_test_domain()
    try:
        yield claim.domain_id
    finally:
        claim.release()


@pytest.fixture
def ros_env(ros_domain: int) -> dict[str, str]:
    """An environment for starting ROS processes isolated from every other test."""
    return isolated_ros_env(ros_domain)


@pytest.fixture(scope='module')
def module_ros_env() -> Iterator[dict[str, str]]:
    """As ``ros_env``, for a module-scoped fixture (a run its module's tests share).

    Its domain is held until the module's last test is done.
    """
    claim = claim_test_domain()
    try:
        yield isolated_ros_env(claim.domain_id)
    finally:
        claim.release()


def _vendored_env(name: str, sources: Path, what: str) -> dict[str, str]:
    """scripts/env.sh's environment with the install space of ../shared/vendor/<name> sourced.

    Built once by scripts/vendored.sh (cached by a hash of the sources; a lock serialises
    concurrent builds). Skips, with one line, when the sources are missing (a user's clone;
    CI refuses to run without them).
    """
    if not sources.is_dir():
        pytest.skip(f'no {what} at {sources} (CI has them; see .ci/run)')
    build = subprocess.run(  # noqa: S603
        ['bash', str(ROOT / 'scripts' / 'vendored.sh'), name, str(sources)], text=True,
        capture_output=True, timeout=900, check=False)
    if build.returncode != 0:
        pytest.fail(f'scripts/vendored.sh {name} failed (exit {build.returncode}):\n'
                    f'{build.stderr}')
    install = build.stdout.strip().splitlines()[-1]
    # Source exactly what the vendor README says a user sources, and keep the result.
    script = 'source "$1/scripts/env.sh" && source "$2/local_setup.bash" && env -0'
    sourced = subprocess.run(  # noqa: S603
        ['bash', '-c', script, 'bash', str(ROOT), install], capture_output=True, timeout=60,
        check=True)
    env = dict(item.split('=', 1) for item in sourced.stdout.decode().split('\0') if '=' in item)
    return {k: v for k, v in env.items() if not k.startswith('PYTEST_')}


def _isolated(env: dict[str, str], domain_id: int) -> dict[str, str]:
    """``env`` isolated as ``ros_env`` is (the claimed ``domain_id``, localhost only)."""
    env = dict(env)
    env.pop('ROS_LOCALHOST_ONLY', None)
    isolated = isolated_ros_env(domain_id)
    for key in ('ROS_DOMAIN_ID', 'ROS_AUTOMATIC_DISCOVERY_RANGE', 'PYTHONUNBUFFERED'):
        env[key] = isolated[key]
    env.setdefault('RMW_IMPLEMENTATION', isolated['RMW_IMPLEMENTATION'])
    return env


@pytest.fixture(scope='session')
def ros2_tools() -> dict[str, str]:
    """The environment with the vendored ROS 2 tools (ros2 launch/run/pkg/topic) on PATH.

    The real launch/launch_ros packages are importable too. ``$GHOST_ROS2_VENDOR`` overrides
    ../shared/vendor/ros2-jazzy. Not isolated: tests take ``ros2_env``.
    """
    sources = Path(os.environ.get('GHOST_ROS2_VENDOR') or VENDORED_ROS2)
    return _vendored_env('ros2-jazzy', sources, 'vendored ROS 2 tools')


@pytest.fixture
def ros2_env(ros2_tools: dict[str, str], ros_domain: int) -> dict[str, str]:
    """``ros2_tools``' environment isolated as ``ros_env`` is (own domain, localhost only)."""
    return _isolated(ros2_tools, ros_domain)


@pytest.fixture(scope='session')
def px4_msgs_env() -> dict[str, str]:
    """The environment with the vendored px4_msgs subset importable.

    ``$GHOST_PX4_MSGS`` overrides ../shared/vendor/px4_msgs. Not isolated: tests take
    ``px4_env``.
    """
    sources = Path(os.environ.get('GHOST_PX4_MSGS') or VENDORED_PX4_MSGS)
    return _vendored_env('px4_msgs', sources, 'vendored px4_msgs')


@pytest.fixture
def px4_env(px4_msgs_env: dict[str, str], ros_domain: int) -> dict[str, str]:
    """``px4_msgs_env`` isolated as ``ros_env`` is (own domain, localhost only)."""
    return _isolated(px4_msgs_env, ros_domain)


@pytest.fixture(scope='session')
def mavros_msgs_env() -> dict[str, str]:
    """The environment with the vendored mavros_msgs subset importable.

    ``$GHOST_MAVROS_MSGS`` overrides ../shared/vendor/mavros_msgs. Not isolated: tests take
    ``mavros_env``.
    """
    sources = Path(os.environ.get('GHOST_MAVROS_MSGS') or VENDORED_MAVROS_MSGS)
    return _vendored_env('mavros_msgs', sources, 'vendored mavros_msgs')


@pytest.fixture
def mavros_env(mavros_msgs_env: dict[str, str], ros_domain: int) -> dict[str, str]:
    """``mavros_msgs_env`` isolated as ``ros_env`` is (own domain, localhost only)."""
    return _isolated(mavros_msgs_env, ros_domain)


@pytest.fixture(scope='session')
def ardupilot_msgs_env() -> dict[str, str]:
    """The environment with the vendored ardupilot_msgs subset (and geographic_msgs) importable.

    ``$GHOST_ARDUPILOT_MSGS`` overrides ../shared/vendor/ardupilot_msgs. Not isolated: tests
    take ``ardupilot_env``.
    """
    sources = Path(os.environ.get('GHOST_ARDUPILOT_MSGS') or VENDORED_ARDUPILOT_MSGS)
    return _vendored_env('ardupilot_msgs', sources, 'vendored ardupilot_msgs')


@pytest.fixture
def ardupilot_env(ardupilot_msgs_env: dict[str, str], ros_domain: int) -> dict[str, str]:
    """``ardupilot_msgs_env`` isolated as ``ros_env`` is (own domain, localhost only)."""
    return _isolated(ardupilot_msgs_env, ros_domain)


class ProcessGroup:
    """Processes started by one test, each in its own session, all stopped at teardown."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen[str]] = []

    def start(self, argv: list[str], env: dict[str, str],
              **kwargs: object) -> subprocess.Popen[str]:
        """Start ``argv`` in a new session, stdout/stderr piped unless given."""
        proc: subprocess.Popen[str] = subprocess.Popen(  # noqa: S603
            argv, env=env, text=True, start_new_session=True,
            stdout=kwargs.pop('stdout', subprocess.PIPE),  # type: ignore[arg-type]
            stderr=kwargs.pop('stderr', subprocess.PIPE),  # type: ignore[arg-type]
            **kwargs)  # type: ignore[call-overload]
        self.procs.append(proc)
        return proc

    def stop_all(self) -> None:
        """SIGINT every process group, then SIGKILL whatever is left (children included)."""
        from ghost.launcher import stop_groups

        stop_groups(self.procs, signal.SIGINT, 10.0)


@pytest.fixture
def processes(ros_domain: int) -> Iterator[ProcessGroup]:
    """Start processes through this; every one is stopped (its whole group) after the test.

    It takes the test's ``ros_domain`` so that the domain is released after they stop.
    """
    group = ProcessGroup()
    try:
        yield group
    finally:
        group.stop_all()
