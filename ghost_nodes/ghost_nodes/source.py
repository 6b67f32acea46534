"""What the nodes that feed the graph's inputs share: wait until every edge has matched, then play.

The scenario node and the input player publish /state/nav and /observations. Before the first
message both wait for proof from both ends of every edge (ghost_nodes.readiness), so nothing
is lost to discovery, then hand over to ``start_playing``. With ``exit_when_done`` a source
ends its process once the last cycle it played has been actuated, so that a launch of a finite
run ends by itself (``finish``).
"""

import time
from typing import Any

from ghost_core.parameters import ParamSpec
from ghost_core.ros_inputs import time_ns
from ghost_interfaces.msg import ActionEmission
from ghost_nodes.node_base import GhostNode
from ghost_nodes.qos import GHOST_QOS
from ghost_nodes.readiness import GraphReadiness, GraphStatusReporter

__all__ = ['FINISH_WAIT_S', 'SourceNode']

#: With ``exit_when_done``: the longest wait, after the last message, for the actuation of the
#: last cycle; a source then exits anyway and says so (the graph lost or never made that cycle).
FINISH_WAIT_S = 10.0


class SourceNode(GhostNode):
    """A GhostNode that waits for the graph (``expected_subscribers``) before it plays.

    Subclasses declare ``ghost_nodes.node_parameters.SOURCE_PARAMS`` (``expected_subscribers``,
    ``wait_for_graph_s``) and ``exit_when_done``, call ``wait_for_graph(settle_s)`` at the end
    of their ``__init__``, implement ``start_playing`` and call ``finish`` after the last
    message.
    """

    #: A source stops at once on shutdown: nothing new is published.
    DRAIN_S = 0.0
    #: Whether the node declares ``exit_when_done`` with ``finish``'s meaning (the scenario,
    #: the input player; the PX4 log player's has its own).
    EXITS_WHEN_ACTUATED = False

    def __init__(self, node_name: str, specs: tuple[ParamSpec, ...], **options: Any) -> None:
        super().__init__(node_name, specs, **options)
        # A source always reports: it reads its own writers' matches from its reporter, and a
        # test feed or runner waiting for the graph counts the source's readers too.
        if self.graph_status is None:
            self.graph_status = GraphStatusReporter(self)
        self._timer: Any = None
        # The newest actuated stamp: the run is complete once it reaches the last belief's.
        self._actuated_ns = -1
        if self.EXITS_WHEN_ACTUATED and self.param('exit_when_done'):
            self.create_subscription(ActionEmission, 'actuations', self._on_actuation,
                                     GHOST_QOS)

    def wait_for_graph(self, settle_s: float = 0.0) -> None:
        """Poll readiness every 50 ms; then, after ``settle_s``, call ``start_playing``."""
        self._readiness = GraphReadiness(self, self._expected(), self.graph_status)
        self._settle_s = settle_s
        self._started_wait = time.monotonic()
        self._ready_at: float | None = None
        self._timer = self.create_timer(0.05, self._check_graph)

    def start_playing(self) -> None:
        """Begin publishing (the graph is ready)."""
        raise NotImplementedError

    def _expected(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for item in self.param('expected_subscribers'):
            if item:
                topic, _, n = item.rpartition('=')
                counts[self.resolve_topic_name(topic)] = int(n)
        return counts

    def _check_graph(self) -> None:
        now = time.monotonic()
        if self._ready_at is None:
            missing = self._readiness.missing()
            waited = now - self._started_wait
            if missing and waited < self.param('wait_for_graph_s'):
                return
            if missing:
                self.get_logger().warning(f'starting without the whole graph after {waited:.1f}s:'
                                          f' {missing}')
            else:
                self.get_logger().info(f'graph ready after {waited:.2f}s: every edge matched')
            self._ready_at = now
            self._readiness.close()
        if now - self._ready_at < self._settle_s:
            return
        self._timer.cancel()
        self.start_playing()

    def finish(self, last_belief_ns: int | None) -> None:
        """The last message is out: with ``exit_when_done``, exit once it is actuated.

        ``last_belief_ns``: the stamp of the newest belief played (None: none was). The
        process exits (code 0) when the actuation of that cycle has come back, or after
        ``FINISH_WAIT_S`` without it, saying so.
        """
        if not (self.EXITS_WHEN_ACTUATED and self.param('exit_when_done')):
            return
        self._awaited_ns = -1 if last_belief_ns is None else last_belief_ns
        self._finished_at = time.monotonic()
        self._timer = self.create_timer(0.05, self._check_finished)

    def _on_actuation(self, msg: Any) -> None:
        self._actuated_ns = max(self._actuated_ns, time_ns(msg.header.stamp))

    def _check_finished(self) -> None:
        if self._actuated_ns >= self._awaited_ns:
            self.get_logger().info('run complete: the last cycle is actuated; exiting')
        elif time.monotonic() - self._finished_at < FINISH_WAIT_S:
            return
        else:
            self.get_logger().warning(
                f'no actuation of the last cycle (stamp {self._awaited_ns} ns) within '
                f'{FINISH_WAIT_S:g} s: exiting; the recording may lack it')
        self._timer.cancel()
        # Leave the executor; ``run`` destroys the node (exit code 0).
        raise SystemExit(0)

    def on_shutdown_requested(self) -> None:
        """Publish nothing more."""
        if self._timer is not None:
            self._timer.cancel()
