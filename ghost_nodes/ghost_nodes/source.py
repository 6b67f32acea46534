"""What the nodes that feed the graph's inputs share: wait until every edge has matched, then play.

The scenario node and the input player publish /state/nav and /observations. Before the first
message both wait for proof from both ends of every edge (ghost_nodes.readiness), so nothing
is lost to discovery, then hand over to ``start_playing``.
"""

import time
from typing import Any

from ghost_core.parameters import ParamSpec
from ghost_nodes.node_base import GhostNode
from ghost_nodes.readiness import GraphReadiness, GraphStatusReporter

__all__ = ['SourceNode']

class SourceNode(GhostNode):
    """A GhostNode that waits for the graph (``expected_subscribers``) before it plays.

    Subclasses declare ``ghost_nodes.node_parameters.SOURCE_PARAMS`` (``expected_subscribers``,
    ``wait_for_graph_s``),
    call ``wait_for_graph(settle_s)`` at the end of their ``__init__`` and implement
    ``start_playing``.
    """

    #: A source stops at once on shutdown: nothing new is published.
    DRAIN_S = 0.0

    def __init__(self, node_name: str, specs: tuple[ParamSpec, ...], **options: Any) -> None:
        super().__init__(node_name, specs, **options)
        # A source always reports: it reads its own writers' matches from its reporter, and a
        # test feed or runner waiting for the graph counts the source's readers too.
        if self.graph_status is None:
            self.graph_status = GraphStatusReporter(self)
        self._timer: Any = None

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

    def on_shutdown_requested(self) -> None:
        """Publish nothing more."""
        if self._timer is not None:
            self._timer.cancel()
