"""Test fixtures shared by every package: isolated ROS 2 environments for real-DDS tests."""

from collections.abc import Iterator
import itertools
import os
import signal
import subprocess

import pytest

_domains = itertools.count()


def isolated_ros_env() -> dict[str, str]:
    """Return os.environ plus a ROS domain of this test's own, with localhost-only discovery."""
    env = dict(os.environ)
    # Domain ids 101..200: valid with the default port mapping, and outside 1..100, where
    # ghost_run picks (and locks) a free domain for runs that set none
    # (ghost_nodes.isolation); spread runs by pid.
    env['ROS_DOMAIN_ID'] = str(101 + (os.getpid() * 13 + next(_domains)) % 100)
    env['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    env.pop('ROS_LOCALHOST_ONLY', None)
    env['PYTHONUNBUFFERED'] = '1'
    env.setdefault('RMW_IMPLEMENTATION', 'rmw_fastrtps_cpp')
    return env


@pytest.fixture
def ros_env() -> dict[str, str]:
    """An environment for starting ROS processes isolated from every other test."""
    return isolated_ros_env()


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
        """SIGINT every process group, then SIGKILL whatever is left."""
        for proc in self.procs:
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGINT)
                except ProcessLookupError:
                    pass
        for proc in self.procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait(timeout=5)
            # A killed session may leave children (rclpy re-executes itself once at start).
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.fixture
def processes() -> Iterator[ProcessGroup]:
    """Start processes through this; every one is stopped (its whole group) after the test."""
    group = ProcessGroup()
    try:
        yield group
    finally:
        group.stop_all()
