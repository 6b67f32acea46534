"""Verifier benchmark: verify_all on bags of growing size vs a decode-only floor.

Per bag size (cycles of 6 ghost messages, written by bench/bagsynth.py with GhostBagWriter and
cached under bench/.cache): the wall time and peak RSS of the combined verifier
(``verify_all BAG`` as a child process; its own rusage from wait4) and of the floor, a child
that only reads and decodes every message of the same bag with the faster of two well-kept
decoders (bench/decode_floor.py; both are timed on the 1e4-cycle bag, or the largest below
it, and the faster is used at every size). Then the time ratio verifier/floor and how time
and memory grow with size.

    python bench/verifier.py --sizes 1000 10000 --json /tmp/verifier.json
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
import json
import math
from pathlib import Path
import re
import shutil
import sys
import tempfile
from typing import Any

from bagsynth import cached_bag
from benchlib import BENCH_DIR, CACHE_DIR, ChildRun, machine_info, run_measured, write_json

__all__ = ['DEFAULT_SIZES', 'run_verifier', 'main']

DEFAULT_SIZES = (1_000, 10_000, 100_000, 1_000_000)
#: Sizes up to this are measured REPEATS times and the fastest run kept (they take seconds).
SMALL = 10_000
REPEATS = 3
_CHAIN = re.compile(r'^chain: (\d+)/(\d+) verified$', re.M)


def verifier_argv(bag: Path) -> list[str]:
    """The combined verifier as a user runs it: the verify_all console script."""
    script = shutil.which('verify_all')
    if script is not None:
        return [script, str(bag)]
    return [sys.executable, '-c',
            'import sys; from ghost_verify.cli import verify_all; sys.exit(verify_all())',
            str(bag)]


def floor_argv(bag: Path, decoder: str) -> list[str]:
    return [sys.executable, str(BENCH_DIR / 'decode_floor.py'), str(bag), '--decoder', decoder]


def _best(argv: list[str], repeats: int) -> ChildRun:
    runs = [run_measured(argv) for _ in range(repeats)]
    for run in runs:
        if run.returncode != 0:
            return run
    return min(runs, key=lambda r: r.wall_s)


def _verdict(run: ChildRun, cycles: int) -> tuple[str, list[str]]:
    """Return 'holds' (or what is wrong) and the verifier's summary lines.

    'holds' means the verifier exited 0 and its chain line covers every cycle of the bag.
    """
    lines = [line for line in run.stdout.splitlines() if line.strip()]
    if run.returncode != 0:
        failed = [line for line in lines if 'VIOLATED' in line or 'error' in line]
        tail = failed or (run.stderr or run.stdout).strip().splitlines()
        return f'exit {run.returncode}: {tail[-1] if tail else ""}'[:100], lines
    chain = _CHAIN.search(run.stdout)
    if chain is None or chain.group(1) != chain.group(2) or int(chain.group(2)) != cycles:
        return f'chain line missing or short: {chain.group(0) if chain else None}', lines
    return 'holds', lines


def _child(run: ChildRun) -> dict[str, Any]:
    return {'wall_s': run.wall_s, 'cpu_s': run.cpu_s, 'max_rss_bytes': run.max_rss_bytes,
            'returncode': run.returncode}


def _bag_bytes(bag: Path) -> int:
    return sum(p.stat().st_size for p in bag.rglob('*.mcap'))


def _fit_slope(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Least-squares slope of ys on xs."""
    if len(xs) < 2:
        return None
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    den = sum((x - mx) ** 2 for x in xs)
    cov = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    return None if den == 0 else cov / den


def growth(sizes: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """How verifier time and memory grow: log-log time exponent, RSS slope and delta."""
    # Below 1e4 cycles interpreter start-up dominates: fit over the sizes from 1e4 up only
    # (with fewer than two of them, e.g. a --quick run, there is no growth to report).
    big = [s for s in sizes if s['cycles'] >= SMALL]
    if len(big) < 2:
        big = []
    xs = [math.log(s['cycles']) for s in big]
    ts = [math.log(s['verifier']['wall_s']) for s in big]
    rss_slope = _fit_slope([s['cycles'] for s in big],
                           [s['verifier']['max_rss_bytes'] / 1e6 for s in big])
    out: dict[str, Any] = {
        'fit_sizes': [s['cycles'] for s in big],
        'time_exponent': _fit_slope(xs, ts),
        'floor_time_exponent': _fit_slope(
            xs, [math.log(s['floor']['wall_s']) for s in big]),
        'rss_mb_per_1e6_cycles': None if rss_slope is None else rss_slope * 1e6,
        'us_per_cycle': {str(s['cycles']): 1e6 * s['verifier']['wall_s'] / s['cycles']
                         for s in sizes},
    }
    base = next((s for s in sizes if s['cycles'] == SMALL), None)
    largest = max(sizes, key=lambda s: s['cycles']) if sizes else None
    if base is not None and largest is not None and largest is not base:
        out['rss_delta_mb'] = (largest['verifier']['max_rss_bytes']
                               - base['verifier']['max_rss_bytes']) / 1e6
        out['rss_delta_between'] = [base['cycles'], largest['cycles']]
    return out


def run_verifier(sizes: Sequence[int], cache_dir: Path = CACHE_DIR,
                 log: Callable[[str], None] = print) -> dict[str, Any]:
    """Measure verifier and floor at every size; return the verifier section of the results."""
    sizes = sorted(sizes)
    bags: dict[int, Path] = {}
    generated: dict[str, float] = {}
    for cycles in sizes:
        bag, seconds = cached_bag(cycles, cache_dir)
        bags[cycles] = bag
        if seconds is not None:
            generated[str(cycles)] = seconds
            log(f'  wrote the {cycles:,}-cycle bag in {seconds:.1f} s')
    # Pick the floor's decoder on a mid-size bag.
    trial_size = max([s for s in sizes if s <= SMALL] or sizes[:1])
    trial: dict[str, float] = {}
    for decoder in ('mcap_ros2', 'rosbags'):
        # The pass itself (as the child times it): interpreter start-up is not the decoder's.
        passes = []
        for _ in range(REPEATS):
            run = run_measured(floor_argv(bags[trial_size], decoder))
            if run.returncode != 0:
                raise RuntimeError(f'decode floor ({decoder}) failed: {run.stderr.strip()}')
            passes.append(float(json.loads(run.stdout)['seconds']))
        trial[decoder] = min(passes)
    decoder = min(trial, key=lambda name: trial[name])
    log(f'  floor decoder: {decoder} ({", ".join(f"{k} {v:.2f} s" for k, v in trial.items())}'
        f' on {trial_size:,} cycles)')
    rows = []
    for cycles in sizes:
        bag = bags[cycles]
        repeats = REPEATS if cycles <= SMALL else 1
        floor = _best(floor_argv(bag, decoder), repeats)
        verify = _best(verifier_argv(bag), repeats)
        verdict, summary = _verdict(verify, cycles)
        row = {
            'cycles': cycles,
            'messages': cycles * 6,
            'bag_bytes': _bag_bytes(bag),
            'repeats': repeats,
            'verifier': {**_child(verify), 'cycles_per_s': cycles / verify.wall_s,
                         'verdict': verdict, 'summary': summary},
            'floor': {**_child(floor), 'cycles_per_s': cycles / floor.wall_s},
            'ratio_time': verify.wall_s / floor.wall_s,
            'ratio_rss': verify.max_rss_bytes / floor.max_rss_bytes,
        }
        rows.append(row)
        log(f'  {cycles:>9,} cycles: verifier {verify.wall_s:7.2f} s '
            f'{verify.max_rss_bytes / 1e6:7.1f} MB ({verdict}); floor {floor.wall_s:6.2f} s '
            f'{floor.max_rss_bytes / 1e6:6.1f} MB; ratio {row["ratio_time"]:.2f}')
    return {
        'config': {'sizes': list(sizes), 'messages_per_cycle': 6, 'repeats_small': REPEATS,
                   'verifier_argv': verifier_argv(Path('BAG'))},
        'floor_decoder': decoder,
        'decoder_trial_s': trial,
        'decoder_trial_cycles': trial_size,
        'bags_generated_s': generated,
        'sizes': rows,
        'growth': growth(rows),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--sizes', type=int, nargs='+', default=list(DEFAULT_SIZES))
    parser.add_argument('--cache-dir', type=Path, default=None,
                        help='where bags are cached (default bench/.cache; with --no-cache, '
                             'a temporary folder)')
    parser.add_argument('--no-cache', action='store_true',
                        help='write the bags into a temporary folder, deleted at the end')
    parser.add_argument('--json', type=Path, default=None, help='write the results here')
    args = parser.parse_args(argv)
    from report import verifier_table

    with tempfile.TemporaryDirectory(prefix='ghost-bench-bags-') as tmp:
        cache = Path(tmp) if args.no_cache else (args.cache_dir or CACHE_DIR)
        result = run_verifier(args.sizes, cache)
    print(verifier_table(result))
    if args.json is not None:
        write_json(args.json, {'machine': machine_info(), 'verifier': result})
    return 0 if all(row['verifier']['verdict'] == 'holds' for row in result['sizes']) else 1


if __name__ == '__main__':
    sys.exit(main())
