"""Closed-loop benchmark: the real ghost node graph vs a bare rclpy relay floor, per cycle rate.

For each rate, the floor graph (bench/floor_relay.py, one process per hop) and then the ghost
graph (ghost.bringup.closed_loop_graph without scenario and recorder, started with
GraphProcesses) are fed the same consistent-estimator inputs by the driver process
(bench/loop_driver.py) for a fixed number of cycles. Per graph: cycles lost (a belief without
actuation), belief-publication -> actuation-reception latency (p50, p99, max), CPU per
process over the measured window; per rate: the ghost/floor latency ratios.

    python bench/closed_loop.py --rates 10 100 --cycles 200 --json /tmp/loop.json
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
import json
from pathlib import Path
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, IO, Protocol

from benchlib import (
    BENCH_DIR,
    bench_ros_env,
    CONFIG_DIR,
    machine_info,
    percentile,
    ProcessSet,
    write_json,
)
import psutil

from ghost.bringup import closed_loop_graph, GraphOptions, NodeSpec, Source
from ghost.launcher import GraphProcesses, stop_groups
from ghost_core.graph import INPUT_TOPICS

__all__ = ['DEFAULT_CYCLES', 'DEFAULT_RATES', 'GRAPHS', 'GhostGraph', 'LoopGraph', 'SYSTEMS',
           'ghost_specs', 'run_closed_loop', 'run_one', 'main']

#: The issue's rates (p50/p99 at 50-300 Hz for the floor and Ghost) and single-process 500 Hz.
DEFAULT_RATES = (50, 100, 200, 300, 500)
DEFAULT_CYCLES = 500


@dataclass(frozen=True)
class GhostGraph:
    """How one benchmarked ghost graph runs (ghost_run's options)."""

    #: The agent's nodes in one ghost_agent process (``--single-process``).
    single_process: bool
    #: What the agent's nodes spin (``--executor``).
    executor: str
    #: Between the nodes of ghost_agent: 'in_process' or 'dds' (``--delivery``).
    delivery: str = 'in_process'
    #: Ghost's recorder (its own process) records every topic, as a real run does: every
    #: topic then has a DDS reader, so every message is serialised too.
    recorded: bool = False


#: floor: bare relays (bench/floor_relay.py), one process per hop. ghost / ghost_mp_events:
#: one process per node, on rclpy's SingleThreadedExecutor / EventsExecutor. ghost_single /
#: ghost_events: the six nodes in one ghost_agent process on the SingleThreadedExecutor /
#: EventsExecutor, with in-process delivery between them (the default); ghost_events_dds: as
#: ghost_events, every hop through DDS (what in-process delivery saves);
#: ghost_events_recorded: as ghost_events, with the recorder.
GRAPHS: Mapping[str, GhostGraph] = {
    'ghost': GhostGraph(single_process=False, executor='single_threaded'),
    'ghost_mp_events': GhostGraph(single_process=False, executor='events'),
    'ghost_single': GhostGraph(single_process=True, executor='single_threaded'),
    'ghost_events': GhostGraph(single_process=True, executor='events'),
    'ghost_events_dds': GhostGraph(single_process=True, executor='events', delivery='dds'),
    'ghost_events_recorded': GhostGraph(single_process=True, executor='events', recorded=True),
}
SYSTEMS = ('floor', *GRAPHS)
GHOST_SYSTEMS = SYSTEMS[1:]
ROLES = ('self_assessor', 'forward_predictor', 'outcome_evaluator', 'calibrator',
         'decision_policy', 'action_emitter')


def ghost_specs(period_s: float, bag_path: Path | None = None) -> list[NodeSpec]:
    """The six processing nodes, with the period the driver stamps at (and the recorder)."""
    overrides: dict[str, Mapping[str, object]] = {
        name: {'period_s': period_s} for name in ('forward_predictor', 'outcome_evaluator')}
    # Reliable inputs, like the floor's relays: the driver publishes reliable, and the
    # benchmark counts every lost cycle (the default best_effort could drop some at 1 kHz).
    # graph_status: the driver waits for the nodes' reports.
    return closed_loop_graph(CONFIG_DIR, GraphOptions(
        source=Source.EXTERNAL, scenario='nominal', record=bag_path is not None,
        bag_path=str(bag_path) if bag_path is not None else '', overrides=overrides,
        settings={'input_qos': 'reliable'}, monitor=False, graph_status=True))


class _Graph:
    """Start/stop one graph (ghost or floor) and name its processes' pids."""

    def __init__(self, system: str, period_ns: int, log_dir: Path, env: dict[str, str],
                 floor_work_us: float = 0.0) -> None:
        self.system = system
        self._floor_work_us = floor_work_us
        if system in GRAPHS:
            graph = GRAPHS[system]
            bag = log_dir / 'bag' if graph.recorded else None
            self._ghost: GraphProcesses | None = GraphProcesses(
                ghost_specs(period_ns / 1e9, bag), log_dir, env,
                single_process=graph.single_process, executor=graph.executor,
                delivery=graph.delivery)
            self._floor: ProcessSet | None = None
        else:
            self._ghost = None
            self._floor = ProcessSet(log_dir, env)
        self._period_ns = period_ns

    def start(self) -> None:
        if self._ghost is not None:
            self._ghost.start()
            return
        assert self._floor is not None
        relay = str(BENCH_DIR / 'floor_relay.py')
        for role in ROLES:
            self._floor.start(role, [sys.executable, relay, '--role', role,
                                     '--period-ns', str(self._period_ns),
                                     '--work-us', str(self._floor_work_us)])

    def pids(self) -> dict[str, int]:
        group = self._ghost if self._ghost is not None else self._floor
        assert group is not None
        return {name: proc.pid for name, proc in group.procs.items()}

    def failed(self) -> dict[str, int]:
        group = self._ghost if self._ghost is not None else self._floor
        assert group is not None
        return group.failed()

    def stop(self) -> None:
        if self._ghost is not None:
            self._ghost.stop()
        elif self._floor is not None:
            self._floor.stop()


def _cpu_seconds(pid: int) -> float:
    """CPU time (user + system) of a process and all its descendants so far."""
    try:
        proc = psutil.Process(pid)
        procs = [proc, *proc.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0.0
    total = 0.0
    for p in procs:
        try:
            times = p.cpu_times()
            total += times.user + times.system
        except psutil.NoSuchProcess:
            pass
    return total


def _snapshot(pids: Mapping[str, int]) -> dict[str, float]:
    return {name: _cpu_seconds(pid) for name, pid in pids.items()}


def _ms(ns: float | None) -> float | None:
    return None if ns is None else ns / 1e6


def summarize(raw: Mapping[str, Any], cpu: Mapping[str, float], window_s: float) -> dict[str, Any]:
    """The statistics of one run from the driver's per-cycle times and the CPU deltas."""
    published = raw['published_ns']
    received = raw['received_ns']
    latencies = [rx - tx for tx, rx in zip(published, received, strict=True) if rx is not None]
    lost = sum(1 for rx in received if rx is None)
    span_s = (published[-1] - published[0]) / 1e9 if len(published) > 1 else 0.0
    cycles = len(published)
    # Cycles served per second, first belief to last actuation: below the publication rate
    # the graph is saturated and its backlog (latency) grows for as long as the run lasts.
    arrived = [rx for rx in received if rx is not None]
    served_s = (max(arrived) - published[0]) / 1e9 if arrived else 0.0
    served_hz = (len(arrived) - 1) / served_s if len(arrived) > 1 and served_s > 0 else None
    achieved_hz = (cycles - 1) / span_s if span_s > 0 else None
    return {
        'cycles': cycles,
        'lost': lost,
        'duplicates': raw.get('duplicates', 0),
        'latency_ms': {
            'p50': _ms(percentile(latencies, 50)),
            'p90': _ms(percentile(latencies, 90)),
            'p99': _ms(percentile(latencies, 99)),
            'max': _ms(max(latencies) if latencies else None),
            'mean': _ms(sum(latencies) / len(latencies) if latencies else None),
        },
        'achieved_rate_hz': achieved_hz,
        'served_rate_hz': served_hz,
        'keeps_up': None if served_hz is None or achieved_hz is None
        else served_hz >= 0.95 * achieved_hz,
        'publish_late_ms': {'p50': _ms(percentile(raw['publish_late_ns'], 50)),
                            'p99': _ms(percentile(raw['publish_late_ns'], 99))},
        'window_s': window_s,
        'cpu_s': dict(cpu),
        'cpu_percent': {name: 100.0 * s / window_s if window_s > 0 else None
                        for name, s in cpu.items()},
        'cpu_us_per_cycle': {name: 1e6 * s / cycles if cycles else None
                             for name, s in cpu.items()},
        'cpu_total_nodes_s': sum(s for name, s in cpu.items() if name != 'driver'),
    }


class LoopGraph(Protocol):
    """What run_one drives: a graph's processes (``_Graph``, or bench/hop_profile.py's)."""

    def start(self) -> None:
        """Start every process."""

    def pids(self) -> dict[str, int]:
        """The pid of each process, by name."""

    def failed(self) -> dict[str, int]:
        """Processes that have already exited, with their exit codes."""

    def stop(self) -> None:
        """Stop every process."""


def run_one(system: str, rate_hz: float, cycles: int, work_dir: Path, env: dict[str, str],
            log: Callable[[str], None], floor_work_us: float = 0.0,
            graph_factory: Callable[[int, Path], LoopGraph] | None = None) -> dict[str, Any]:
    """Run one graph at one rate; return its statistics (or an 'error').

    ``graph_factory(period_ns, log_dir)``: the graph to run instead of ``system``'s own
    (``system`` then only names it).
    """
    period_ns = round(1e9 / rate_hz)
    extra = f'-work{floor_work_us:g}us' if floor_work_us and system == 'floor' else ''
    log_dir = work_dir / f'{system}-{rate_hz:g}hz{extra}'
    log_dir.mkdir(parents=True, exist_ok=True)
    out = log_dir / 'driver.json'
    # The driver waits for a reader of each input it publishes and a publisher of
    # /actuations; its warm-up cycles (one must come back as an actuation, which takes every
    # node) prove the rest. Not every reader is a DDS reader of its own: in single-process
    # mode the nodes share one reader of each input, and are served in the process between.
    expected = dict.fromkeys(INPUT_TOPICS, 1)
    graph = (_Graph(system, period_ns, log_dir, env, floor_work_us) if graph_factory is None
             else graph_factory(period_ns, log_dir))
    argv = [sys.executable, str(BENCH_DIR / 'loop_driver.py'), '--rate-hz', f'{rate_hz:g}',
            '--cycles', str(cycles), '--out', str(out),
            '--expect', *[f'{topic}={n}' for topic, n in sorted(expected.items())]]
    graph.start()
    driver: subprocess.Popen[str] | None = None
    marks: dict[str, tuple[float, dict[str, float]]] = {}
    try:
        with (log_dir / 'driver.log').open('w') as driver_log:
            driver = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE,  # noqa: S603
                                      stderr=driver_log, text=True, start_new_session=True)
        pids = {**graph.pids(), 'driver': driver.pid}

        def watch(stream: IO[str]) -> None:
            # CPU snapshots are taken the moment the driver announces the measured window.
            for line in stream:
                word = line.strip()
                if word in ('measure-start', 'measure-end'):
                    marks[word] = (time.monotonic(), _snapshot(pids))

        assert driver.stdout is not None
        watcher = threading.Thread(target=watch, args=(driver.stdout,), daemon=True)
        watcher.start()
        try:
            code: int | None = driver.wait(timeout=90.0 + cycles / rate_hz * 3)
        except subprocess.TimeoutExpired:
            code = None
        watcher.join(timeout=5.0)
        dead = graph.failed()
        raw = json.loads(out.read_text()) if out.is_file() else {}
        if 'error' in raw or 'published_ns' not in raw or len(marks) != 2:
            detail = (log_dir / 'driver.log').read_text(errors='replace').strip().splitlines()
            return {'error': raw.get('error') or f'driver exit {code}: '
                             f'{detail[-1] if detail else "no output"}'
                             + (f'; processes died: {dead}' if dead else ''),
                    'logs': str(log_dir)}
        (t0, before), (t1, after) = marks['measure-start'], marks['measure-end']
        cpu = {name: after.get(name, 0.0) - before.get(name, 0.0) for name in pids}
        stats = summarize(raw, cpu, t1 - t0)
        stats['warmup_cycles'] = raw.get('warmup_cycles')
        if code != 0:
            # The results were written; the driver failed while shutting down.
            stats['driver_exit'] = code
        if dead:
            stats['processes_died'] = dead
        log(f'  {system:12} {rate_hz:6g} Hz: lost {stats["lost"]}/{cycles}, '
            f'p50 {_fmt(stats["latency_ms"]["p50"])} ms, p99 {_fmt(stats["latency_ms"]["p99"])}'
            f' ms, max {_fmt(stats["latency_ms"]["max"])} ms, '
            f'CPU {stats["cpu_total_nodes_s"]:.2f} s')
        return stats
    finally:
        if driver is not None:
            stop_groups([driver], signal.SIGKILL, 5.0)
        graph.stop()


def _fmt(value: float | None) -> str:
    return '-' if value is None else f'{value:.2f}'


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b <= 0 else a / b


def run_closed_loop(rates: Sequence[float], cycles: int, work_dir: Path,
                    domain_id: int | None = None,
                    log: Callable[[str], None] = print,
                    floor_work_us: float = 0.0,
                    systems: Sequence[str] = SYSTEMS) -> dict[str, Any]:
    """Run floor and ghost at every rate; return the closed-loop section of the results."""
    env = bench_ros_env(domain_id)
    rows = []
    for rate in rates:
        row: dict[str, Any] = {'rate_hz': rate}
        for system in SYSTEMS:
            row[system] = (run_one(system, rate, cycles, work_dir, env, log, floor_work_us)
                           if system in systems else {'error': 'not run'})
        floor = row['floor']
        row['ratios'] = {}
        for system in GHOST_SYSTEMS:
            ghost = row[system]
            if 'error' in ghost or 'error' in floor:
                continue
            ratios = {q: _ratio(ghost['latency_ms'][q], floor['latency_ms'][q])
                      for q in ('p50', 'p99', 'max')}
            ratios['cpu'] = _ratio(ghost['cpu_total_nodes_s'], floor['cpu_total_nodes_s'])
            row['ratios'][system] = ratios
        # The multi-process graph's ratios, under their historical names too.
        for q, value in row['ratios'].get('ghost', {}).items():
            row[f'ratio_{q}'] = value
        rows.append(row)
    return {
        'config': {'rates_hz': list(rates), 'cycles_per_rate': cycles,
                   'floor_work_us': floor_work_us,
                   'ros_domain_id': int(env['ROS_DOMAIN_ID']),
                   'rmw': env.get('RMW_IMPLEMENTATION')},
        'rates': rows,
        'highest_zero_loss_rate_hz': {
            system: _highest(rows, system, lambda stats: stats['lost'] == 0)
            for system in SYSTEMS},
        'highest_sustained_rate_hz': {
            system: _highest(rows, system, lambda stats: bool(stats['keeps_up']))
            for system in SYSTEMS},
    }


def _highest(rows: Sequence[Mapping[str, Any]], system: str,
             good: Callable[[Mapping[str, Any]], bool]) -> float | None:
    """The highest rate such that it and every lower rate are good (e.g. lost no cycle)."""
    best = None
    for row in sorted(rows, key=lambda r: r['rate_hz']):
        stats = row[system]
        if 'error' in stats or not good(stats):
            break
        best = row['rate_hz']
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--rates', type=float, nargs='+', default=list(DEFAULT_RATES))
    parser.add_argument('--cycles', type=int, default=DEFAULT_CYCLES)
    parser.add_argument('--domain-id', type=int, default=None,
                        help='ROS_DOMAIN_ID (default: $ROS_DOMAIN_ID, else 150-199 by pid)')
    parser.add_argument('--work-dir', type=Path, default=None,
                        help='where node logs go (default: a temporary folder)')
    parser.add_argument('--json', type=Path, default=None, help='write the results here')
    parser.add_argument('--floor-work-us', type=float, default=0.0,
                        help='experiment: busy CPU time each floor hop adds per message '
                             '(how latency grows with per-hop processing; default 0)')
    parser.add_argument('--systems', nargs='+', choices=SYSTEMS, default=list(SYSTEMS),
                        help='which graphs to run (default all: floor; ghost and '
                             'ghost_mp_events (a process per node); ghost_single, ghost_events, '
                             'ghost_events_dds and ghost_events_recorded (single-process mode))')
    args = parser.parse_args(argv)
    from report import closed_loop_table

    with tempfile.TemporaryDirectory(prefix='ghost-bench-') as tmp:
        work = args.work_dir or Path(tmp)
        result = run_closed_loop(args.rates, args.cycles, work, args.domain_id,
                                 floor_work_us=args.floor_work_us, systems=args.systems)
    document = {'machine': machine_info(), 'closed_loop': result}
    print(closed_loop_table(result))
    if args.json is not None:
        write_json(args.json, document)
    failed = [row for row in result['rates'] for s in args.systems if 'error' in row[s]]
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
