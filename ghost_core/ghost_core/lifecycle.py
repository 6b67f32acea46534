"""The start-up and shutdown rule: which cycles a recording's edges leave unverifiable.

Pure (standard library). A node publishes two lifecycle records on ghost/lifecycle
(``ghost_core.graph.LIFECYCLE_TOPIC``): ``ready`` once its own endpoints have matched (its
subscriptions each a writer, its Ghost publishers each a reader), and ``stopping`` when it
begins to drain; the recorder publishes ``stopping`` too. The verifier believes only the
recorder's log times of those records, and only what cannot hide a cycle in the middle of a
run (docs/properties.md, "Start-up and shutdown"):

* ready: each node's FIRST ``ready`` record counts (later ones are ignored); a node that
  published a start configuration but no ``ready`` is ready at its first configuration
  record; every node that recorded a ``ready`` must be ready too. The run is ready at the
  latest of those, but never later than ``READY_BOUND_NS`` after the first complete cycle: a
  readiness claimed later than that is capped there.
* stop: the run begins to stop at the earliest ``stopping`` record. A stop is a stop only if
  the run then ends: a Ghost message logged more than ``STOP_BOUND_NS`` after it is a
  violation (``output_after_stop``), and nothing is spared by it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
import json

__all__ = ['EVENTS', 'READY', 'READY_BOUND_NS', 'RunEdges', 'STOP_BOUND_NS', 'STOP_LEAD_NS',
           'STOPPING', 'lifecycle_record', 'parse_lifecycle', 'run_edges']

READY = 'ready'
STOPPING = 'stopping'
EVENTS = frozenset({READY, STOPPING})
#: A readiness later than this after the first complete cycle is capped there: a graph whose
#: cycles complete is matched, and each node says so within a poll (0.1 s) of matching; a
#: graph slow to start on a loaded machine is ready well within it (``make stress``). So at
#: most this much of a run after its first complete cycle can be unverifiable (a node
#: restarted within it, which never said ready before, moves the readiness to its restart).
READY_BOUND_NS = 10_000_000_000
#: After the first ``stopping`` record, every node drains (0.5 s; the recorder 1 s) and
#: exits: a Ghost message logged later than this after it shows the run did not stop.
STOP_BOUND_NS = 5_000_000_000
#: An incomplete cycle whose last message was logged less than this before the stop is cut by
#: the stop (its next link waits on an input up to the evaluator's idle flush, 1 s, away).
STOP_LEAD_NS = 1_000_000_000
#: The longest record believed (a node name and an event).
_MAX_RECORD = 1024


def lifecycle_record(node: str, event: str) -> str:
    """The record's JSON text (what ``std_msgs/String.data`` holds)."""
    if event not in EVENTS:
        raise ValueError(f'lifecycle event must be one of {sorted(EVENTS)}, got {event!r}')
    return json.dumps({'event': event, 'node': node}, sort_keys=True, separators=(',', ':'))


def parse_lifecycle(text: str) -> tuple[str, str] | None:
    """``(node, event)`` of a record, or None when it is not one (ignored, never believed)."""
    if len(text) > _MAX_RECORD:
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or set(data) != {'event', 'node'}:
        return None
    node, event = data['node'], data['event']
    if not isinstance(node, str) or not node or event not in EVENTS:
        return None
    return node, event


@dataclass(frozen=True, slots=True)
class RunEdges:
    """When a recorded run was ready and when it began to stop (recorder log times)."""

    #: The latest first readiness of the nodes that must be ready (None: no rule).
    ready_ns: int | None = None
    #: The earliest ``stopping`` record (None: none recorded).
    stop_ns: int | None = None
    #: The nodes whose readiness was recorded, and by which record.
    ready_nodes: tuple[str, ...] = ()
    #: The node ready last.
    last_ready: str = ''

    def ready_from(self, first_complete_ns: int | None) -> int | None:
        """The readiness in force, given the first complete cycle's log time (None: none yet)."""
        if self.ready_ns is None or first_complete_ns is None:
            return self.ready_ns
        return min(self.ready_ns, first_complete_ns + READY_BOUND_NS)

    def to_json(self) -> dict[str, object]:
        """The edges as JSON (docs/properties.md)."""
        return {'ready_ns': self.ready_ns, 'stop_ns': self.stop_ns,
                'ready_nodes': list(self.ready_nodes), 'last_ready': self.last_ready}


def run_edges(start_configurations: Mapping[str, int],
              records: Iterable[tuple[int, str, str]]) -> RunEdges:
    """The run's edges from its recorded lifecycle.

    `start_configurations`: per node, the log time of its first configuration record (the
    nodes that must be ready); `records`: ``(log_time_ns, node, event)`` in any order.
    """
    first_ready: dict[str, int] = {}
    stop_ns: int | None = None
    for log_ns, node, event in sorted(records):
        if event == READY:
            first_ready.setdefault(node, log_ns)
        elif event == STOPPING and stop_ns is None:
            stop_ns = log_ns
    ready = {**first_ready, **{node: first_ready.get(node, logged)
                               for node, logged in start_configurations.items()}}
    if not ready:
        return RunEdges(None, stop_ns)
    last = max(sorted(ready), key=lambda node: ready[node])
    return RunEdges(ready[last], stop_ns,
                    tuple(f'{node} ({"ready" if node in first_ready else "configuration"})'
                          for node in sorted(ready)), last)
