"""In-process delivery between the Ghost nodes of one process (single-process mode).

rclcpp has intra-process communication; rclpy has none: two nodes in one Python process
still talk through DDS, and every hop pays rclpy's Python → C conversion, serialisation,
the middleware, deserialisation and the C → Python conversion back, on the one core the
process runs on. In ``ghost_agent`` (``ghost_nodes.agent_process``) this module does what
rclcpp's does:

* a subscription whose topic has a publisher in the process is served in the process: the
  publisher hands the message object itself to the subscription's callback. No DDS reader
  is created for it;
* the subscriptions of the process to one topic from outside it (the inputs), of one type and
  QoS, share one DDS reader: a message is taken and converted to Python once, then handed to
  each of them (three nodes read /state/nav), and what they derive from it alike
  (``IntraProcessBus.derive``: the belief the assessor and the predictor both read);
* a publisher publishes to DDS only when DDS has matched a reader (``ros2 bag record``, the
  recorder, ``ros2 topic echo``, a node in another process), and before the callbacks in the
  process run, so a recorder receives a message before what was computed from it. With no
  DDS reader, nothing is serialised. A reader in another process sees every message
  published after it matched, as with any volatile topic.

Delivery happens before ``publish()`` returns, breadth first and never re-entrantly: the
first publish of a callback runs the subscribers' callbacks in order, and what they publish
is queued and delivered by the same loop, after them. (rclpy's EventsExecutor has no guard
conditions, so the executor cannot be woken for it; and on the one core a single-process
graph has, running the next callback at once is the shortest path.) The graph is acyclic,
so a chain ends: raw → calibrated → decision → actuation.

So the topics, the messages and what a recorder writes are those of the multi-process graph.
What differs is on the topics a node of the process publishes:

* a publisher in another process on such a topic is not heard by the nodes of this process
  (two producers of one Ghost topic are a broken graph; the readiness reporter's
  foreign-producer warning stays on for the inputs, which come from outside);
* the subscriber gets the very object that was published (a Ghost node never modifies a
  message it received or sent), and with it the message dict and contract it was built
  from (``Memo``), so it neither converts it back to a dict nor validates it again: what a
  Ghost node built from a contract is valid, and ``hash_form`` of it is that dict (tested:
  ``test_intra_process``). A node still hashes what it received: that dict;
* nothing is dropped for a history depth; a pair whose QoS DDS would not match (a reliable
  reader of a best-effort writer, transient-local of volatile) or whose types differ is left
  to DDS, as before.

Subscriptions are registered while the nodes are built and connected by ``connect()`` once
all of them exist (a subscriber may be built before its publisher). One executor thread, so
no locks.
"""

from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from rclpy.node import Node
from rclpy.publisher import Publisher
from rclpy.qos import QoSDurabilityPolicy, QoSProfile, QoSReliabilityPolicy
from rclpy.subscription import Subscription

__all__ = ['GraphPublisher', 'IntraProcessBus', 'IntraProcessPublisher', 'Memo',
           'qos_compatible']

ResultT = TypeVar('ResultT')

#: What a message published in the process was built from: its message dict (the SPEC
#: section 4 form, which ``hash_form`` of the message gives back) and the contract that dict
#: was written from (which parsing the dict gives back).
Memo = tuple[Mapping[str, Any], object]


class GraphPublisher(Protocol):
    """What a node publishes with: rclpy's Publisher, or an IntraProcessPublisher."""

    @property
    def topic_name(self) -> str:
        """The resolved topic name."""

    def publish(self, msg: Any) -> None:
        """Send one message."""

    def get_subscription_count(self) -> int:
        """Readers matched."""


def qos_compatible(publisher: QoSProfile, subscription: QoSProfile) -> bool:
    """Whether DDS would match this writer QoS with this reader QoS (reliability, durability)."""
    if (subscription.reliability == QoSReliabilityPolicy.RELIABLE
            and publisher.reliability != QoSReliabilityPolicy.RELIABLE):
        return False
    return not (subscription.durability == QoSDurabilityPolicy.TRANSIENT_LOCAL
                and publisher.durability != QoSDurabilityPolicy.TRANSIENT_LOCAL)


class IntraProcessPublisher:
    """A node's publisher: over DDS if a reader is matched, then to the process's subscribers."""

    def __init__(self, bus: 'IntraProcessBus', node: Node, msg_type: type[Any], dds: Publisher,
                 qos: QoSProfile) -> None:
        self.node = node
        self.msg_type = msg_type
        self.dds = dds
        self.qos = qos
        self.callbacks: list[Callable[[Any], None]] = []
        self._bus = bus

    @property
    def topic_name(self) -> str:
        """The resolved topic name (after namespace and remaps)."""
        return str(self.dds.topic_name)

    def publish(self, msg: Any, memo: Memo | None = None) -> None:
        """Send ``msg`` to matched DDS readers, then deliver it in the process (see module).

        ``memo``: the message dict ``msg`` was built from and the contract that dict was
        written from; a subscriber in the process reads them back (``IntraProcessBus.memo``)
        instead of converting and validating the message again.
        """
        if self.dds.get_subscription_count():
            self.dds.publish(msg)
        if self.callbacks:
            self._bus.deliver(self.callbacks, msg, memo)

    def get_subscription_count(self) -> int:
        """Readers of this publisher: those DDS matched and those in the process."""
        return int(self.dds.get_subscription_count()) + len(self.callbacks)


def _constant(value: int) -> Callable[[], int]:
    return lambda: value


@dataclass
class _Pending:
    node: Node
    msg_type: type[Any]
    topic: str           # resolved
    callback: Callable[[Any], None]
    qos: QoSProfile


class IntraProcessBus:
    """The publishers and subscriptions of one process's Ghost nodes, by resolved topic."""

    def __init__(self) -> None:
        self._publishers: dict[str, list[tuple[type[Any], IntraProcessPublisher]]] = {}
        self._pending: list[_Pending] = []
        # id(node) -> (topic, matched publishers) of each of its subscriptions not in
        # node.subscriptions: served in the process, or by a DDS reader another node owns.
        self._readers: dict[int, list[tuple[str, Callable[[], int]]]] = {}
        # Per node, per topic: its subscriptions served by another node's DDS reader.
        self._sharing: dict[int, dict[str, int]] = {}
        self._readers_shared: dict[tuple[Any, ...], Subscription] = {}
        self._connected = False
        self._queue: deque[tuple[Callable[[Any], None], Any, Memo | None]] = deque()
        self._delivering = False
        self._memo_of: Any = None       # the message being delivered, and its memo
        self._memo: Memo | None = None
        self._derived: dict[Callable[[Any], Any], tuple[Any, Any]] = {}

    def create_publisher(self, node: Node, msg_type: type[Any], topic: str,
                         qos: QoSProfile) -> IntraProcessPublisher:
        """A publisher of ``node`` on ``topic`` (resolved in the node's namespace and remaps)."""
        if self._connected:
            raise RuntimeError('IntraProcessBus: publishers must be created before connect()')
        publisher = IntraProcessPublisher(
            self, node, msg_type, node.create_publisher(msg_type, topic, qos), qos)
        self._publishers.setdefault(publisher.topic_name, []).append((msg_type, publisher))
        return publisher

    def create_subscription(self, node: Node, msg_type: type[Any], topic: str,
                            callback: Callable[[Any], None], qos: QoSProfile) -> None:
        """A subscription of ``node``, connected in the process or over DDS by ``connect()``."""
        if self._connected:
            raise RuntimeError('IntraProcessBus: subscriptions must be created before connect()')
        self._pending.append(_Pending(node, msg_type, node.resolve_topic_name(topic), callback,
                                      qos))

    def connect(self) -> None:
        """Serve each subscription in the process if it can be, else over DDS (see module)."""
        shared: dict[tuple[Any, ...], list[Callable[[Any], None]]] = {}
        for pending in self._pending:
            publishers = [publisher for msg_type, publisher in
                          self._publishers.get(pending.topic, ())
                          if msg_type is pending.msg_type
                          and qos_compatible(publisher.qos, pending.qos)]
            counts = self._readers.setdefault(id(pending.node), [])
            if publishers:
                for publisher in publishers:
                    publisher.callbacks.append(pending.callback)
                counts.append((pending.topic, _constant(len(publishers))))
                continue
            qos = pending.qos
            key = (pending.topic, pending.msg_type, qos.reliability, qos.durability,
                   qos.history, qos.depth)
            callbacks = shared.get(key)
            if callbacks is not None:
                # One DDS reader per topic and QoS in the process: a message is taken and
                # converted to Python once, then handed to each subscriber.
                callbacks.append(pending.callback)
                counts.append((pending.topic, self._readers_shared[key].get_publisher_count))
                sharing = self._sharing.setdefault(id(pending.node), {})
                sharing[pending.topic] = sharing.get(pending.topic, 0) + 1
                continue
            callbacks = shared[key] = [pending.callback]
            self._readers_shared[key] = pending.node.create_subscription(
                pending.msg_type, pending.topic, self._deliverer(callbacks), qos)
        self._pending.clear()
        self._connected = True

    def _deliverer(self, callbacks: list[Callable[[Any], None]]) -> Callable[[Any], None]:
        def deliver(msg: Any) -> None:
            self.deliver(callbacks, msg, None)
        return deliver

    def deliver(self, callbacks: list[Callable[[Any], None]], msg: Any,
                memo: Memo | None) -> None:
        """Run each callback on ``msg``: now, or after the callbacks already being delivered."""
        queue = self._queue
        queue.extend((callback, msg, memo) for callback in callbacks)
        if self._delivering:
            return
        self._delivering = True
        try:
            while queue:
                callback, item, self._memo = queue.popleft()
                self._memo_of = item
                callback(item)
        finally:
            queue.clear()   # not empty only when a callback raised: the process is stopping
            self._delivering = False
            self._memo_of = self._memo = None

    def derive(self, msg: Any, function: Callable[[Any], ResultT]) -> ResultT:
        """``function(msg)``, computed once for the subscribers a message is handed to.

        The last message and result are kept per function, and a result is reused only for
        that very message object. ``function`` must be pure.
        """
        last = self._derived.get(function)
        if last is not None and last[0] is msg:
            result: ResultT = last[1]
            return result
        result = function(msg)
        self._derived[function] = (msg, result)
        return result

    def memo(self, msg: Any) -> Memo | None:
        """The memo ``msg`` was published with, if it is the message being delivered now."""
        return self._memo if msg is self._memo_of else None

    def readers_in_process(self, node: Node) -> dict[str, int]:
        """Per topic of ``node`` with no DDS reader of its own, the publishers it has matched.

        Those in the process, or those of the DDS reader it shares with another node.
        """
        counts: dict[str, int] = {}
        for topic, matched in self._readers.get(id(node), ()):
            counts[topic] = counts.get(topic, 0) + matched()
        return counts

    def shared_readers(self, node: Node) -> dict[str, int]:
        """Per topic, ``node``'s subscriptions that share another node's DDS reader.

        A writer outside the process matches that reader once for all of them.
        """
        return dict(self._sharing.get(id(node), {}))

    def writers_in_process(self, node: Node) -> dict[str, int]:
        """Per topic ``node`` publishes on, how many subscriptions of the process it serves."""
        counts: dict[str, int] = {}
        for topic, publishers in self._publishers.items():
            for _msg_type, publisher in publishers:
                if publisher.node is node:
                    counts[topic] = counts.get(topic, 0) + len(publisher.callbacks)
        return counts
