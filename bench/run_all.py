"""Run Ghost's whole benchmark suite and print its tables, each number beside its floor.

    python bench/run_all.py            # the full suite (make bench), about 45 minutes
    python bench/run_all.py --quick    # a smoke-size run of everything (about a minute)

1. Closed loop (bench/closed_loop.py): the six ghost processing nodes, one process per node
   or all in one process, on each executor, over real DDS vs a bare rclpy relay chain of the
   same shape, at 50 to 500 Hz.
2. Node costs (bench/node_costs.py): each ghost node's callback CPU per cycle without DDS,
   and where it goes (what a ghost hop adds to a relay hop).
3. Verifier (bench/verifier.py): verify_all (re-deriving every cycle from the recorded
   inputs) on bags of 1e3 to 1e6 cycles vs a decode-only pass over the same bags, verify_erur
   vs a pass over the Ghost topics, --jobs 2; then a fleet of 20 bags on 1 and 2 local
   processes and Dask LocalCluster workers.
4. Judgement (bench/judgement.py, issue 10): false alarms of a consistent estimator, detection
   and recovery latency on drift_then_recovery and gnss_outage, the real PX4 flights, and
   the trade-off over M, K, W and the hysteresis (pure pipeline, no DDS; about 4 minutes).
5. Generated code (bench/codegen.py, issue 24): each code generator's form vs a plain-code
   form of it on its hot path; generation is kept only where it is >= 1.5x faster.
6. Flight review (bench/review.py, issue 22): ghost_review's flights per minute over 40
   replayed real flights on 1 process, --jobs 2 and a 2-worker Dask LocalCluster, and what a
   report adds to ghost_replay.

Then one table: every target of issue 26 (the verifier and the loop), what was measured and
whether it is met. A full run into bench/results also adds those rows to
bench/results/history.csv (date, commit, row, value), whose rows docs/performance.md keeps.

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
import csv
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
from verifier import (
    DEFAULT_SIZES,
    extra_tables,
    FLEET_BAGS,
    FLEET_CYCLES,
    run_fleet,
    run_verifier,
)

__all__ = ['evaluate_targets', 'main']

QUICK_RATES = (10, 100)
QUICK_CYCLES = 40
QUICK_SIZES = (100, 1_000)
NODE_COST_CYCLES, QUICK_NODE_COST_CYCLES = 2000, 200

# The targets of issue 26 (on the 2-core reference machine), checked by one table.
LOOP_RATE_HZ = 100
LOOP_RATIO_MAX = 1.2
#: The multi-process graph and the single-process one with their default executor (events).
MULTI_PROCESS, SINGLE_PROCESS = 'ghost_mp_events', 'ghost_events'
ZERO_LOSS_UP_TO_HZ = 200
LATENCY_TABLE_RATES = (50, 100, 200, 300)
SINGLE_RATE_HZ, SINGLE_SERVED_MIN, SINGLE_P50_FACTOR = 500, 495.0, 2.0
ERUR_CYCLES, ERUR_RATIO_MAX = 100_000, 1.5
VERIFIER_RATIO_SIZES = (100_000, 1_000_000)
VERIFIER_RATIO_MAX = 2.5
LINEAR_EXPONENT_MAX = 1.1
RSS_BASE_CYCLES, RSS_TOP_CYCLES, RSS_DELTA_MAX_MB = 10_000, 1_000_000, 50.0
QUICK_FLEET_BAGS, QUICK_FLEET_CYCLES = 4, 100
FLEET_SPEEDUP_MIN = 1.8  # 2 workers on 2 cores: linear within 10 %
#: Every full run adds its rows here (date, commit, row, measured, value, met).
HISTORY = RESULTS_DIR / 'history.csv'


def _target(key: str, target: str, measured: str, value: float | None,
            met: bool | None) -> dict[str, Any]:
    return {'key': key, 'target': target, 'measured': measured, 'value': value, 'met': met}


def _loop_targets(loop: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = {row['rate_hz']: row for row in loop['rates']}
    targets = []

    def ok(stats: Mapping[str, Any] | None) -> bool:
        return stats is not None and 'error' not in stats

    low = [r for r in sorted(rows) if r <= ZERO_LOSS_UP_TO_HZ]
    losses = {r: rows[r].get(MULTI_PROCESS, {}).get('lost') for r in low}
    complete = bool(low) and all(isinstance(v, int) for v in losses.values())
    targets.append(_target(
        'loop_zero_loss', f'multi-process: zero lost cycles at every rate <= '
        f'{ZERO_LOSS_UP_TO_HZ} Hz', ', '.join(
            f'{r:g} Hz: {v if v is not None else "error"}' for r, v in losses.items())
        or 'not measured', float(sum(v for v in losses.values() if isinstance(v, int)))
        if complete else None, (complete and not any(losses.values())) if low else None))
    row = rows.get(LOOP_RATE_HZ, {})
    ghost, floor = row.get(MULTI_PROCESS), row.get('floor')
    ratio = row.get('ratios', {}).get(MULTI_PROCESS, {}).get('p50')
    targets.append(_target(
        'loop_mp_100hz_p50', f'multi-process, {LOOP_RATE_HZ} Hz: p50 latency <= '
        f'{LOOP_RATIO_MAX}x the bare rclpy relay floor',
        f'{ratio:.2f}x ({ghost["latency_ms"]["p50"]:.2f} vs {floor["latency_ms"]["p50"]:.2f} ms)'
        if ratio is not None and ok(ghost) and ok(floor) else 'not measured',
        ratio, None if ratio is None else ratio <= LOOP_RATIO_MAX))
    cells = []
    for rate in LATENCY_TABLE_RATES:
        here = rows.get(rate, {})
        pairs = [(name, here.get(name)) for name in ('floor', MULTI_PROCESS)]
        if all(ok(stats) for _, stats in pairs):
            cells.append(f'{rate:g} Hz: ' + ', '.join(
                f'{name} {stats["latency_ms"]["p50"]:.1f}/{stats["latency_ms"]["p99"]:.1f}'
                for name, stats in pairs if stats is not None))
    targets.append(_target(
        'loop_p50_p99', 'p50/p99 ms at 50-300 Hz, floor and multi-process (report)',
        '; '.join(cells) or 'not measured', None, None))
    fast, base = rows.get(SINGLE_RATE_HZ, {}).get(SINGLE_PROCESS), rows.get(
        LOOP_RATE_HZ, {}).get(SINGLE_PROCESS)
    if ok(fast) and ok(base) and fast is not None and base is not None:
        served = fast['served_rate_hz'] or 0.0
        factor = fast['latency_ms']['p50'] / base['latency_ms']['p50']
        targets.append(_target(
            'loop_sp_500hz', f'single process, default executor, {SINGLE_RATE_HZ} Hz: serves '
            f'>= {SINGLE_SERVED_MIN:g}/s, p50 <= {SINGLE_P50_FACTOR:g}x its {LOOP_RATE_HZ} Hz p50',
            f'{served:.0f}/s, p50 {fast["latency_ms"]["p50"]:.2f} ms = {factor:.2f}x '
            f'{base["latency_ms"]["p50"]:.2f} ms, p99 {fast["latency_ms"]["p99"]:.2f} ms',
            factor, served >= SINGLE_SERVED_MIN and factor <= SINGLE_P50_FACTOR))
    else:
        targets.append(_target('loop_sp_500hz', f'single process, default executor, '
                               f'{SINGLE_RATE_HZ} Hz', 'not measured', None, None))
    return targets


def _verifier_targets(verifier: Mapping[str, Any],
                      fleet: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    sizes = {row['cycles']: row for row in verifier['sizes']}
    targets = []
    erur = sizes.get(ERUR_CYCLES, {}).get('erur')
    targets.append(_target(
        'verify_erur', f'verify_erur, {ERUR_CYCLES:,} cycles: <= {ERUR_RATIO_MAX}x decoding '
        'the same topics (rosbags)',
        'not measured' if erur is None else (
            f'{erur["ratio_time"]:.2f}x ({erur["wall_s"]:.1f} vs '
            f'{erur["floor"]["wall_s"]:.1f} s)'),
        None if erur is None else erur['ratio_time'],
        None if erur is None else erur['ratio_time'] <= ERUR_RATIO_MAX and erur['exit'] == 0))
    for cycles in VERIFIER_RATIO_SIZES:
        row = sizes.get(cycles)
        targets.append(_target(
            f'verify_all_{cycles}', f'verify_all (re-derivation on), {cycles:,} cycles, one '
            f'process: <= {VERIFIER_RATIO_MAX}x the decode floor',
            'not measured' if row is None else (
                f'{row["ratio_time"]:.2f}x ({row["verifier"]["wall_s"]:.1f} vs '
                f'{row["floor"]["wall_s"]:.1f} s; {row["verifier"]["verdict"]})'),
            None if row is None else row['ratio_time'],
            None if row is None else row['ratio_time'] <= VERIFIER_RATIO_MAX))
    base, top = sizes.get(RSS_BASE_CYCLES), sizes.get(RSS_TOP_CYCLES)
    delta = None if base is None or top is None else (
        top['verifier']['max_rss_bytes'] - base['verifier']['max_rss_bytes']) / 1e6
    targets.append(_target(
        'verifier_memory', f'verify_all peak RSS at {RSS_TOP_CYCLES:,} <= RSS at '
        f'{RSS_BASE_CYCLES:,} + {RSS_DELTA_MAX_MB:g} MB',
        'not measured' if delta is None or top is None or base is None else (
            f'+{delta:.1f} MB ({top["verifier"]["max_rss_bytes"] / 1e6:.1f} vs '
            f'{base["verifier"]["max_rss_bytes"] / 1e6:.1f} MB)'),
        delta, None if delta is None else delta <= RSS_DELTA_MAX_MB))
    exponent = verifier['growth'].get('time_exponent')
    fitted = verifier['growth'].get('fit_sizes', [])
    measured_linear = len(fitted) >= 2 and max(fitted) >= 100 * min(fitted)
    targets.append(_target(
        'verifier_linear', f'verify_all time linear in size (log-log exponent <= '
        f'{LINEAR_EXPONENT_MAX})',
        'not measured' if exponent is None else f'exponent {exponent:.3f} over '
        f'{", ".join(f"{c:,}" for c in fitted)} cycles', exponent,
        (exponent <= LINEAR_EXPONENT_MAX) if exponent is not None and measured_linear
        else None))
    dask = {row['workers']: row for row in (fleet or {}).get('runs', [])
            if row.get('runner') == 'dask' and row.get('verdict') == 'holds'}
    speedup = dask[2]['bags_per_s'] / dask[1]['bags_per_s'] if 1 in dask and 2 in dask else None
    bags = (fleet or {}).get('bags')
    targets.append(_target(
        'fleet_dask', f'Dask LocalCluster over {bags or FLEET_BAGS} bags: 2 workers >= '
        f'{FLEET_SPEEDUP_MIN}x 1 worker (linear in the workers)',
        'not measured' if speedup is None else (
            f'{speedup:.2f}x ({dask[1]["wall_s"]:.1f} s -> {dask[2]["wall_s"]:.1f} s)'),
        speedup, None if speedup is None else speedup >= FLEET_SPEEDUP_MIN))
    return targets


def evaluate_targets(loop: Mapping[str, Any] | None, verifier: Mapping[str, Any] | None,
                     fleet: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """Each target of issue 26 with what was measured; met is None when not measured."""
    return [*(_loop_targets(loop) if loop is not None else ()),
            *(_verifier_targets(verifier, fleet) if verifier is not None else ())]


def _commit() -> str:
    """The commit measured (``-dirty`` when the tree has changes)."""
    def git(*args: str) -> str:
        done = subprocess.run(['git', *args], cwd=BENCH_DIR, capture_output=True,  # noqa: S603,S607
                              text=True, check=False)
        return done.stdout.strip() if done.returncode == 0 else ''
    head = git('rev-parse', '--short', 'HEAD') or 'unknown'
    return head + ('-dirty' if git('status', '--porcelain', '--untracked-files=no') else '')


def record_history(document: Mapping[str, Any], path: Path = HISTORY) -> None:
    """Add the run's measured rows to the history (CSV: date, commit, key, value, met, what)."""
    new = not path.is_file()
    with path.open('a', newline='') as out:
        writer = csv.writer(out)
        if new:
            writer.writerow(['date_utc', 'commit', 'key', 'value', 'met', 'measured'])
        for target in document['targets']:
            if target['measured'] == 'not measured':
                continue
            value = target['value']
            writer.writerow([document['date_utc'], document['commit'], target['key'],
                             '' if value is None else f'{value:.4g}',
                             {True: 'met', False: 'missed', None: ''}[target['met']],
                             target['measured']])


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
        bags, cycles = ((QUICK_FLEET_BAGS, QUICK_FLEET_CYCLES) if args.quick
                        else (FLEET_BAGS, FLEET_CYCLES))
        _say(f'== verifier fleet: {bags} bags of {cycles:,} cycles, 1 and 2 workers '
             '(local processes, Dask LocalCluster)')
        fleet = run_fleet(bags, cycles, workers=(1, 2), dask_workers=(1, 2),
                          cache_dir=args.cache_dir, log=_say)
        document['fleet'] = fleet
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
    document['targets'] = evaluate_targets(loop, verifier, document.get('fleet'))
    document['commit'] = _commit()
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
        _say('\n' + extra_tables(document['verifier'], document.get('fleet')))
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


def history_table(path: Path = HISTORY) -> str:
    """The history of every target row, oldest first (what docs/performance.md keeps)."""
    with path.open(newline='') as stream:
        entries = list(csv.DictReader(stream))
    order = {key: index for index, key in enumerate(dict.fromkeys(e['key'] for e in entries))}
    entries.sort(key=lambda e: (order[e['key']], e['date_utc']))
    return _table_markdown(['row', 'date (UTC)', 'commit', 'value', 'status', 'measured'], [
        [e['key'], e['date_utc'][:16].replace('T', ' '), e['commit'], e['value'] or '-',
         e['met'] or 'report', e['measured']] for e in entries])


def _table_markdown(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ['| ' + ' | '.join(header) + ' |', '|' + '---|' * len(header)]
    lines += ['| ' + ' | '.join(cell.replace('|', '/') for cell in row) + ' |' for row in rows]
    return '\n'.join(lines)


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
    parser.add_argument('--history', action='store_true',
                        help=f'run nothing: print the history of every target row ({HISTORY})')
    args = parser.parse_args(argv)
    if args.history:
        _say(history_table())
        return 0
    if args.from_json is not None:
        document = read_json(args.from_json)
        document['targets'] = evaluate_targets(document.get('closed_loop'),
                                               document.get('verifier'), document.get('fleet'))
        if 'judgement' in document:
            document['judgement']['targets'] = judgement_targets(document['judgement'])
        report(document, args.out_dir, 'quick_' if document.get('mode') == 'quick' else '')
        return 0
    args.rates = args.rates or list(QUICK_RATES if args.quick else DEFAULT_RATES)
    args.cycles = args.cycles or (QUICK_CYCLES if args.quick else DEFAULT_CYCLES)
    args.sizes = args.sizes or list(QUICK_SIZES if args.quick else DEFAULT_SIZES)
    document, ok = run(args)
    report(document, args.out_dir, 'quick_' if args.quick else '')
    if not args.quick and args.out_dir == RESULTS_DIR:
        record_history(document)
        _say(f'\n## History of the target rows ({HISTORY})\n')
        _say(history_table())
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
