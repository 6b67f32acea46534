"""Run Ghost's whole benchmark suite and print its tables, each number beside its floor.

    python bench/run_all.py            # the full suite (make bench), under 20 minutes
    python bench/run_all.py --quick    # a smoke-size run of everything (about a minute)

1. Closed loop (bench/closed_loop.py): the six ghost processing nodes as separate processes
   over real DDS vs a bare rclpy relay chain of the same shape, at 10 to 1000 Hz.
2. Node costs (bench/node_costs.py): each ghost node's callback CPU per cycle without DDS,
   and where it goes (what a ghost hop adds to a relay hop).
3. Verifier (bench/verifier.py): verify_all on bags of 1e3 to 1e6 cycles vs a decode-only
   pass over the same bags.
4. Judgement (bench/judgement.py, issue 10): false alarms of a consistent estimator, detection
   and recovery latency on drift_then_recovery and gnss_outage, the two real PX4 flights, and
   the trade-off over M, K, W and the hysteresis (pure pipeline, no DDS; about 4 minutes).
5. Generated code (bench/codegen.py, issue 24): each code generator's form vs a plain-code
   form of it on its hot path; generation is kept only where it is >= 1.5x faster.
6. Flight review (bench/review.py, issue 22): ghost_review's flights per minute over 40
   replayed real flights on 1 process, --jobs 2 and a 2-worker Dask LocalCluster, and what a
   report adds to ghost_replay.

Writes <out-dir>/latest.json (quick runs: quick.json) and the plots closed_loop.png,
verifier.png and real_<flight>.png (quick runs: quick_*.png); --out-dir defaults to
bench/results. The judgement's own targets are in the JSON under judgement.targets (--from-json
reprints its tables but cannot redraw the real-flight plots: their cycles are not stored).
Exit code 0 when every run completed (a missed performance target is reported, not an error),
1 otherwise.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from datetime import datetime, UTC
from pathlib import Path
import subprocess
import sys
import tempfile
import time
from typing import Any

from benchlib import (
    BENCH_DIR,
    bench_ros_env,
    CACHE_DIR,
    machine_info,
    read_json,
    RESULTS_DIR,
    write_json,
)
from closed_loop import DEFAULT_CYCLES, DEFAULT_RATES, run_closed_loop
from codegen import codegen_table
from judgement import judgement_tables, judgement_targets, run_judgement
from node_costs import costs_table
from report import (
    closed_loop_table,
    plot_closed_loop,
    plot_verifier,
    targets_table,
    verifier_table,
)
from review import review_table
from verifier import DEFAULT_SIZES, run_verifier

__all__ = ['evaluate_targets', 'main']

QUICK_RATES = (10, 100)
QUICK_CYCLES = 40
QUICK_SIZES = (100, 1_000)
NODE_COST_CYCLES, QUICK_NODE_COST_CYCLES = 2000, 200

# The targets of issue 6 (on the 2-core reference machine).
ZERO_LOSS_UP_TO_HZ = 200
LATENCY_RATE_HZ = 100
LATENCY_RATIO_MAX = 1.5
VERIFIER_RATIO_SIZES = (100_000, 1_000_000)
VERIFIER_RATIO_MAX = 1.5
LINEAR_EXPONENT_MAX = 1.1
RSS_BASE_CYCLES, RSS_TOP_CYCLES, RSS_DELTA_MAX_MB = 10_000, 1_000_000, 50.0


def _target(target: str, measured: str, met: bool | None) -> dict[str, Any]:
    return {'target': target, 'measured': measured, 'met': met}


def evaluate_targets(loop: Mapping[str, Any] | None,
                     verifier: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """Each target of the issue with what was measured; met is None when not measured."""
    targets = []
    if loop is not None:
        rows = {row['rate_hz']: row for row in loop['rates']}
        low = [r for r in sorted(rows) if r <= ZERO_LOSS_UP_TO_HZ]
        losses = {r: rows[r]['ghost'].get('lost') for r in low}
        complete = all(isinstance(v, int) for v in losses.values())
        targets.append(_target(
            f'ghost: zero lost cycles at every rate <= {ZERO_LOSS_UP_TO_HZ} Hz',
            ', '.join(f'{r:g} Hz: {v if v is not None else "error"}'
                      for r, v in losses.items()) or 'no rate measured',
            (complete and not any(losses.values())) if low else None))
        best = loop['highest_zero_loss_rate_hz']['ghost']
        targets.append(_target('ghost: highest rate with zero loss (report)',
                               'none' if best is None else f'{best:g} Hz', None))
        sustained = loop.get('highest_sustained_rate_hz', {}).get('ghost')
        targets.append(_target('ghost: highest rate served without saturation (report)',
                               'none' if sustained is None else f'{sustained:g} Hz', None))
        row = rows.get(LATENCY_RATE_HZ)
        ratio = None if row is None else row.get('ratio_p50')
        targets.append(_target(
            f'{LATENCY_RATE_HZ} Hz: ghost p50 latency <= {LATENCY_RATIO_MAX}x floor p50',
            'not measured' if ratio is None else (
                f'{ratio:.2f}x ({row["ghost"]["latency_ms"]["p50"]:.2f} ms vs '
                f'{row["floor"]["latency_ms"]["p50"]:.2f} ms)'),
            None if ratio is None else ratio <= LATENCY_RATIO_MAX))
    if verifier is not None:
        sizes = {row['cycles']: row for row in verifier['sizes']}
        for cycles in VERIFIER_RATIO_SIZES:
            row = sizes.get(cycles)
            targets.append(_target(
                f'verifier time <= {VERIFIER_RATIO_MAX}x decode-only floor at {cycles:,} cycles',
                'not measured' if row is None else (
                    f'{row["ratio_time"]:.2f}x ({row["verifier"]["wall_s"]:.1f} s vs '
                    f'{row["floor"]["wall_s"]:.1f} s)'),
                None if row is None else row['ratio_time'] <= VERIFIER_RATIO_MAX))
        exponent = verifier['growth'].get('time_exponent')
        fitted = verifier['growth'].get('fit_sizes', [])
        measured_linear = len(fitted) >= 2 and max(fitted) >= 100 * min(fitted)
        targets.append(_target(
            'verifier time linear in size (log-log exponent <= '
            f'{LINEAR_EXPONENT_MAX} over >= 1e4 cycles)',
            'not measured' if exponent is None else f'exponent {exponent:.3f} over '
            f'{", ".join(f"{c:,}" for c in fitted)} cycles',
            (exponent <= LINEAR_EXPONENT_MAX) if exponent is not None and measured_linear
            else None))
        base, top = sizes.get(RSS_BASE_CYCLES), sizes.get(RSS_TOP_CYCLES)
        delta = None if base is None or top is None else (
            top['verifier']['max_rss_bytes'] - base['verifier']['max_rss_bytes']) / 1e6
        targets.append(_target(
            f'verifier peak RSS at {RSS_TOP_CYCLES:,} <= RSS at {RSS_BASE_CYCLES:,} + '
            f'{RSS_DELTA_MAX_MB:g} MB',
            'not measured' if delta is None else (
                f'+{delta:.1f} MB ({top["verifier"]["max_rss_bytes"] / 1e6:.1f} vs '
                f'{base["verifier"]["max_rss_bytes"] / 1e6:.1f} MB)'),
            None if delta is None else delta <= RSS_DELTA_MAX_MB))
    return targets


def _node_costs(cycles: int, domain_id: int | None) -> dict[str, Any]:
    """bench/node_costs.py in a child process (its nodes join DDS: keep them isolated)."""
    with tempfile.TemporaryDirectory(prefix='ghost-bench-') as tmp:
        out = Path(tmp) / 'costs.json'
        done = subprocess.run(  # noqa: S603
            [sys.executable, str(BENCH_DIR / 'node_costs.py'), '--cycles', str(cycles),
             '--json', str(out)], env=bench_ros_env(domain_id), capture_output=True, text=True,
            timeout=600, check=False)
        if done.returncode != 0 or not out.is_file():
            return {'error': (done.stderr or done.stdout).strip()[-300:]}
        return dict(read_json(out)['node_costs'])


def _codegen(quick: bool) -> dict[str, Any]:
    """bench/codegen.py in a child process (a fresh interpreter: its timings are its own)."""
    with tempfile.TemporaryDirectory(prefix='ghost-bench-') as tmp:
        out = Path(tmp) / 'codegen.json'
        done = subprocess.run(  # noqa: S603
            [sys.executable, str(BENCH_DIR / 'codegen.py'), '--json', str(out),
             *(['--quick'] if quick else [])], capture_output=True, text=True, timeout=600,
            check=False)
        if done.returncode != 0 or not out.is_file():
            return {'error': (done.stderr or done.stdout).strip()[-300:]}
        return dict(read_json(out)['codegen'])


def _review(quick: bool) -> dict[str, Any]:
    """bench/review.py in a child process (its own reviews are child processes too)."""
    with tempfile.TemporaryDirectory(prefix='ghost-bench-') as tmp:
        out = Path(tmp) / 'review.json'
        size = ['--flights', '4', '--configs', '1', '--repeat', '1'] if quick else []
        done = subprocess.run(  # noqa: S603
            [sys.executable, str(BENCH_DIR / 'review.py'), '--json', str(out), *size],
            capture_output=True, text=True, timeout=1800, check=False)
        if done.returncode != 0 or not out.is_file():
            return {'error': (done.stderr or done.stdout).strip()[-300:]}
        return dict(read_json(out)['review'])


def _say(text: str) -> None:
    print(text, flush=True)


def run(args: argparse.Namespace) -> tuple[dict[str, Any], bool]:
    """Run the selected benchmarks; return the results document and whether all ran."""
    started = time.monotonic()
    document: dict[str, Any] = {
        'date_utc': datetime.now(UTC).strftime('%Y-%m-%dT%H:%M:%SZ'),
        'machine': machine_info(),
        'mode': 'quick' if args.quick else 'full',
    }
    _say(f'ghost bench ({document["mode"]}) {document["date_utc"]} on '
         f'{document["machine"]["cpu_model"]} x{document["machine"]["cpus"]}, load '
         f'{", ".join(f"{x:.2f}" for x in document["machine"]["load_average_at_start"])}')
    ok = True
    loop = verifier = None
    if not args.skip_loop:
        _say(f'== closed loop: rates {" ".join(f"{r:g}" for r in args.rates)} Hz, '
             f'{args.cycles} cycles each')
        t0 = time.monotonic()
        with tempfile.TemporaryDirectory(prefix='ghost-bench-') as tmp:
            loop = run_closed_loop(args.rates, args.cycles, args.work_dir or Path(tmp),
                                   args.domain_id, log=_say)
        loop['elapsed_s'] = time.monotonic() - t0
        document['closed_loop'] = loop
        ok = ok and not any('error' in row[s] for row in loop['rates'] for s in ('ghost', 'floor'))
    if not args.skip_loop:
        cycles = QUICK_NODE_COST_CYCLES if args.quick else NODE_COST_CYCLES
        _say(f'== node callback costs without DDS: {cycles} cycles at 100 Hz stamps')
        document['node_costs'] = _node_costs(cycles, args.domain_id)
    if not args.skip_verifier:
        _say(f'== verifier: bags of {", ".join(f"{s:,}" for s in args.sizes)} cycles')
        t0 = time.monotonic()
        with tempfile.TemporaryDirectory(prefix='ghost-bench-bags-') as tmp:
            cache = Path(tmp) if args.no_cache else args.cache_dir
            verifier = run_verifier(args.sizes, cache, log=_say)
        verifier['elapsed_s'] = time.monotonic() - t0
        document['verifier'] = verifier
        ok = ok and all(row['verifier']['verdict'] == 'holds' for row in verifier['sizes'])
    if not args.skip_codegen:
        _say('== generated code vs plain code: each generator on its hot path')
        document['codegen'] = _codegen(args.quick)
        ok = ok and 'error' not in document['codegen']
    if not args.skip_review:
        _say("== flight review: ghost_review over replayed real flights, and a report's cost")
        document['review'] = _review(args.quick)
        ok = ok and 'error' not in document['review']
    if not args.skip_judgement:
        _say('== judgement: consistent estimator, scenarios, real flights, trade-offs '
             '(pure pipeline)')
        judgement = run_judgement(args.quick, args.out_dir, log=_say)
        document['judgement'] = judgement
        ok = ok and not any('error' in row for row in judgement['real_flights'].values()
                            if isinstance(row, dict))
    document['targets'] = evaluate_targets(loop, verifier)
    document['elapsed_s'] = time.monotonic() - started
    return document, ok


def report(document: Mapping[str, Any], out_dir: Path, prefix: str) -> list[Path]:
    """Print the tables; write the JSON and the plots; return the files written."""
    written = []
    if 'closed_loop' in document:
        _say('\n## Closed loop: belief -> actuation, ghost vs floor\n')
        _say(closed_loop_table(document['closed_loop']))
        written.append(plot_closed_loop(document['closed_loop'],
                                        out_dir / f'{prefix}closed_loop.png'))
    if 'node_costs' in document:
        _say('\n## Ghost node callbacks without DDS (CPU per cycle)\n')
        costs = document['node_costs']
        _say(f'error: {costs["error"]}' if 'error' in costs else costs_table(costs))
    if 'verifier' in document:
        _say('\n## Verifier: verify_all vs decode-only floor\n')
        _say(verifier_table(document['verifier']))
        written.append(plot_verifier(document['verifier'], out_dir / f'{prefix}verifier.png'))
    if 'codegen' in document:
        _say('\n## Generated code vs plain code (issue 24)\n')
        codegen = document['codegen']
        _say(f'error: {codegen["error"]}' if 'error' in codegen else codegen_table(codegen))
    if 'review' in document:
        _say("\n## Flight review: ghost_review at fleet scale, a report's cost (issue 22)\n")
        review = document['review']
        _say(f'error: {review["error"]}' if 'error' in review else review_table(review))
    if 'judgement' in document:
        _say('\n## Judgement: false alarms, latency, real flights, trade-offs (issue 10)\n')
        _say(judgement_tables(document['judgement']))
        real = document['judgement'].get('real_flights', {})
        written += [Path(row['plot']) for row in real.values()
                    if isinstance(row, dict) and 'plot' in row]
    _say('\n## Targets\n')
    _say(targets_table(document['targets']))
    path = out_dir / ('quick.json' if prefix else 'latest.json')
    write_json(path, document)
    written.insert(0, path)
    _say(f'\nsuite time {document["elapsed_s"] / 60:.1f} min; wrote '
         f'{", ".join(str(p) for p in written)}')
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        epilog='exit codes: 0 every benchmark ran (targets are reported, not enforced); '
               '1 a run failed (a graph did not start, the verifier rejected a bag)')
    parser.add_argument('--quick', action='store_true',
                        help=f'smoke size: rates {QUICK_RATES} Hz x {QUICK_CYCLES} cycles, '
                             f'bags of {QUICK_SIZES} cycles')
    parser.add_argument('--rates', type=float, nargs='+', default=None,
                        help=f'closed-loop rates in Hz (default {list(DEFAULT_RATES)})')
    parser.add_argument('--cycles', type=int, default=None,
                        help=f'closed-loop cycles per rate (default {DEFAULT_CYCLES})')
    parser.add_argument('--sizes', type=int, nargs='+', default=None,
                        help=f'verifier bag sizes in cycles (default {list(DEFAULT_SIZES)})')
    parser.add_argument('--skip-loop', action='store_true', help='no closed-loop benchmark')
    parser.add_argument('--skip-verifier', action='store_true', help='no verifier benchmark')
    parser.add_argument('--skip-judgement', action='store_true',
                        help='no judgement benchmark (bench/judgement.py)')
    parser.add_argument('--skip-review', action='store_true',
                        help='no flight-review benchmark (bench/review.py)')
    parser.add_argument('--skip-codegen', action='store_true',
                        help='no generated-code benchmark (bench/codegen.py)')
    parser.add_argument('--out-dir', type=Path, default=RESULTS_DIR,
                        help='where the JSON and the plots go (default bench/results)')
    parser.add_argument('--cache-dir', type=Path, default=CACHE_DIR,
                        help='where generated bags are kept between runs (bench/.cache)')
    parser.add_argument('--no-cache', action='store_true',
                        help='write bags into a temporary folder deleted at the end')
    parser.add_argument('--work-dir', type=Path, default=None,
                        help='keep the node and driver logs here (default: a temporary folder)')
    parser.add_argument('--domain-id', type=int, default=None,
                        help='ROS_DOMAIN_ID (default: $ROS_DOMAIN_ID, else 150-199 by pid)')
    parser.add_argument('--from-json', type=Path, default=None, metavar='RESULTS',
                        help='run nothing: print the tables of a results file and redraw its '
                             'plots (into --out-dir)')
    args = parser.parse_args(argv)
    if args.from_json is not None:
        document = read_json(args.from_json)
        document['targets'] = evaluate_targets(document.get('closed_loop'),
                                               document.get('verifier'))
        if 'judgement' in document:
            document['judgement']['targets'] = judgement_targets(document['judgement'])
        report(document, args.out_dir, 'quick_' if document.get('mode') == 'quick' else '')
        return 0
    args.rates = args.rates or list(QUICK_RATES if args.quick else DEFAULT_RATES)
    args.cycles = args.cycles or (QUICK_CYCLES if args.quick else DEFAULT_CYCLES)
    args.sizes = args.sizes or list(QUICK_SIZES if args.quick else DEFAULT_SIZES)
    document, ok = run(args)
    report(document, args.out_dir, 'quick_' if args.quick else '')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
