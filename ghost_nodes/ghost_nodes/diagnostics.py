"""What Ghost says on /diagnostics: per-node health and the live property verdicts (no rclpy).

The ``monitor`` node feeds ``GraphHealth`` with the arrival of every message on the Ghost
topics and ``ghost_core.monitor.OnlineMonitor`` with the calibrated assessments and
actuations; once a second it turns both into ``Status`` records, which it publishes as
``diagnostic_msgs/DiagnosticStatus``. Everything here is plain Python, so the levels are
tested without ROS.

Names follow the ``diagnostic_updater`` convention, ``<component>: <task>``, flat:
``ghost: calibrator``, ``ghost: BAUD-v1``. The hierarchy rqt_robot_monitor shows is built by a
``diagnostic_aggregator`` from them (it replaces any ``/`` in a raw name, which is why none
is used). In a namespace the component carries it (``ghost uav1: calibrator``): two graphs
on one ROS domain publish on the same ``/diagnostics`` and must not share names.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum

from ghost_core import graph
from ghost_core.monitor import PropertyState
from ghost_core.properties import Violation

__all__ = ['GHOST_NODE_WIRING', 'INPUT_TOPICS', 'GraphHealth', 'Level', 'NodeWiring',
           'Status', 'component', 'default_hardware_id', 'property_status', 'status_name']


class Level(IntEnum):
    """``diagnostic_msgs/DiagnosticStatus`` levels."""

    OK = 0
    WARN = 1
    ERROR = 2
    STALE = 3


@dataclass(frozen=True, slots=True)
class Status:
    """One DiagnosticStatus: level, name, message, hardware_id and key/value pairs."""

    level: Level
    name: str
    message: str
    hardware_id: str
    values: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class NodeWiring:
    """A Ghost node as the monitor sees it: the topic it publishes and those it reads."""

    node: str
    output: str
    inputs: tuple[str, ...]


#: The inputs of the graph (relative names, as the nodes use them), from ghost_core.graph.
INPUT_TOPICS = tuple(graph.relative_topic(topic) for topic in graph.INPUT_TOPICS)

#: The six Ghost nodes, each by the one topic it publishes (relative names): the graph's
#: wiring (ghost_core.graph.WIRING) without its input sources, nor the optional inputs.
GHOST_NODE_WIRING: tuple[NodeWiring, ...] = tuple(
    NodeWiring(node, graph.relative_topic(publishes[0]),
               tuple(graph.relative_topic(topic) for topic in subscribes
                     if topic not in graph.OPTIONAL_INPUTS))
    for node, subscribes, publishes in graph.WIRING if subscribes)


def component(namespace: str) -> str:
    """``ghost`` in the root namespace, ``ghost uav1`` in ``/uav1`` (no ``/``: see above)."""
    tokens = [token for token in namespace.split('/') if token]
    return ' '.join(['ghost', *tokens])


def status_name(task: str, namespace: str) -> str:
    """The DiagnosticStatus name of a task (a node name or a property version)."""
    return f'{component(namespace)}: {task}'


def default_hardware_id(namespace: str) -> str:
    """The vehicle: its namespace without slashes (``uav1``), or ``ghost`` in the root one."""
    stripped = namespace.strip('/')
    return stripped if stripped else 'ghost'


@dataclass(slots=True)
class _Topic:
    last_ns: int | None = None
    count: int = 0
    stamp_ns: int | None = None
    summary: str = ''
    facts: tuple[tuple[str, str], ...] = ()


class GraphHealth:
    """When each Ghost topic last delivered, and what each node's health is from that.

    ``now_ns`` is a monotonic clock (wall time: liveness is about time passing, whatever the
    stamps say). A node's level, with ``stale_after_ns`` as the horizon:

    * OK — it published within the horizon and every input it reads delivered within it;
    * WARN — it published, but some input is missing (e.g. no fix: GNSS outage); or it has
      not published since an input arrived more than the horizon ago while another of its
      inputs is missing (it waits for that one);
    * ERROR — it has not published since an input arrived more than the horizon ago, while
      every input it reads keeps arriving: the node is down or stuck;
    * STALE — nothing to judge: no cycle yet, or the whole graph has been quiet.
    """

    def __init__(self, stale_after_ns: int,
                 wiring: Sequence[NodeWiring] = GHOST_NODE_WIRING) -> None:
        if stale_after_ns <= 0:
            raise ValueError(f'stale_after_ns must be > 0, got {stale_after_ns}')
        self._stale_ns = stale_after_ns
        self._wiring = tuple(wiring)
        self._topics: dict[str, _Topic] = {}
        # Per node: when the first input arrived after its last output (None: it answered).
        self._waiting_since: dict[str, int | None] = {w.node: None for w in self._wiring}
        self._readers: dict[str, list[str]] = {}
        for wiring_item in self._wiring:
            for topic in wiring_item.inputs:
                self._readers.setdefault(topic, []).append(wiring_item.node)

    def on_message(self, topic: str, now_ns: int, stamp_ns: int, summary: str = '',
                   facts: tuple[tuple[str, str], ...] = ()) -> None:
        """Record one message on `topic` (its cycle stamp, what the status shows of it)."""
        entry = self._topics.setdefault(topic, _Topic())
        entry.last_ns = now_ns
        entry.count += 1
        entry.stamp_ns = stamp_ns
        entry.summary = summary
        entry.facts = facts
        for node in self._readers.get(topic, ()):
            if self._waiting_since[node] is None:
                self._waiting_since[node] = now_ns
        for wiring_item in self._wiring:
            if wiring_item.output == topic:
                self._waiting_since[wiring_item.node] = None

    def missing_inputs(self, wiring_item: NodeWiring, now_ns: int) -> list[str]:
        """The inputs of a node that have delivered nothing within the horizon."""
        return [topic for topic in wiring_item.inputs if not self._fresh(topic, now_ns)]

    def node_statuses(self, now_ns: int, namespace: str, hardware_id: str) -> list[Status]:
        """One Status per Ghost node, in graph order."""
        return [self._node_status(w, now_ns, namespace, hardware_id) for w in self._wiring]

    def _fresh(self, topic: str, now_ns: int) -> bool:
        entry = self._topics.get(topic)
        return (entry is not None and entry.last_ns is not None
                and now_ns - entry.last_ns <= self._stale_ns)

    def _node_status(self, wiring_item: NodeWiring, now_ns: int, namespace: str,
                     hardware_id: str) -> Status:
        out = self._topics.get(wiring_item.output, _Topic())
        missing = self.missing_inputs(wiring_item, now_ns)
        age_s = None if out.last_ns is None else (now_ns - out.last_ns) / 1e9
        waiting = self._waiting_since[wiring_item.node]
        overdue = waiting is not None and now_ns - waiting > self._stale_ns
        if self._fresh(wiring_item.output, now_ns):
            level = Level.WARN if missing else Level.OK
            message = out.summary if not missing else f'inputs missing: {", ".join(missing)}'
        elif overdue and not missing:
            assert waiting is not None
            level = Level.ERROR
            message = (f'no output for {(now_ns - waiting) / 1e9:.1f} s while its inputs '
                       'arrive')
        elif overdue and len(missing) < len(wiring_item.inputs):
            level = Level.WARN
            message = f'waiting: inputs missing: {", ".join(missing)}'
        elif age_s is None:
            level, message = Level.STALE, 'no cycle yet'
        else:
            level, message = Level.STALE, f'no cycle for {age_s:.1f} s'
        values = (
            ('last_cycle_stamp_ns', '' if out.stamp_ns is None else str(out.stamp_ns)),
            ('cycles', str(out.count)),
            ('seconds_since_output', '' if age_s is None else f'{age_s:.2f}'),
            ('inputs_missing', ', '.join(missing) if missing else 'none'),
            *out.facts,
        )
        return Status(level, status_name(wiring_item.node, namespace), message or 'OK',
                      hardware_id, values)


def _violation_values(prefix: str, violation: Violation | None) -> list[tuple[str, str]]:
    if violation is None:
        return []
    return [(f'{prefix}.cycle_stamp_ns', str(violation.cycle_stamp_ns)),
            (f'{prefix}.kind', violation.kind.value),
            (f'{prefix}.postcondition', violation.postcondition),
            *((f'{prefix}.{key}', str(value)) for key, value in violation.observed)]


def property_status(state: PropertyState, parameters: tuple[int | None, int | None],
                    notes: Sequence[str], pending: int, namespace: str,
                    hardware_id: str) -> Status:
    """The Status of one property: OK while it holds, ERROR (latched) from its first violation.

    WARN when it holds but the calibrator's M or K changed during the run (judged with the
    first pair, as the verifier does; `notes` says which).
    """
    first = state.first_violation
    if first is not None:
        level = Level.ERROR
        message = (f'VIOLATED: {first.kind.value} at cycle {first.cycle_stamp_ns} '
                   f'({state.violations} violation{"s" if state.violations != 1 else ""})')
    elif notes:
        level, message = Level.WARN, f'holds; {notes[0]}'
    else:
        level = Level.OK
        message = f'holds ({state.cycles_precondition_held} cycles evaluated)'
    min_outcomes, downgrade_threshold = parameters
    values = [
        ('property_version', state.version),
        ('holds', 'true' if state.holds else 'false'),
        ('cycles_total', str(state.cycles_total)),
        ('cycles_precondition_held', str(state.cycles_precondition_held)),
        ('violations', str(state.violations)),
        ('violations_by_kind', ', '.join(f'{k}={n}' for k, n in state.counts_by_kind)
         or 'none'),
        ('min_outcomes', '' if min_outcomes is None else str(min_outcomes)),
        ('downgrade_threshold', '' if downgrade_threshold is None else str(downgrade_threshold)),
        ('cycles_awaiting_actuation', str(pending)),
        ('parameter_notes', '; '.join(notes) or 'none'),
        *_violation_values('first_violation', first),
        *_violation_values('last_violation', state.last_violation),
    ]
    return Status(level, status_name(state.version, namespace), message, hardware_id,
                  tuple(values))
