"""The closed-loop benchmark's driver process: feeds a graph at a fixed rate, times each cycle.

It plays the estimator and the position fix (a consistent estimator: ghost_core's `nominal`
scenario at the benchmark's period) on /state/nav and /observations, and listens on
/actuations. For every measured cycle it records when the belief was published and when the
actuation with that cycle stamp arrived (one monotonic clock, one process).

Protocol with the parent (one line each on stdout): ``ready`` once the graph is connected and
warmed up, ``measure-start`` just before the first measured cycle, ``measure-end`` once every
actuation arrived (or the drain timed out); the per-cycle times go to ``--out`` as JSON.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
import sys
import threading
import time
from typing import Any

from geometry_msgs.msg import PoseWithCovarianceStamped
from nav_msgs.msg import Odometry
import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor

from ghost_core.scenarios import generate_scenario
from ghost_interfaces.msg import ActionEmission
from ghost_nodes.qos import GHOST_QOS
from ghost_nodes.scenario_messages import cycle_messages

__all__ = ['main']

#: Warm-up cycles are published this far apart (wall clock), whatever the benchmarked rate.
WARMUP_SPACING_S = 0.02
#: Most warm-up rounds before giving up on a graph that never answers.
WARMUP_ROUNDS = 10


def _stamp_ns(msg: Any) -> int:
    return int(msg.header.stamp.sec) * 1_000_000_000 + int(msg.header.stamp.nanosec)


class Driver:
    """Publishers, the /actuations subscription, and the reception times it records."""

    def __init__(self, node: Any) -> None:
        self.node = node
        self.state_pub = node.create_publisher(Odometry, '/state/nav', GHOST_QOS)
        self.obs_pub = node.create_publisher(PoseWithCovarianceStamped, '/observations',
                                             GHOST_QOS)
        self.received: dict[int, int] = {}
        self.duplicates = 0
        self.last_rx_ns = 0
        self._lock = threading.Lock()
        node.create_subscription(ActionEmission, '/actuations', self._on_actuation, GHOST_QOS)

    def _on_actuation(self, msg: ActionEmission) -> None:
        now = time.monotonic_ns()
        stamp = _stamp_ns(msg)
        with self._lock:
            if stamp in self.received:
                self.duplicates += 1
            else:
                self.received[stamp] = now
            self.last_rx_ns = now

    def publish(self, odom: Odometry, obs: PoseWithCovarianceStamped | None) -> int:
        """Publish one cycle, the fix first as the scenario node does.

        Returns the belief's publication time.
        """
        if obs is not None:
            self.obs_pub.publish(obs)
        published = time.monotonic_ns()
        self.state_pub.publish(odom)
        return published

    def has(self, stamp_ns: int) -> bool:
        with self._lock:
            return stamp_ns in self.received

    def count(self, stamps: list[int]) -> int:
        with self._lock:
            return sum(1 for s in stamps if s in self.received)

    def reception(self, stamps: list[int]) -> tuple[list[int | None], int]:
        """Reception time of each stamp (None: never came) and the duplicates seen."""
        with self._lock:
            return [self.received.get(s) for s in stamps], self.duplicates


def _wait_for_graph(node: Any, expected: dict[str, int], timeout_s: float) -> dict[str, int]:
    """Wait until every topic has its subscribers and /actuations a publisher.

    Returns what is still missing (empty when connected).
    """
    deadline = time.monotonic() + timeout_s
    while True:
        missing = {t: n for t, n in expected.items() if node.count_subscribers(t) < n}
        if node.count_publishers('/actuations') < 1:
            missing['/actuations (publisher)'] = 1
        if not missing or time.monotonic() > deadline:
            return missing
        time.sleep(0.05)


def _parse_expected(items: list[str]) -> dict[str, int]:
    expected = {}
    for item in items:
        topic, _, count = item.rpartition('=')
        expected[topic] = int(count)
    return expected


def _say(line: str) -> None:
    print(line, flush=True)


def run(args: argparse.Namespace) -> dict[str, Any]:
    period_ns = round(1e9 / args.rate_hz)
    total = args.cycles + args.warmup * WARMUP_ROUNDS
    scenario = generate_scenario('nominal', cycles=total, period_ns=period_ns)
    cycles = [(c.stamp_ns, *cycle_messages(c)) for c in scenario.cycles]
    node = rclpy.create_node('bench_driver')
    driver = Driver(node)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    stop = threading.Event()
    spinner = threading.Thread(target=_spin, args=(executor, stop), daemon=True)
    spinner.start()
    result: dict[str, Any] = {'rate_hz': args.rate_hz, 'period_ns': period_ns,
                              'cycles': args.cycles}
    try:
        missing = _wait_for_graph(node, _parse_expected(args.expect), args.graph_timeout)
        if missing:
            result['error'] = f'graph not connected after {args.graph_timeout} s: {missing}'
            return result
        # Warm-up: a few slow cycles until one makes it all the way round, so that every
        # writer has matched every reader before the first measured cycle.
        nxt = 0
        for _round in range(WARMUP_ROUNDS):
            for _ in range(args.warmup):
                stamp, odom, obs = cycles[nxt]
                driver.publish(odom, obs)
                nxt += 1
                time.sleep(WARMUP_SPACING_S)
            deadline = time.monotonic() + 5.0
            while not driver.has(stamp) and time.monotonic() < deadline:
                time.sleep(0.01)
            if driver.has(stamp):
                break
        else:
            result['error'] = 'the graph never answered the warm-up cycles'
            return result
        result['warmup_cycles'] = nxt
        time.sleep(0.5)
        _say('ready')
        measured = cycles[nxt:nxt + args.cycles]
        stamps = [c[0] for c in measured]
        published: list[int] = []
        late: list[int] = []
        _say('measure-start')
        start = time.monotonic_ns() + 1_000_000
        for index, (_stamp, odom, obs) in enumerate(measured):
            due = start + index * period_ns
            delay = due - time.monotonic_ns()
            if delay > 0:
                time.sleep(delay / 1e9)
            t = driver.publish(odom, obs)
            published.append(t)
            late.append(max(0, t - due))
        # Drain: until every actuation is in, or none has come for drain_idle seconds.
        last_publish = published[-1]
        while driver.count(stamps) < len(stamps):
            now = time.monotonic_ns()
            idle_since = max(last_publish, driver.last_rx_ns)
            if now - idle_since > args.drain_idle * 1e9:
                break
            time.sleep(0.005)
        _say('measure-end')
        received, result['duplicates'] = driver.reception(stamps)
        result.update({
            'stamps_ns': stamps,
            'published_ns': published,
            'received_ns': received,
            'publish_late_ns': late,
        })
        return result
    finally:
        # Stop the receiving thread before tearing anything down under it.
        stop.set()
        spinner.join(timeout=5.0)
        executor.shutdown(timeout_sec=1.0)
        node.destroy_node()


def _spin(executor: SingleThreadedExecutor, stop: threading.Event) -> None:
    """Receive actuations until told to stop (short waits, so that it stops promptly)."""
    try:
        while not stop.is_set():
            executor.spin_once(timeout_sec=0.05)
    except (ExternalShutdownException, RuntimeError):
        pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--rate-hz', type=float, required=True)
    parser.add_argument('--cycles', type=int, required=True)
    parser.add_argument('--warmup', type=int, default=10, help='cycles per warm-up round')
    parser.add_argument('--expect', nargs='*', default=[],
                        help='topic=count: subscribers to wait for before starting')
    parser.add_argument('--graph-timeout', type=float, default=60.0)
    parser.add_argument('--drain-idle', type=float, default=3.0,
                        help='give up on missing actuations after this long without any')
    parser.add_argument('--out', type=Path, required=True)
    args = parser.parse_args(argv)
    # Short GIL switch interval: the publishing thread must not wait for the receiving one.
    sys.setswitchinterval(0.0005)
    rclpy.init()
    try:
        result = run(args)
        args.out.write_text(json.dumps(result) + '\n', encoding='utf-8')
    except KeyboardInterrupt:
        return 130
    finally:
        rclpy.try_shutdown()
    if 'error' in result:
        print(f'error: {result["error"]}', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
