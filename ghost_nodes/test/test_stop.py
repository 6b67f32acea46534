"""How a Ghost node process stops: a stop stuck in teardown says where, and still ends.

A real node process over real DDS (its own domain), interrupted with SIGINT.
"""

import subprocess
import sys
import textwrap

from stopped_process import interrupt_after

SLOW_TEARDOWN = textwrap.dedent('''
    import time
    from ghost_nodes.node_base import GhostNode, run

    class SlowToDestroy(GhostNode):
        """A node whose teardown takes longer than its budget (a stand-in for a stuck one)."""

        DRAIN_S = 0.1
        TEARDOWN_S = 0.5

        def __init__(self):
            super().__init__('slow_to_destroy', [])
            self.get_logger().info('up')

        def destroy_node(self):
            time.sleep(1.5)
            super().destroy_node()

    run(SlowToDestroy)
''')


def test_a_stop_stuck_in_teardown_reports_every_threads_stack_and_still_ends(ros_env) -> None:
    """Past TEARDOWN_S the process prints faulthandler's stacks (the frame it is stuck in)."""
    proc = subprocess.Popen([sys.executable, '-c', SLOW_TEARDOWN], env=ros_env, text=True,  # noqa: S603
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, stderr = interrupt_after(proc, 'up')
    assert proc.returncode == 0, stderr
    assert 'Timeout (0:00:00.500000)!' in stderr, stderr
    assert 'in destroy_node' in stderr, stderr  # the frame where the stop was stuck
