"""Per-hop profile of the multi-process closed loop: where each node's CPU per cycle goes.

The multi-process ghost graph runs at 100 Hz with bench/closed_loop.py's machinery (the same
driver, nodes and parameters, one process per node), once per executor, every node process
under this script's profiling wrapper. Each node's CPU time per cycle is split into:

- take: the executor finding and taking a ready message: its wait set, the wait, its task
  machinery. With the EventsExecutor that is its C++ ``spin_once``, which also takes and
  deserialises the message in C++ (rclpy's part of *deserialise* is then in *take*);
- deserialise: rclpy's ``take_message`` (C take, deserialisation, the Python message; with the
  SingleThreadedExecutor: *rclpy* below) and Ghost's conversion of the received message into
  its contract: ``GhostNode.received`` (``hash_form``, then the ``ghost_core.wire`` parser,
  which validates) and ``ghost_core.ros_inputs.belief_sample`` for the inputs;
- callback: the node's judgement, the rest of its subscription callbacks;
- hash: ``ghost_core.hashing.content_address`` (canonical JSON and SHA-256);
- publish: ``GhostNode.publish_contract`` (``to_msg_dict``, the rclpy message, rclpy's
  publish: serialisation and the DDS write);
- other: every other callback (readiness reports, timers).

How: each node process is started as ``python bench/hop_profile.py --wrap OUT.json --
<node executable> --ros-args ...``. Before it runs the executable, the wrapper wraps the
functions above (and the executor's spinning, through
``ghost_nodes.node_base.executor_class``, and rclpy's subscription and timer callbacks) in
counters of the spinning thread's CPU time, each net of the counted calls inside it, and
writes the totals when the node exits after SIGINT. CPU time, not wall time: on two cores
the eight processes preempt each other, and a wall clock would also count the executor's
idle waits. A wrapped call costs about 1 us (two clock reads); cProfile would cost about 3x
the callbacks' own time, most in the many small calls of conversion and hashing, so it is
off unless ``--cprofile``, which adds each node's cProfile of its spinning (startup left out)
and its most expensive functions, at the price of inflated numbers. Only this benchmark
starts nodes so: the product has no profiling code path.

    python bench/hop_profile.py --cycles 1000 --json /tmp/hops.json
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
import functools
import json
from pathlib import Path
import runpy
import sys
import tempfile
import time
from typing import Any

__all__ = ['CATEGORIES', 'hop_table', 'profile_hops', 'main']

#: The columns of the split, in the order a message meets them.
CATEGORIES = ('take', 'deserialise', 'callback', 'hash', 'publish', 'other')
#: What the wrapper counts: the columns, with deserialise in its two parts.
_ACCOUNTS = ('take', 'rclpy', 'convert', 'callback', 'hash', 'publish', 'other')
ROLES = ('self_assessor', 'forward_predictor', 'outcome_evaluator', 'calibrator',
         'decision_policy', 'action_emitter')
EXECUTORS = ('single_threaded', 'events')


class _Accounts:
    """CPU nanoseconds of the spinning thread per account, each net of counted calls inside."""

    def __init__(self) -> None:
        self.ns = dict.fromkeys(_ACCOUNTS, 0)
        self.calls = dict.fromkeys(_ACCOUNTS, 0)
        self._open: list[list[int]] = []  # per counted call in progress: [start, inner ns]

    def counted(self, account: str, function: Callable[..., Any]) -> Callable[..., Any]:
        """``function``, its CPU time (less that of counted calls inside it) in ``account``."""
        clock = time.thread_time_ns
        ns, calls, stack = self.ns, self.calls, self._open

        @functools.wraps(function)
        def counted_call(*args: Any, **kwargs: Any) -> Any:
            frame = [clock(), 0]
            stack.append(frame)
            try:
                return function(*args, **kwargs)
            finally:
                stack.pop()
                spent = clock() - frame[0]
                ns[account] += spent - frame[1]
                calls[account] += 1
                if stack:
                    stack[-1][1] += spent
        return counted_call


class _CountedExecutor:
    """An rclpy executor whose spinning is counted (and profiled, with ``profiler``)."""

    def __init__(self, real: Any, accounts: _Accounts, profiler: Any = None) -> None:
        self._real = real
        for name in ('spin_once', 'spin_until_future_complete'):
            method = getattr(real, name)
            if profiler is not None:
                method = self._profiled(method, profiler)
            setattr(self, name, accounts.counted('take', method))

    @staticmethod
    def _profiled(method: Callable[..., Any], profiler: Any) -> Callable[..., Any]:
        def profiled(*args: Any, **kwargs: Any) -> Any:
            profiler.enable()
            try:
                return method(*args, **kwargs)
            finally:
                profiler.disable()
        return profiled

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


def _instrument(accounts: _Accounts, profiler: Any) -> None:
    """Count the functions of the split, before the node's modules bind them."""
    from ghost_core import hashing, ros_inputs

    hashing.content_address = accounts.counted(  # type: ignore[assignment]
        'hash', hashing.content_address)
    ros_inputs.belief_sample = accounts.counted(  # type: ignore[assignment]
        'convert', ros_inputs.belief_sample)
    from rclpy.executors import Executor
    from rclpy.node import Node

    from ghost_nodes import node_base

    node_base.GhostNode.received = accounts.counted(  # type: ignore[method-assign]
        'convert', node_base.GhostNode.received)
    node_base.GhostNode.publish_contract = accounts.counted(  # type: ignore[method-assign]
        'publish', node_base.GhostNode.publish_contract)
    Executor._take_subscription = accounts.counted(  # type: ignore[method-assign]
        'rclpy', Executor._take_subscription)
    create_subscription, create_timer = Node.create_subscription, Node.create_timer

    def counted_subscription(node: Any, msg_type: Any, topic: str, callback: Any,
                             *args: Any, **kwargs: Any) -> Any:
        # A node's own callbacks (ghost_nodes.nodes.*) are the hop; the rest is 'other'.
        own = getattr(callback, '__module__', '').startswith('ghost_nodes.nodes.')
        return create_subscription(node, msg_type, topic, accounts.counted(
            'callback' if own else 'other', callback), *args, **kwargs)

    def counted_timer(node: Any, period: float, callback: Any, *args: Any,
                      **kwargs: Any) -> Any:
        return create_timer(node, period, accounts.counted('other', callback), *args, **kwargs)

    Node.create_subscription = counted_subscription  # type: ignore[method-assign]
    Node.create_timer = counted_timer  # type: ignore[method-assign]
    executor_class = node_base.executor_class

    def counted_executor_class(name: str) -> Callable[[], Any]:
        return lambda: _CountedExecutor(executor_class(name)(), accounts, profiler)

    node_base.executor_class = counted_executor_class  # type: ignore[assignment]


def _wrap(out: Path, cprofile: Path | None, argv: Sequence[str]) -> int:
    """Run the node script ``argv[0]`` with ``argv``, counted; the accounts into ``out``."""
    import cProfile

    from ghost_nodes import node_base

    accounts = _Accounts()
    profiler = cProfile.Profile() if cprofile is not None else None
    _instrument(accounts, profiler)

    def write() -> None:
        out.write_text(json.dumps({'ns': accounts.ns, 'calls': accounts.calls}))
        if profiler is not None and cprofile is not None:
            profiler.dump_stats(str(cprofile))

    # A node leaves with os._exit once torn down (node_base._leave): no finally runs after.
    leave = node_base._leave
    node_base._leave = lambda code=0: (write(), leave(code))  # type: ignore[assignment,func-returns-value]
    sys.argv = list(argv)
    code: object = 0
    try:
        runpy.run_path(argv[0], run_name='__main__')
    except SystemExit as done:
        code = done.code
    finally:
        write()
    return code if isinstance(code, int) else (0 if code is None else 1)


class ProfiledGraph:
    """The six nodes of closed_loop.ghost_specs, each its own process, each counted."""

    def __init__(self, period_ns: int, log_dir: Path, env: Mapping[str, str],
                 executor: str, cprofile: bool = False) -> None:
        from benchlib import ProcessSet
        from closed_loop import ghost_specs

        from ghost.launcher import with_executor

        self._specs = with_executor(ghost_specs(period_ns / 1e9), executor)
        self._log_dir = log_dir
        self._procs = ProcessSet(log_dir, env)
        self._cprofile = cprofile
        self.accounts = {spec.name: log_dir / f'{spec.name}.hops.json' for spec in self._specs}

    def start(self) -> None:
        from ghost.bringup import overrides_yaml, ros_arguments
        from ghost.launcher import executable_path

        self._log_dir.mkdir(parents=True, exist_ok=True)
        for spec in self._specs:
            overrides = self._log_dir / f'{spec.name}.params.yaml'
            overrides.write_text(overrides_yaml(spec))
            profile = ['--cprofile', str(self._log_dir / f'{spec.name}.prof')] if (
                self._cprofile) else []
            self._procs.start(spec.name, [
                sys.executable, str(Path(__file__).resolve()), '--wrap',
                str(self.accounts[spec.name]), *profile, '--', executable_path(spec),
                *ros_arguments(spec, str(overrides))])

    def pids(self) -> dict[str, int]:
        return {name: proc.pid for name, proc in self._procs.procs.items()}

    def failed(self) -> dict[str, int]:
        return self._procs.failed()

    def stop(self) -> None:
        self._procs.stop(timeout_s=20.0)


def split(accounts: Mapping[str, Any], cycles: int) -> dict[str, float]:
    """A node's accounts as ``CATEGORIES`` in microseconds per cycle, with 'total', 'rclpy'."""
    per = 1e-3 / max(cycles, 1)
    ns = accounts['ns']
    result = {name: ns[name] * per for name in CATEGORIES if name in ns}
    result['deserialise'] = (ns['rclpy'] + ns['convert']) * per
    result['rclpy'] = ns['rclpy'] * per
    result['total'] = sum(ns.values()) * per
    return result


def top_functions(path: Path, cycles: int, top: int = 8) -> list[dict[str, Any]]:
    """The functions with the most own time in a node's cProfile of its spinning."""
    import pstats

    entries = pstats.Stats(str(path)).stats  # type: ignore[attr-defined]
    ranked = sorted(((tt, key) for key, (_cc, _nc, tt, _ct, _callers) in entries.items()),
                    reverse=True)[:top]
    return [{'function': _label(key), 'us_per_cycle': 1e6 * tt / max(cycles, 1)}
            for tt, key in ranked]


def _label(key: tuple[str, int, str]) -> str:
    """package.module.function of a profiler entry (or the C function's name)."""
    path, _line, name = key
    if path == '~':
        return name
    parts = path.replace('\\', '/').removesuffix('.py').split('/')
    for root in ('ghost_nodes', 'ghost_core', 'rclpy'):
        if root in parts[:-1]:
            index = len(parts) - 1 - parts[::-1].index(root)
            return '.'.join(parts[index:]) + f'.{name}'
    return f'{parts[-1]}.{name}'


def profile_hops(executors: Sequence[str], rate_hz: float, cycles: int, work_dir: Path,
                 domain_id: int | None = None, cprofile: bool = False,
                 log: Callable[[str], None] = print) -> dict[str, Any]:
    """Run the counted graph once per executor; per executor and node, the split per cycle."""
    from benchlib import bench_ros_env
    from closed_loop import run_one

    env = bench_ros_env(domain_id)
    result: dict[str, Any] = {'rate_hz': rate_hz, 'cycles': cycles, 'cprofile': cprofile,
                              'executors': {}}
    for executor in executors:
        graphs: list[ProfiledGraph] = []

        def factory(period_ns: int, log_dir: Path, executor: str = executor,
                    graphs: list[ProfiledGraph] = graphs) -> ProfiledGraph:
            graphs.append(ProfiledGraph(period_ns, log_dir, env, executor, cprofile))
            return graphs[-1]

        stats = run_one(f'hops_{executor}', rate_hz, cycles, work_dir, env, log,
                        graph_factory=factory)
        if 'error' in stats:
            result['executors'][executor] = {'error': stats['error']}
            continue
        # Every cycle the driver sent went through every node, warm-up included.
        processed = int(stats.get('warmup_cycles') or 0) + stats['cycles'] - stats['lost']
        nodes: dict[str, Any] = {}
        for role in ROLES:
            path = graphs[0].accounts[role]
            if not path.is_file():
                nodes[role] = {'error': f'no accounts written ({path})'}
                continue
            nodes[role] = split(json.loads(path.read_text()), processed)
            profile = path.with_name(f'{role}.prof')
            if cprofile and profile.is_file():
                nodes[role]['top'] = top_functions(profile, processed)
        result['executors'][executor] = {
            'cycles_processed': processed, 'lost': stats['lost'],
            'latency_ms': stats['latency_ms'], 'nodes': nodes}
    return result


def hop_table(result: Mapping[str, Any]) -> str:
    """Per executor, per node: us of CPU per cycle in each category, and the total."""
    lines = []
    for executor, run in result['executors'].items():
        lines.append(f'executor {executor}: us of CPU per cycle, spinning thread'
                     + (' (inflated by cProfile)' if result.get('cprofile') else ''))
        if 'error' in run:
            lines.append(f'  error: {run["error"]}')
            continue
        lines.append(f'  {"node":18}' + ''.join(f'{name:>12}' for name in CATEGORIES)
                     + f'{"total":>8}{"rclpy":>8}')
        for role in ROLES:
            node = run['nodes'][role]
            if 'error' in node:
                lines.append(f'  {role:18}  {node["error"]}')
                continue
            lines.append(f'  {role:18}' + ''.join(f'{node[name]:12.0f}' for name in CATEGORIES)
                         + f'{node["total"]:8.0f}{node["rclpy"]:8.0f}')
        lines.append('  rclpy: the C take and deserialisation within deserialise' + (
            '' if executor == 'single_threaded' else
            " (0 here: the EventsExecutor's C++ does it, within take)"))
    return '\n'.join(lines)


def main(argv: list[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else argv
    if args_in[:1] == ['--wrap']:
        # A node process of the benchmark: --wrap OUT.json [--cprofile OUT.prof] -- EXE ARGS
        wrap = argparse.ArgumentParser(prog='hop_profile.py --wrap')
        wrap.add_argument('--wrap', type=Path, required=True)
        wrap.add_argument('--cprofile', type=Path, default=None)
        split_at = args_in.index('--') if '--' in args_in else len(args_in)
        options = wrap.parse_args(args_in[:split_at])
        if split_at + 1 >= len(args_in):
            wrap.error('the node executable goes after --')
        return _wrap(options.wrap, options.cprofile, args_in[split_at + 1:])
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--rate-hz', type=float, default=100.0)
    parser.add_argument('--cycles', type=int, default=1000)
    parser.add_argument('--executors', nargs='+', choices=EXECUTORS, default=list(EXECUTORS))
    parser.add_argument('--cprofile', action='store_true',
                        help="also cProfile each node's spinning and list its most expensive "
                             'functions (inflates every number)')
    parser.add_argument('--domain-id', type=int, default=None,
                        help='ROS_DOMAIN_ID (default: $ROS_DOMAIN_ID, else 150-199 by pid)')
    parser.add_argument('--work-dir', type=Path, default=None,
                        help='where node logs and accounts go (default: a temporary folder)')
    parser.add_argument('--json', type=Path, default=None, help='write the result here')
    args = parser.parse_args(args_in)
    from benchlib import machine_info, write_json

    with tempfile.TemporaryDirectory(prefix='ghost-hops-') as tmp:
        result = profile_hops(args.executors, args.rate_hz, args.cycles,
                              args.work_dir or Path(tmp), args.domain_id, args.cprofile,
                              log=lambda line: print(line, file=sys.stderr))
    print(json.dumps({'hop_profile': result}, sort_keys=True))
    print(hop_table(result))
    if result.get('cprofile'):
        for executor, run in result['executors'].items():
            for role, node in run.get('nodes', {}).items():
                top = ', '.join(f'{f["function"]} {f["us_per_cycle"]:.0f}'
                                for f in node.get('top', [])[:5])
                print(f'{executor} {role}: {top}')
    if args.json is not None:
        write_json(args.json, {'machine': machine_info(), 'hop_profile': result})
    failed = [run for run in result['executors'].values()
              if 'error' in run or any('error' in node for node in run['nodes'].values())]
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
