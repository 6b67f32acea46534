"""Flight review at fleet scale (issue 22 §5): flights per minute, and a report's cost.

    python bench/review.py                 # 40 flights: the real logs x 10 configurations
    python bench/review.py --flights 4 --configs 1 --json out.json   # smoke size

1. Throughput: the shared PX4 logs (../shared/realdata) are imported and replayed under
   several configurations (accuracy profile x K, each a --params-file on config/ghost.yaml),
   giving `--flights` Ghost bags; ``ghost_review`` then reviews them all on 1 process, with
   --jobs 2, and on a Dask LocalCluster of 2 worker processes (--scheduler). Flights per
   minute each, and the speed-up over one process (target: --jobs 2 >= 1.7x).
2. Cost of a report: ``ghost_replay INPUT --no-report`` against ``ghost_replay INPUT`` (which
   writes the review of its bag) on the longest log, each a fresh process, best of --repeat.
   Target: the report adds <= 20 % to ghost_replay.

Targets are printed beside the numbers, measured in the same run; nothing is asserted. The
three reviews must write byte-identical report.html and decisions.csv (checked, exit 1 if not).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
import contextlib
import io
import itertools
import os
from pathlib import Path
import subprocess
import sys
import tempfile
import time
from typing import Any

from benchlib import BENCH_DIR, machine_info, write_json

ROOT = BENCH_DIR.parent
REALDATA = ROOT.parent / 'shared' / 'realdata'
CONFIG = ROOT / 'config'
#: The configurations the logs are replayed under: accuracy profile x K x W.
PROFILES = ('gnss', 'rtk', 'indoor')
THRESHOLDS = (3, 2)
WINDOWS = (32, 24)
JOBS_TARGET = 1.7
REPORT_TARGET = 0.20


def _configs(folder: Path, count: int) -> list[Path]:
    """`count` parameter files (loaded after config/ghost.yaml), each a distinct configuration."""
    files = []
    for index, (profile, k, w) in enumerate(itertools.islice(
            itertools.product(PROFILES, THRESHOLDS, WINDOWS), count)):
        path = folder / f'config{index}.yaml'
        path.write_text(f'/**/self_assessor:\n  ros__parameters:\n    accuracy_profile: '
                        f'{profile}\n/**/calibrator:\n  ros__parameters:\n    '
                        f'downgrade_threshold: {k}\n    max_history: {w}\n', encoding='utf-8')
        files.append(path)
    return files


def make_flights(work: Path, flights: int, configs: int, log=print) -> Path:
    """`flights` Ghost bags in work/bags: every real log replayed under each configuration."""
    from ghost.replay import replay_bag
    from ghost_nodes.agent_config import pipeline_config_from_files
    from ghost_px4.ulog_import import main as import_ulog

    # Only as many logs as there are flights (a smoke run imports fewer).
    logs = sorted(REALDATA.glob('*.ulg'))[:flights]
    if not logs:
        raise SystemExit(f'bench/review.py: no PX4 log in {REALDATA}')
    inputs = []
    for path in logs:
        target = work / 'inputs' / path.stem
        said = io.StringIO()
        with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
            code = import_ulog([str(path), '--output', str(target)])
        if code != 0:
            raise SystemExit(f'bench/review.py: {path} could not be imported: '
                             f'{said.getvalue().strip()[-300:]}')
        inputs.append(target)
    parameter_files = _configs(work, configs)
    bags = work / 'bags'
    bags.mkdir()
    made = 0
    for params, source in itertools.product(parameter_files, inputs):
        if made == flights:
            break
        config = pipeline_config_from_files([CONFIG / 'ghost.yaml', params])
        replay_bag(source, bags / f'{source.name}-{params.stem}', config)
        made += 1
    log(f'{made} flights: {len(inputs)} logs x {len(parameter_files)} configurations')
    return bags


def _review(bags: Path, output: Path, *extra: str) -> float:
    """Seconds ``ghost_review`` takes over every bag (a fresh process)."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, '-m', 'ghost_review', str(bags), '--output',
                           str(output), *extra], capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f'bench/review.py: ghost_review {" ".join(extra)} exited '
                         f'{done.returncode}: {done.stderr.strip()[-300:]}')
    return seconds


def _files(output: Path) -> dict[str, bytes]:
    return {str(path.relative_to(output)): path.read_bytes() for path in sorted(
        output.rglob('*')) if path.name in ('report.html', 'decisions.csv', 'index.html')}


def throughput(bags: Path, work: Path, log=print) -> dict[str, Any]:
    """Flights per minute of ghost_review on 1 process, --jobs 2 and a 2-worker LocalCluster."""
    from distributed import LocalCluster

    flights = len([path for path in bags.iterdir() if path.is_dir()])
    runs = {'1 process': _review(bags, work / 'one')}
    runs['--jobs 2'] = _review(bags, work / 'jobs2', '--jobs', '2')
    with LocalCluster(processes=True, n_workers=2, threads_per_worker=1,
                      dashboard_address=':0') as cluster:
        runs['Dask LocalCluster, 2 workers'] = _review(
            bags, work / 'dask', '--scheduler', cluster.scheduler_address)
    reference = _files(work / 'one')
    identical = all(_files(work / name) == reference for name in ('jobs2', 'dask'))
    rows = {name: {'seconds': seconds, 'flights_per_minute': 60 * flights / seconds,
                   'speedup': runs['1 process'] / seconds} for name, seconds in runs.items()}
    for name, row in rows.items():
        log(f'  {name:30} {row["seconds"]:7.1f} s  {row["flights_per_minute"]:7.1f} '
            f'flights/min  {row["speedup"]:.2f}x')
    return {'flights': flights, 'runs': rows, 'identical': identical}


def report_cost(work: Path, repeat: int, log=print) -> dict[str, Any]:
    """ghost_replay of the longest log's input bag without and with its report (best of)."""
    inputs = sorted((work / 'inputs').iterdir(),
                    key=lambda path: sum(f.stat().st_size for f in path.glob('*.mcap')))
    source = inputs[-1]
    best: dict[str, float] = {}
    for run, (name, extra) in itertools.product(range(repeat), (('replay', ['--no-report']),
                                                                ('replay + report', []))):
        output = work / 'cost' / f'{name.replace(" ", "")}-{run}'
        started = time.perf_counter()
        done = subprocess.run([sys.executable, '-m', 'ghost.replay', str(source), '--output',
                               str(output), *extra], capture_output=True, text=True,
                              check=False)
        seconds = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f'bench/review.py: ghost_replay {source} exited '
                             f'{done.returncode}: {done.stderr.strip()[-300:]}')
        best[name] = min(best.get(name, seconds), seconds)
    added = best['replay + report'] / best['replay'] - 1
    log(f'  {source.name}: ghost_replay {best["replay"]:.2f} s, with its report '
        f'{best["replay + report"]:.2f} s: the report adds {100 * added:.0f} %')
    return {'flight': source.name, 'seconds': best, 'added': added, 'repeat': repeat}


def targets(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The two targets, each with what this run measured."""
    jobs = result['throughput']['runs']['--jobs 2']['speedup']
    added = result['report_cost']['added']
    return [
        {'target': f'ghost_review --jobs 2 >= {JOBS_TARGET}x one process',
         'measured': f'{jobs:.2f}x', 'met': jobs >= JOBS_TARGET},
        {'target': f'the report adds <= {100 * REPORT_TARGET:.0f} % to ghost_replay',
         'measured': f'{100 * added:+.0f} %', 'met': added <= REPORT_TARGET},
    ]


def run(flights: int, configs: int, repeat: int, log=print) -> dict[str, Any]:
    """Both measurements in a temporary folder; the results document."""
    with tempfile.TemporaryDirectory(prefix='ghost-bench-review-') as tmp:
        work = Path(tmp)
        bags = make_flights(work, flights, configs, log)
        result: dict[str, Any] = {'throughput': throughput(bags, work, log)}
        result['report_cost'] = report_cost(work, repeat, log)
    result['targets'] = targets(result)
    return result


def review_table(result: dict[str, Any]) -> str:
    """The targets, each with its measure and whether it is met."""
    lines = ['| target | measured | met |', '|---|---:|:---:|']
    lines += [f'| {t["target"]} | {t["measured"]} | {"yes" if t["met"] else "NO"} |'
              for t in result['targets']]
    if not result['throughput']['identical']:
        lines.append('| the three reviews write identical files | differ | NO |')
    return '\n'.join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--flights', type=int, default=40,
                        help='Ghost bags to review (default 40)')
    parser.add_argument('--configs', type=int, default=10,
                        help='configurations the logs are replayed under (default 10)')
    parser.add_argument('--repeat', type=int, default=3,
                        help='runs of each ghost_replay, the best kept (default 3)')
    parser.add_argument('--json', type=Path, default=None, help='write the results here')
    args = parser.parse_args(argv)
    os.environ.setdefault('PYTHONHASHSEED', '0')
    print(f'== flight review: {args.flights} flights', flush=True)
    result = run(args.flights, args.configs, args.repeat,
                 log=lambda text: print(text, flush=True))
    result['machine'] = machine_info()
    print(review_table(result))
    if args.json is not None:
        write_json(args.json, {'review': result})
    return 0 if result['throughput']['identical'] else 1


if __name__ == '__main__':
    sys.exit(main())
