"""make stress: honest runs under load, in every start-up and shutdown order; how many verified.

Not in CI (minutes per run). With one CPU burner per core running (``--no-load``: none):

* each order of ghost/test/startup_orders.py (the launch file or ghost_run, Ghost or its
  inputs first, the inputs or Ghost stopping first, Ctrl-C) ``--runs`` times;
* each PX4 log (``--px4-logs``, default ../shared/realdata/*.ulg) ``--runs`` times through
  ``ghost_run --px4-ulog LOG --speed --px4-speed``.

Prints one line per order and log, ``N/M verified`` (exit 0 of ``verify_all``), and for each
failed run its first verdict line and its folder. Exit 0 only when every run verified.

    source scripts/env.sh --ros2 && python scripts/stress.py [--runs 10] [--orders ...]
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
import subprocess
import sys
import time

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'ghost' / 'test'))

from startup_orders import claimed_env, ORDERS, run_order, write_inputs  # noqa: E402

BURN = 'while True:\n    pass\n'


def _burners(count: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, '-c', BURN]) for _ in range(count)]  # noqa: S603


def _first_failure(text: str) -> str:
    lines = [line for line in text.splitlines() if line.startswith(('NOT VERIFIED', 'error'))]
    return (lines or text.strip().splitlines()[-1:] or ['(no output)'])[0][:200]


def _px4_run(log: Path, workdir: Path, env: dict[str, str], speed: float) -> tuple[bool, str]:
    run_dir = workdir / 'run'
    with (workdir / 'ghost_run.log').open('w') as out:
        code = subprocess.run(['ghost_run', '--px4-ulog', str(log), '--speed', str(speed),  # noqa: S603
                               '--no-report', '--run-dir', str(run_dir)], env=env, stdout=out,
                              stderr=subprocess.STDOUT, timeout=3600, check=False).returncode
    bags = sorted(path.parent for path in run_dir.glob('**/metadata.yaml'))
    if not bags:
        return False, f'ghost_run exit {code}, no bag'
    verify = subprocess.run([sys.executable, '-m', 'ghost_verify', str(bags[0])], env=env,  # noqa: S603
                            capture_output=True, text=True, timeout=1800, check=False)
    (workdir / 'verify.txt').write_text(verify.stdout + verify.stderr)
    return verify.returncode == 0, _first_failure(verify.stdout + verify.stderr)


def main(argv: list[str] | None = None) -> int:
    """Run the stress; exit 0 when every run verified."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--runs', type=int, default=10)
    parser.add_argument('--orders', nargs='*', default=sorted(ORDERS), choices=sorted(ORDERS))
    parser.add_argument('--px4-logs', nargs='*', type=Path,
                        default=sorted((ROOT.parent / 'shared' / 'realdata').glob('*.ulg')))
    parser.add_argument('--px4-speed', type=float, default=4.0)
    parser.add_argument('--no-load', action='store_true')
    parser.add_argument('--out', type=Path,
                        default=ROOT / 'runs' / f'stress-{time.strftime("%Y%m%dT%H%M%S")}')
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    burners = [] if args.no_load else _burners(os.cpu_count() or 1)
    print(f'stress: {args.runs} runs each, {len(burners)} CPU burners, in {args.out}',
          flush=True)
    failed = 0
    try:
        inputs = write_inputs(args.out / 'inputs')
        for order in args.orders:
            verified, notes = 0, []
            for index in range(args.runs):
                env, claim = claimed_env(os.environ)
                try:
                    result = run_order(order, args.out / f'{order}-{index}', env, inputs)
                finally:
                    claim.release()  # type: ignore[attr-defined]
                verified += result.verified
                if not result.verified:
                    (args.out / f'{order}-{index}' / 'verify.txt').write_text(
                        result.verdict + '\n' + result.logs)
                    notes.append(f'  {order}-{index}: {_first_failure(result.verdict)}')
            failed += args.runs - verified
            print(f'{order}: {verified}/{args.runs} verified', *notes, sep='\n', flush=True)
        for log in args.px4_logs:
            verified, notes = 0, []
            for index in range(args.runs):
                workdir = args.out / f'{log.stem}-{index}'
                workdir.mkdir(parents=True, exist_ok=True)
                env, claim = claimed_env(os.environ)
                try:
                    ok, why = _px4_run(log, workdir, env, args.px4_speed)
                finally:
                    claim.release()  # type: ignore[attr-defined]
                verified += ok
                if not ok:
                    notes.append(f'  {workdir.name}: {why}')
            failed += args.runs - verified
            print(f'px4 {log.name}: {verified}/{args.runs} verified', *notes, sep='\n',
                  flush=True)
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    print(f'stress: {"every run verified" if not failed else f"{failed} runs did not verify"}')
    return 0 if not failed else 1


if __name__ == '__main__':
    sys.exit(main())
