"""The transport bound under load: how late the recorder logs a named input (EVIDENCE-v1).

EVIDENCE-v1 fails a message whose named input the recorder logged more than
``ghost_core.evidence.TRANSPORT_BOUND_NS`` (250 ms) after the message itself. This bench
measures that lag where it is largest in practice: each shared PX4 log played through
``ghost_run --px4-ulog`` (separate processes over DDS, the recorder's clock the middleware's
receive time) while `--burners` processes keep every core busy. Per run it prints the largest
lag the verifier saw (its JSON's ``evidence.largest_input_after_ns``), its ratio to the bound,
the verdict, and the load average during the run.

    python bench/transport_bound.py --burners 2 --runs 1 --json /tmp/transport.json
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
import json
import multiprocessing
import os
from pathlib import Path
import subprocess
import sys
import tempfile
import time

from benchlib import bench_ros_env, machine_info, write_json

from ghost_core.evidence import TRANSPORT_BOUND_NS

ROOT = Path(__file__).resolve().parents[1]
REALDATA = ROOT.parent / 'shared' / 'realdata'
PX4_MSGS = ROOT.parent / 'shared' / 'vendor' / 'px4_msgs'


def _px4_env() -> dict[str, str]:
    """The isolated ROS environment with px4_msgs built and sourced (scripts/vendored.sh)."""
    script = (f'set -e; install=$(bash scripts/vendored.sh px4_msgs {PX4_MSGS}); '
              'COLCON_CURRENT_PREFIX=$install source "$install/local_setup.bash"; env -0')
    done = subprocess.run(['bash', '-c', script], cwd=ROOT, env=bench_ros_env(),
                          capture_output=True, check=True)
    return dict(item.split('=', 1) for item in done.stdout.decode().split('\0') if '=' in item)


def _burn() -> None:
    while True:
        pass


def _one_run(log: Path, speed: str, out_dir: Path, env: dict[str, str]) -> dict[str, object]:
    """Play one log through ghost_run; the evidence figures of its verification."""
    run_dir = out_dir / log.stem
    started = time.monotonic()
    done = subprocess.run([sys.executable, '-m', 'ghost.run', '--px4-ulog', str(log),
                           '--speed', speed, '--run-dir', str(run_dir)], env=env,
                          capture_output=True, text=True, timeout=900, check=False)
    load = os.getloadavg()[0]
    reports = run_dir / 'reports.json'
    document = json.loads(reports.read_text()) if reports.is_file() else {}
    evidence = document.get('evidence') or {}
    largest = int(evidence.get('largest_input_after_ns', 0))
    verdict = next((line for line in reversed(done.stdout.splitlines())
                    if 'VERIFIED' in line), f'(no verdict; exit {done.returncode})')
    return {'log': log.name, 'exit': done.returncode, 'seconds': time.monotonic() - started,
            'load_1min': load, 'names_checked': evidence.get('names_checked', 0),
            'late_admitted': evidence.get('late_admitted', 0),
            'largest_input_after_ns': largest, 'ratio_to_bound': largest / TRANSPORT_BOUND_NS,
            'violations': evidence.get('violations_by_kind', {}), 'verdict': verdict}


def main(argv: Sequence[str] | None = None) -> int:
    """Run every log `--runs` times under `--burners` busy processes; print one line each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--logs', nargs='*', type=Path,
                        default=sorted(REALDATA.glob('*.ulg')), help='ULog files to play')
    parser.add_argument('--burners', type=int, default=os.cpu_count() or 2,
                        help='busy processes beside the run (default: one per core)')
    parser.add_argument('--runs', type=int, default=1, help='runs per log')
    parser.add_argument('--speed', default='8', help="ghost_run's --speed (default 8)")
    parser.add_argument('--json', type=Path, help='write the results here')
    args = parser.parse_args(argv)
    if not args.logs:
        print(f'transport_bound: no .ulg logs (looked in {REALDATA}; give --logs)',
              file=sys.stderr)
        return 2
    env = _px4_env()
    burners = [multiprocessing.Process(target=_burn, daemon=True) for _ in range(args.burners)]
    for burner in burners:
        burner.start()
    results = []
    try:
        with tempfile.TemporaryDirectory(prefix='ghost-transport-') as tmp:
            for run in range(args.runs):
                for log in args.logs:
                    result = _one_run(log, args.speed, Path(tmp) / str(run), env)
                    results.append(result)
                    print(f"transport: {result['log']}: largest input logged "
                          f"{result['largest_input_after_ns'] / 1e6:.1f} ms after the message "
                          f"naming it ({result['ratio_to_bound']:.2f} of the "
                          f"{TRANSPORT_BOUND_NS / 1e6:g} ms bound; {result['names_checked']} "
                          f"names, load {result['load_1min']:.1f}): {result['verdict']}",
                          flush=True)
    finally:
        for burner in burners:
            burner.terminate()
    if args.json is not None:
        write_json(args.json, {'machine': machine_info(), 'burners': args.burners,
                               'bound_ns': TRANSPORT_BOUND_NS, 'runs': results})
    return 0


if __name__ == '__main__':
    sys.exit(main())
