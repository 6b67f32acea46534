"""The main job: run the closed loop as separate processes, record it, verify the bag.

    ghost_run --scenario drift_then_recovery        (or: make demo SCENARIO=...)

Exit code: 0 when the run completed and BAUD-v1, ERUR-v1 and the chain all hold; 1 when the
verifier found a violation or a broken chain; 2 for a usage error; 3 when the run itself failed
(a node died, or the loop did not complete in time).
"""

import argparse
from datetime import datetime, UTC
import os
from pathlib import Path
import subprocess
import sys
import time

from ghost_nodes.graph import closed_loop_graph, SCENARIOS
from ghost_nodes.launcher import GraphProcesses

__all__ = ['main']


def _config_dir() -> Path:
    for prefix in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep):
        candidate = Path(prefix) / 'share' / 'ghost' / 'config'
        if prefix and (candidate / 'ghost.yaml').is_file():
            return candidate
    raise FileNotFoundError('share/ghost/config not found on AMENT_PREFIX_PATH: build the '
                            'workspace and source scripts/env.sh')


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog='ghost_run', description=__doc__.split('\n\n')[0],
        epilog='exit codes: 0 all verdicts hold; 1 a property is violated or the chain is '
               'broken; 2 usage error; 3 the run failed (node died, loop incomplete)')
    parser.add_argument('--scenario', default='drift_then_recovery', choices=SCENARIOS)
    parser.add_argument('--seed', type=int, default=0, help='scenario seed (default 0)')
    parser.add_argument('--run-dir', type=Path, default=None,
                        help='folder for the bag, reports and node logs '
                             '(default: runs/<scenario>-<UTC time>)')
    parser.add_argument('--config-dir', type=Path, default=None,
                        help='folder with ghost.yaml and scenarios/ (default: share/ghost/config)')
    parser.add_argument('--timeout', type=float, default=120.0,
                        help='seconds to wait for the loop to complete (default 120)')
    return parser


def _wait_for_loop(expected_cycles: int, graph: GraphProcesses, timeout_s: float) -> int:
    """Count actuations on /actuations until ``expected_cycles`` or timeout; return the count."""
    import rclpy

    from ghost_interfaces.msg import ActionEmission
    from ghost_nodes.qos import GHOST_QOS
    from ghost_nodes.readiness import GraphStatusReporter

    rclpy.init()
    node = rclpy.create_node('ghost_run_monitor')
    seen: set[int] = set()
    node.create_subscription(
        ActionEmission, '/actuations',
        lambda m: seen.add(m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec),
        GHOST_QOS)
    # Report the matched /actuations reader: the scenario waits for it before its first cycle.
    GraphStatusReporter(node)
    deadline = time.monotonic() + timeout_s
    try:
        while len(seen) < expected_cycles and time.monotonic() < deadline:
            rclpy.spin_once(node, timeout_sec=0.1)
            dead = {n: c for n, c in graph.failed().items()}
            if dead:
                print(f'node(s) exited early: {dead} (logs in {graph.log_dir})', file=sys.stderr)
                break
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return len(seen)


def main(argv: list[str] | None = None) -> int:
    """Run, record, verify; print the summary; return the exit code."""
    args = _parser().parse_args(argv)
    from ghost_core.scenarios import generate_scenario

    scenario = generate_scenario(args.scenario, seed=args.seed)
    stamp = datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')
    run_dir = (args.run_dir or Path('runs') / f'{args.scenario}-{stamp}').resolve()
    if run_dir.exists() and any(run_dir.iterdir()):
        print(f'error: run folder {run_dir} exists and is not empty', file=sys.stderr)
        return 2
    run_dir.mkdir(parents=True, exist_ok=True)
    bag = run_dir / 'bag'
    try:
        config_dir = args.config_dir or _config_dir()
    except FileNotFoundError as err:
        print(f'error: {err}', file=sys.stderr)
        return 2
    # The monitor below subscribes to /actuations too and reports its matched reader on
    # /ghost/graph_status: the scenario waits for it as well, so it cannot miss the first
    # cycles however slowly this process starts.
    specs = closed_loop_graph(config_dir, scenario=args.scenario, record=True,
                              bag_path=str(bag), overrides={'scenario': {'seed': args.seed}},
                              extra_subscribers={'/actuations': 1})
    env = dict(os.environ)
    env.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    graph = GraphProcesses(specs, run_dir / 'logs', env)
    print(f'ghost: {args.scenario} ({len(scenario.cycles)} cycles) -> {run_dir}', flush=True)
    graph.start()
    try:
        got = _wait_for_loop(len(scenario.cycles), graph, args.timeout)
    finally:
        codes = graph.stop()
    print(f'ghost: {got}/{len(scenario.cycles)} cycles actuated; processes exited {codes}',
          flush=True)
    if not (bag / 'metadata.yaml').is_file():
        print(f'error: the recorder left no complete bag in {bag} '
              f'(log: {run_dir / "logs" / "recorder.log"})', file=sys.stderr)
        return 3
    reports = run_dir / 'reports.json'
    verdict = subprocess.run([sys.executable, '-m', 'ghost_verify', str(bag),
                              '--json', str(reports)], check=False)  # noqa: S603
    print(f'bag: {bag}\nreports: {reports}\nlogs: {run_dir / "logs"}')
    if got < len(scenario.cycles):
        print(f'error: the loop completed {got} of {len(scenario.cycles)} cycles',
              file=sys.stderr)
        return 3
    return verdict.returncode


if __name__ == '__main__':
    sys.exit(main())
