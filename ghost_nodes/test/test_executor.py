"""The ``executor`` parameter chooses what a Ghost node process spins, and a bad one is refused.

Real node processes over real DDS (the test's own domain), stopped with SIGINT.
"""

import subprocess
import sys
import textwrap

import pytest
from stopped_process import interrupt_after

#: A Ghost node that says which executor runs it (rclpy sets ``Node.executor`` on add_node).
PROBE = textwrap.dedent('''
    from ghost_nodes.node_base import GhostNode, run

    class ExecutorProbe(GhostNode):
        """Logs the class of the executor that spins it, from a callback of that executor."""

        DRAIN_S = 0.1

        def __init__(self):
            super().__init__('executor_probe', [])
            self._timer = self.create_timer(0.05, self._say)

        def _say(self):
            self._timer.cancel()
            self.get_logger().info(f'spun by {type(self.executor).__name__}')

    run(ExecutorProbe)
''')


def _probe(ros_env, *ros_args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, '-c', PROBE, '--ros-args', *ros_args],  # noqa: S603
                            env=ros_env, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


@pytest.mark.parametrize(('value', 'spun_by'), [
    (None, 'SingleThreadedExecutor'),      # the parameter's default: rclpy's own
    ('single_threaded', 'SingleThreadedExecutor'),
    ('events', 'EventsExecutor'),
])
def test_the_executor_parameter_chooses_what_spins_the_node(ros_env, value, spun_by) -> None:
    proc = _probe(ros_env, *(['-p', f'executor:={value}'] if value else []))
    line, stderr = interrupt_after(proc, 'spun by')
    assert line.rstrip().endswith(f'spun by {spun_by}'), line
    assert proc.returncode == 0, stderr


@pytest.mark.parametrize(('value', 'reason'), [
    ('bogus', "error: parameter executor must be one of ['events', 'single_threaded'], "
              "got 'bogus'"),
    ('3', 'error: parameter executor must be of type str, got 3'),
])
def test_a_bad_executor_is_refused_in_one_line_with_exit_code_2(ros_env, value, reason) -> None:
    proc = _probe(ros_env, '-p', f'executor:={value}')
    try:
        _, stderr = proc.communicate(timeout=30.0)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 2, stderr
    assert stderr.strip() == reason, stderr
