"""Graph readiness: every node reports which of its endpoints DDS has actually matched.

Discovery is not matching. ``count_subscribers`` says a reader exists somewhere in the graph;
it says nothing about whether the writer feeding that reader has matched it, and on a
reliable, volatile topic a sample published before both sides have matched is simply lost
(SPEC section 2 keeps Ghost topics volatile). So before its first cycle the scenario waits for
proof from both ends of every edge:

* writer side: each node reports, per topic it publishes, how many readers its writer has
  matched (``Publisher.get_subscription_count``);
* reader side: each node reports, per topic it subscribes to, how many writers its reader has
  matched (``Subscription.get_publisher_count``).

The reports travel on ``/ghost/graph_status`` (``std_msgs/String`` holding JSON; reliable,
transient-local: a late subscriber still gets each node's latest report). The writers keep
one report (``STATUS_WRITER_QOS``, depth 1); a reader must keep many (``STATUS_READER_QOS``):
the topic has no keys, so a reader's history depth is shared by all the writers, and with
depth 1 one node's report overwrites another's before the executor takes it — a change that
is never published again would be lost. The topic is a start-up diagnostic outside SPEC
section 2 and is not recorded. ``missing_edges`` is the decision, a pure function of the
reports.

The same matched counts show a second graph: every topic a Ghost node subscribes to has one
producer in its graph, so a reader that has matched more writers hears someone else (another
Ghost graph on the same ROS domain, most often). The reporter logs it, naming the publishers
(``foreign_producers`` is the pure check, ``foreign_producer_message`` the line).
"""

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
import json
import time
from typing import Any

from rclpy.qos import QoSDurabilityPolicy, QoSHistoryPolicy, QoSProfile, QoSReliabilityPolicy

from ghost_core.graph import (
    CONFIGURATION_TOPIC,
    DIAGNOSTICS_TOPIC,
    GRAPH_STATUS_TOPIC,
    LIFECYCLE_TOPIC,
    OPTIONAL_INPUTS,
    relative_topic,
)

__all__ = ['FOREIGN_WARNING_PERIOD_S', 'STATUS_TOPIC', 'EndpointReport', 'GraphReadiness',
           'GraphStatusReporter', 'STATUS_READER_QOS', 'STATUS_WRITER_QOS', 'endpoint_report',
           'foreign_producer_message', 'foreign_producers', 'missing_edges', 'own_edges_missing',
           'parse_report']

#: Relative: each namespace's graph has its own (/uav1/ghost/graph_status).
STATUS_TOPIC = relative_topic(GRAPH_STATUS_TOPIC)

#: Each node keeps its latest report for late subscribers.
STATUS_WRITER_QOS = QoSProfile(reliability=QoSReliabilityPolicy.RELIABLE,
                               durability=QoSDurabilityPolicy.TRANSIENT_LOCAL,
                               history=QoSHistoryPolicy.KEEP_LAST, depth=1)
#: A reader's history is shared by every node's reports: deep enough for all of them.
STATUS_READER_QOS = QoSProfile(reliability=QoSReliabilityPolicy.RELIABLE,
                               durability=QoSDurabilityPolicy.TRANSIENT_LOCAL,
                               history=QoSHistoryPolicy.KEEP_LAST, depth=1000)

# Endpoints every rclpy node has that say nothing about the Ghost graph (and the status topic
# itself, by its resolved name in each node's namespace).
_IGNORED = frozenset({'/parameter_events', '/rosout'})

#: At most one foreign-producer warning per topic in this many seconds.
FOREIGN_WARNING_PERIOD_S = 5.0


@dataclass(frozen=True)
class EndpointReport:
    """What one node has matched: per topic, readers (for its writers) or writers (its readers)."""

    node: str
    writers: Mapping[str, int]
    readers: Mapping[str, int]
    #: Per topic, subscriptions of the node that share another node's DDS reader (one
    #: process: ghost_nodes.intra_process); a writer matches that reader once for them all.
    shared: Mapping[str, int] = field(default_factory=dict)

    def to_json(self) -> str:
        """The wire form (sorted keys, so an unchanged report is an identical string)."""
        document: dict[str, Any] = {'node': self.node, 'writers': dict(self.writers),
                                    'readers': dict(self.readers)}
        if self.shared:
            document['shared'] = dict(self.shared)
        return json.dumps(document, sort_keys=True)


def _counts(raw: Any, field: str) -> dict[str, int]:
    if not isinstance(raw, dict) or not all(
            isinstance(k, str) and type(v) is int and v >= 0 for k, v in raw.items()):
        raise ValueError(f'{field} must map topic names to counts >= 0, got {raw!r}')
    return dict(raw)


def parse_report(text: str) -> EndpointReport:
    """Parse a report; ``ValueError`` names what is malformed."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f'graph status is not JSON: {err}') from None
    if not isinstance(data, dict) or not isinstance(data.get('node'), str):
        raise ValueError(f'graph status lacks a node name: {text[:120]!r}')
    return EndpointReport(node=data['node'], writers=_counts(data.get('writers'), 'writers'),
                          readers=_counts(data.get('readers'), 'readers'),
                          shared=_counts(data.get('shared', {}), 'shared'))


#: What a node's own readiness does not wait for: the graph's bookkeeping (each end of it
#: may be absent: no monitor, no other graph) and the inputs whose absence is no fault.
_NOT_AWAITED = (CONFIGURATION_TOPIC, LIFECYCLE_TOPIC, GRAPH_STATUS_TOPIC, DIAGNOSTICS_TOPIC)


def own_edges_missing(report: EndpointReport) -> list[str]:
    """A node's own endpoints not matched yet (empty: the node is ready, ghost_core.lifecycle).

    Every subscription has matched a writer (an optional input aside), every Ghost writer a
    reader (the next node, or the recorder).
    """
    def awaited(topic: str) -> bool:
        return not topic.endswith(_NOT_AWAITED)

    missing = [f'{topic}: no writer' for topic, count in sorted(report.readers.items())
               if count == 0 and awaited(topic)
               and not any(topic.endswith(optional) for optional in OPTIONAL_INPUTS)]
    missing += [f'{topic}: no reader' for topic, count in sorted(report.writers.items())
                if count == 0 and awaited(topic)]
    return missing


def endpoint_report(node: Any, ignored: frozenset[str] | set[str],
                    in_process: Callable[[], tuple[Mapping[str, int], Mapping[str, int],
                                                   Mapping[str, int]]] | None = None
                    ) -> EndpointReport:
    """``node``'s endpoints (less `ignored` topics) and their matched counts, now.

    ``in_process``: as ``GraphStatusReporter``'s (endpoints served in the process).
    """
    writers = {p.topic_name: p.get_subscription_count() for p in node.publishers
               if p.topic_name not in ignored}
    readers = {s.topic_name: s.get_publisher_count() for s in node.subscriptions
               if s.topic_name not in ignored}
    shared: Mapping[str, int] = {}
    if in_process is not None:
        # Endpoints served in the process (ghost_nodes.intra_process) are matched there.
        in_writers, in_readers, shared = in_process()
        for topic, count in in_writers.items():
            writers[topic] = writers.get(topic, 0) + count
        for topic, count in in_readers.items():
            readers[topic] = readers.get(topic, 0) + count
    return EndpointReport(node.get_fully_qualified_name(), writers, readers, dict(shared))


def missing_edges(expected_readers: Mapping[str, int],
                  reports: Iterable[EndpointReport]) -> dict[str, str]:
    """The topics not yet safe to publish on, each with the reason; empty when all are.

    ``expected_readers`` maps a topic to the number of readers the graph has on it. A topic is
    ready when (writer side) its writers together have matched at least that many readers,
    less the subscriptions that share one DDS reader (they are one reader to a writer), and
    (reader side) at least that many reporting readers have matched a writer.
    """
    reports = list(reports)
    missing: dict[str, str] = {}
    for topic, wanted in sorted(expected_readers.items()):
        matched_by_writers = sum(r.writers.get(topic, 0) for r in reports)
        readers_matched = sum(1 for r in reports if r.readers.get(topic, 0) > 0)
        dds_readers = wanted - sum(r.shared.get(topic, 0) for r in reports)
        problems = []
        if matched_by_writers < dds_readers:
            problems.append(f'writers matched {matched_by_writers}/{dds_readers} readers')
        if readers_matched < wanted:
            problems.append(f'{readers_matched}/{wanted} readers matched a writer')
        if problems:
            missing[topic] = ', '.join(problems)
    return missing


#: Topics with many producers by design: every graph (and any other stack) on the domain
#: publishes /diagnostics, which the recorder records; the nodes of a graph publish its
#: ghost/configuration and ghost/lifecycle records (each names its node), in any namespace.
_SHARED = frozenset({DIAGNOSTICS_TOPIC})
_SHARED_IN_NAMESPACE = (CONFIGURATION_TOPIC, LIFECYCLE_TOPIC)


def _shared(topic: str) -> bool:
    return topic in _SHARED or topic.endswith(_SHARED_IN_NAMESPACE)


def foreign_producers(readers: Mapping[str, int], expected_writers: int = 1) -> dict[str, int]:
    """The subscribed topics whose reader has matched more than ``expected_writers`` writers.

    /diagnostics, ghost/configuration and ghost/lifecycle are shared by design and never count.
    """
    return {topic: count for topic, count in sorted(readers.items())
            if count > expected_writers and not _shared(topic)}


def foreign_producer_message(topic: str, matched: int, expected: int,
                             publishers: Sequence[str]) -> str:
    """The warning for a topic with too many producers, naming the publishing nodes."""
    named = ', '.join(publishers) if publishers else 'not yet discovered'
    return (f'foreign producer on {topic}: {matched} publishers matched, expected {expected} '
            '(another Ghost graph on this ROS domain? see ROS_DOMAIN_ID); '
            f'publishers: {named}')


class GraphStatusReporter:
    """Publishes a node's endpoint report whenever it changes.

    Works with any rclpy node: the Ghost nodes get one from ``GhostNode``; the runner's
    monitor and the test feed create their own, so the scenario waits for them as well.
    The counts are polled: every ``fast_period_s`` from start-up and for ``settle_s`` after
    the last change (discovery), then every ``slow_period_s`` — a timer that fires ten times
    a second in every node would cost as much CPU as the cycles themselves at 10 Hz.

    On each poll it also checks every subscribed topic for more than ``expected_writers``
    matched writers (``None``: no check) and logs a warning naming them, at most once per topic
    every ``FOREIGN_WARNING_PERIOD_S``.

    ``in_process`` gives the (writers, readers) counts of the node's endpoints served inside
    its process (``ghost_nodes.intra_process``), which DDS does not see, and are added; and
    its subscriptions that share another node's DDS reader (reported as ``shared``).
    """

    def __init__(self, node: Any, fast_period_s: float = 0.1, slow_period_s: float = 2.0,
                 settle_s: float = 3.0, expected_writers: int | None = 1,
                 in_process: Callable[[], tuple[Mapping[str, int], Mapping[str, int],
                                                Mapping[str, int]]] | None = None) -> None:
        from rclpy.event_handler import PublisherEventCallbacks
        from std_msgs.msg import String

        self._node = node
        self._in_process = in_process
        self._string = String
        self._ignored = _IGNORED | {node.resolve_topic_name(STATUS_TOPIC)}
        # No QoS event handlers: each would be one more entity in every wait of the executor.
        self._publisher = node.create_publisher(
            String, STATUS_TOPIC, STATUS_WRITER_QOS,
            event_callbacks=PublisherEventCallbacks(use_default_callbacks=False))
        self._last = ''
        self._fast_ns = int(fast_period_s * 1e9)
        self._slow_ns = int(slow_period_s * 1e9)
        self._settle_ns = int(settle_s * 1e9)
        self._changed_at = time.monotonic_ns()
        self._expected_writers = expected_writers
        self._warned_at: dict[str, int] = {}
        self._timer = node.create_timer(fast_period_s, self.report)

    def current(self) -> EndpointReport:
        """The node's endpoints and their matched counts, now."""
        return endpoint_report(self._node, self._ignored, self._in_process)

    @property
    def period_ns(self) -> int:
        """The current polling period."""
        return int(self._timer.timer_period_ns)

    def report(self) -> None:
        """Publish the report if it differs from the last one published; adapt the period."""
        current = self.current()
        text = current.to_json()
        now = time.monotonic_ns()
        if self._expected_writers is not None:
            self._warn_foreign(current.readers, now)
        if text != self._last:
            self._publisher.publish(self._string(data=text))
            self._last = text
            self._changed_at = now
            if self._timer.timer_period_ns != self._fast_ns:
                self._timer.timer_period_ns = self._fast_ns
        elif (now - self._changed_at > self._settle_ns
              and self._timer.timer_period_ns != self._slow_ns):
            self._timer.timer_period_ns = self._slow_ns

    def _warn_foreign(self, readers: Mapping[str, int], now_ns: int) -> None:
        expected = self._expected_writers
        assert expected is not None
        period_ns = int(FOREIGN_WARNING_PERIOD_S * 1e9)
        for topic, matched in foreign_producers(readers, expected).items():
            last = self._warned_at.get(topic)
            if last is not None and now_ns - last < period_ns:
                continue
            self._warned_at[topic] = now_ns
            publishers = sorted(
                f'{info.node_namespace.rstrip("/")}/{info.node_name}'
                if info.node_name != '_NODE_NAME_UNKNOWN_' else '<unnamed>'
                for info in self._node.get_publishers_info_by_topic(topic))
            self._node.get_logger().warning(
                foreign_producer_message(topic, matched, expected, publishers))


class GraphReadiness:
    """Collects the graph's endpoint reports; ``missing()`` says which edges are not ready.

    ``reporter`` is the waiting node's own reporter (its writers count too; its own report is
    read directly rather than after a round trip). ``close()`` drops the subscription once the
    wait is over.
    """

    def __init__(self, node: Any, expected_readers: Mapping[str, int],
                 reporter: GraphStatusReporter | None = None) -> None:
        from std_msgs.msg import String

        self._node = node
        self._expected = dict(expected_readers)
        self._reporter = reporter
        self._reports: dict[str, EndpointReport] = {}
        self._subscription = node.create_subscription(String, STATUS_TOPIC,
                                                      self._on_status, STATUS_READER_QOS)

    def _on_status(self, msg: Any) -> None:
        try:
            report = parse_report(msg.data)
        except ValueError as err:
            self._node.get_logger().warning(f'ignoring a malformed graph status: {err}')
            return
        self._reports[report.node] = report

    def missing(self) -> dict[str, str]:
        """The edges not ready yet, with the reason (empty: publish away)."""
        reports = dict(self._reports)
        if self._reporter is not None:
            own = self._reporter.current()
            reports[own.node] = own
        return missing_edges(self._expected, reports.values())

    def close(self) -> None:
        """Stop listening to reports."""
        if self._subscription is not None:
            self._node.destroy_subscription(self._subscription)
            self._subscription = None
