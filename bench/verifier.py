"""Verifier benchmark: verify_all on bags of growing size vs a decode-only floor, and fleets.

Per bag size (cycles recorded as a run records them: the inputs, /vehicle_status,
/observations and /state/nav, then the six Ghost messages, with manifest.json; written by
bench/bagsynth.py with GhostBagWriter and cached under bench/.cache; --no-inputs: the six Ghost
messages only): the wall time and peak RSS of the combined verifier (``verify_all BAG`` as a
child process; its own rusage from wait4), of ``verify_all BAG --jobs N`` (the bag cut into N
parts, one process each; sizes up to --jobs-max-cycles) and of the floor, a child that only
reads and decodes every message of the same bag, the inputs included, with the faster of two
well-kept decoders (bench/decode_floor.py; both are timed on the 1e4-cycle bag, or the largest
below it, and the faster is used at every size). Then the time ratios to the floor and how
time and memory grow with size. A run holds when verify_all exits 0, its chain covers every
cycle and (on a bag with inputs) its re-derivation from the inputs re-derived every cycle
exactly: the re-derivation's verdict and cycles are printed and kept per size.

On that trial bag it also times, for reference, the verifier's own decoder and rclpy's C type
support (decode passes that are not floors, see docs/performance.md), and where verify_all's
time goes (bench/verify_parts.py: the reading pass, each checker alone, RECOVERY-v1's read of
the inputs, and the re-derivation).

Fleet: ``verify_all BAG ... --jobs W`` on --fleet-bags copies of the --fleet-cycles bag, for
each W of --fleet-workers, then ``--scheduler`` on a Dask LocalCluster of each size of
--dask-workers (started before the timing): bags per second and cycles per second.

    python bench/verifier.py --sizes 1000 10000 --json /tmp/verifier.json
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
import json
import math
from pathlib import Path
import re
import shutil
import sys
import tempfile
from typing import Any

from bagsynth import cached_bag, messages_per_cycle
from benchlib import BENCH_DIR, CACHE_DIR, ChildRun, machine_info, run_measured, write_json
from decode_floor import DECODERS, FLOOR_DECODERS

__all__ = ['DEFAULT_SIZES', 'FLEET_BAGS', 'FLEET_CYCLES', 'extra_tables', 'run_fleet',
           'run_verifier', 'main']

DEFAULT_SIZES = (1_000, 10_000, 100_000, 1_000_000)
#: verify_all --jobs N is measured for each N, on the sizes up to JOBS_MAX_CYCLES.
DEFAULT_JOBS: tuple[int, ...] = ()  # one bag is one process (issue 33: the split is gone)
JOBS_MAX_CYCLES = 100_000
#: The fleet: that many copies of a bag of that many cycles, local workers and Dask workers.
FLEET_BAGS, FLEET_CYCLES = 20, 2_000
FLEET_WORKERS = (1, 2)
DASK_WORKERS = (1, 2)
#: Sizes up to this are measured REPEATS times and the fastest run kept (they take seconds).
SMALL = 10_000
REPEATS = 3
_CHAIN = re.compile(r'^chain: (\d+)/(\d+) verified$', re.M)
_REPLAY = re.compile(r'^replay: .*$', re.M)
_REPLAY_HOLDS = re.compile(r'^replay: (\d+)/(\d+) messages re-derived exactly \((\d+) cycles')


def verifier_argv(*bags: Path | str) -> list[str]:
    """The combined verifier as a user runs it: the verify_all console script."""
    script = shutil.which('verify_all')
    if script is not None:
        return [script, *map(str, bags)]
    return [sys.executable, '-c',
            'import sys; from ghost_verify.cli import verify_all_main; '
            'sys.exit(verify_all_main())',
            *map(str, bags)]


def erur_argv(bag: Path) -> list[str]:
    """ERUR-v1 alone, as a user runs it: the verify_erur console script."""
    script = shutil.which('verify_erur')
    if script is not None:
        return [script, str(bag)]
    return [sys.executable, '-c', 'import sys; from ghost_verify.cli import verify_erur_main; '
            'sys.exit(verify_erur_main())', str(bag)]


def floor_argv(bag: Path, decoder: str) -> list[str]:
    return [sys.executable, str(BENCH_DIR / 'decode_floor.py'), str(bag), '--decoder', decoder]


def _best(argv: list[str], repeats: int) -> ChildRun:
    runs = [run_measured(argv) for _ in range(repeats)]
    for run in runs:
        if run.returncode != 0:
            return run
    return min(runs, key=lambda r: r.wall_s)


def replay_of(stdout: str, cycles: int) -> dict[str, Any]:
    """The re-derivation as verify_all's summary reports it.

    ``line`` (None when verify_all printed none: --no-replay), ``cycles`` re-derived and
    compared, ``holds``: every compared message re-derived exactly over all `cycles` cycles.
    """
    found = _REPLAY.search(stdout)
    line = None if found is None else found.group(0)
    exact = None if line is None else _REPLAY_HOLDS.match(line)
    compared = 0 if exact is None else int(exact.group(3))
    holds = exact is not None and exact.group(1) == exact.group(2) and compared == cycles
    return {'line': line, 'cycles': compared, 'holds': holds}


def _verdict(run: ChildRun, cycles: int, inputs: bool = True) -> tuple[str, list[str]]:
    """Return 'holds' (or what is wrong) and the verifier's summary lines.

    'holds' means the verifier exited 0, its chain line covers every cycle of the bag and,
    on a bag with `inputs`, its re-derivation re-derived every cycle exactly.
    """
    lines = [line for line in run.stdout.splitlines() if line.strip()]
    if run.returncode != 0:
        failed = [line for line in lines if 'VIOLATED' in line or 'error' in line]
        tail = failed or (run.stderr or run.stdout).strip().splitlines()
        return f'exit {run.returncode}: {tail[-1] if tail else ""}'[:100], lines
    chain = _CHAIN.search(run.stdout)
    if chain is None or chain.group(1) != chain.group(2) or int(chain.group(2)) != cycles:
        return f'chain line missing or short: {chain.group(0) if chain else None}', lines
    replay = replay_of(run.stdout, cycles)
    if inputs and not replay['holds']:
        return f're-derivation short: {replay["line"]}'[:100], lines
    return 'holds', lines


def _child(run: ChildRun) -> dict[str, Any]:
    return {'wall_s': run.wall_s, 'cpu_s': run.cpu_s, 'max_rss_bytes': run.max_rss_bytes,
            'returncode': run.returncode}


def _floor_messages(run: ChildRun) -> int | None:
    """How many messages the floor's child decoded (its JSON line), if it said."""
    try:
        return int(json.loads(run.stdout)['messages'])
    except (ValueError, KeyError, TypeError):
        return None


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


def _decode_pass(bag: Path, decoder: str) -> float:
    """The fastest of REPEATS decode-only passes (as the child times it, without start-up)."""
    passes = []
    for _ in range(REPEATS):
        run = run_measured(floor_argv(bag, decoder))
        if run.returncode != 0:
            raise RuntimeError(f'decode pass ({decoder}) failed: {run.stderr.strip()}')
        passes.append(float(json.loads(run.stdout)['seconds']))
    return min(passes)


def _breakdown(bag: Path) -> dict[str, Any]:
    run = run_measured([sys.executable, str(BENCH_DIR / 'verify_parts.py'), str(bag)])
    if run.returncode != 0:
        return {'error': (run.stderr or run.stdout).strip()[-300:]}
    parts: dict[str, Any] = json.loads(run.stdout)
    return parts


def run_verifier(sizes: Sequence[int], cache_dir: Path = CACHE_DIR,
                 log: Callable[[str], None] = print, *,
                 jobs: Sequence[int] = DEFAULT_JOBS,
                 jobs_max_cycles: int = JOBS_MAX_CYCLES,
                 inputs: bool = True) -> dict[str, Any]:
    """Measure verifier and floor at every size; return the verifier section of the results.

    `inputs`: bags that carry the inputs and manifest.json (verify_all re-derives them), or
    the Ghost messages only (the re-derivation is then not possible).
    """
    sizes = sorted(sizes)
    per_cycle = messages_per_cycle(inputs)
    bags: dict[int, Path] = {}
    generated: dict[str, float] = {}
    for cycles in sizes:
        bag, seconds = cached_bag(cycles, cache_dir, inputs=inputs)
        bags[cycles] = bag
        if seconds is not None:
            generated[str(cycles)] = seconds
            log(f'  wrote the {cycles:,}-cycle bag in {seconds:.1f} s '
                f'({1e6 * seconds / cycles:.0f} us/cycle)')
    # Pick the floor's decoder on a mid-size bag.
    trial_size = max([s for s in sizes if s <= SMALL] or sizes[:1])
    trial: dict[str, float] = {}
    for decoder in FLOOR_DECODERS:
        # The pass itself (as the child times it): interpreter start-up is not the decoder's.
        trial[decoder] = _decode_pass(bags[trial_size], decoder)
    decoder = min(trial, key=lambda name: trial[name])
    log(f'  floor decoder: {decoder} ({", ".join(f"{k} {v:.2f} s" for k, v in trial.items())}'
        f' on {trial_size:,} cycles)')
    reference: dict[str, float | str] = {}
    for other in DECODERS:
        if other not in FLOOR_DECODERS:
            try:
                reference[other] = _decode_pass(bags[trial_size], other)
            except RuntimeError as err:
                reference[other] = ' '.join(str(err).split())[-200:]
    log(f'  reference decode passes: {reference}')
    breakdown = _breakdown(bags[trial_size])
    log(f'  where the time goes ({trial_size:,} cycles, CPU s): {breakdown}')
    rows = []
    for cycles in sizes:
        bag = bags[cycles]
        repeats = REPEATS if cycles <= SMALL else 1
        floor = _best(floor_argv(bag, decoder), repeats)
        verify = _best(verifier_argv(bag), repeats)
        verdict, summary = _verdict(verify, cycles, inputs)
        decoded = _floor_messages(floor)
        if decoded != cycles * per_cycle:
            # The floor must decode every message the verifier reads, the inputs included.
            verdict = f'floor decoded {decoded} messages, not {cycles * per_cycle}'
        replay = replay_of(verify.stdout, cycles)
        row: dict[str, Any] = {
            'cycles': cycles,
            'messages': cycles * per_cycle,
            'bag_bytes': _bag_bytes(bag),
            'repeats': repeats,
            'verifier': {**_child(verify), 'cycles_per_s': cycles / verify.wall_s,
                         'verdict': verdict, 'replay': replay, 'summary': summary},
            'floor': {**_child(floor), 'cycles_per_s': cycles / floor.wall_s,
                      'messages': decoded},
            'ratio_time': verify.wall_s / floor.wall_s,
            'ratio_rss': verify.max_rss_bytes / floor.max_rss_bytes,
            'jobs': {},
        }
        rows.append(row)
        log(f'  {cycles:>9,} cycles: verifier {verify.wall_s:7.2f} s '
            f'{verify.max_rss_bytes / 1e6:7.1f} MB ({verdict}); floor {floor.wall_s:6.2f} s '
            f'{floor.max_rss_bytes / 1e6:6.1f} MB; ratio {row["ratio_time"]:.2f}')
        log(f'  {cycles:>9,} cycles: re-derivation {"ran" if replay["cycles"] else "did not run"}'
            f' ({replay["cycles"]:,} cycles re-derived): {replay["line"]}')
        if cycles <= jobs_max_cycles:
            # One property alone (ERUR-v1) against a floor of the topics it reads.
            erur = _best(erur_argv(bag), repeats)
            ghost_floor = _best([*floor_argv(bag, 'rosbags'), '--ghost-topics'], repeats)
            row['erur'] = {**_child(erur), 'exit': erur.returncode,
                           'floor': _child(ghost_floor),
                           'floor_messages': _floor_messages(ghost_floor),
                           'ratio_time': erur.wall_s / ghost_floor.wall_s}
            log(f'  {cycles:>9,} cycles: verify_erur {erur.wall_s:7.2f} s (exit '
                f'{erur.returncode}); Ghost-topic floor {ghost_floor.wall_s:6.2f} s; ratio '
                f'{row["erur"]["ratio_time"]:.2f}')
        for count in jobs if cycles <= jobs_max_cycles else ():
            split = _best([*verifier_argv(bag), '--jobs', str(count)], repeats)
            split_verdict, _ = _verdict(split, cycles, inputs)
            row['jobs'][str(count)] = {
                **_child(split), 'verdict': split_verdict, 'cycles_per_s': cycles / split.wall_s,
                'replay': replay_of(split.stdout, cycles),
                'ratio_time': split.wall_s / floor.wall_s}
            log(f'  {cycles:>9,} cycles: verify_all --jobs {count} {split.wall_s:7.2f} s '
                f'({split_verdict}); ratio {split.wall_s / floor.wall_s:.2f}')
    return {
        'config': {'sizes': list(sizes), 'inputs': inputs, 'messages_per_cycle': per_cycle,
                   'repeats_small': REPEATS,
                   'verifier_argv': verifier_argv(Path('BAG')), 'jobs': list(jobs),
                   'jobs_max_cycles': jobs_max_cycles},
        'floor_decoder': decoder,
        'decoder_trial_s': trial,
        'decoder_trial_cycles': trial_size,
        'reference_decoders_s': reference,
        'breakdown': breakdown,
        'bags_generated_s': generated,
        'sizes': rows,
        'growth': growth(rows),
    }


_TOTAL = re.compile(r'^total: (\d+) bags?, (\d+) cycles in .*: (\d+) hold, (\d+) fail', re.M)


def _fleet_row(label: str, workers: int, run: ChildRun, bags: int, cycles: int
               ) -> dict[str, Any]:
    total = _TOTAL.search(run.stdout)
    holds = (run.returncode == 0 and total is not None and int(total.group(1)) == bags
             and int(total.group(2)) == bags * cycles and int(total.group(3)) == bags)
    return {'runner': label, 'workers': workers, **_child(run),
            'verdict': 'holds' if holds else f'exit {run.returncode}: '
                       f'{(run.stderr or run.stdout).strip()[-120:]}',
            'bags_per_s': bags / run.wall_s, 'cycles_per_s': bags * cycles / run.wall_s}


def run_fleet(bags: int = FLEET_BAGS, cycles: int = FLEET_CYCLES,
              workers: Sequence[int] = FLEET_WORKERS, dask_workers: Sequence[int] = DASK_WORKERS,
              cache_dir: Path = CACHE_DIR, log: Callable[[str], None] = print, *,
              inputs: bool = True) -> dict[str, Any]:
    """Throughput of verify_all on a fleet: `bags` copies of a bag of `cycles` cycles.

    Local: ``verify_all BAG ... --jobs W`` per W of `workers`. Dask: a LocalCluster of W
    worker processes (one thread each) per W of `dask_workers`, started before the timed
    ``verify_all BAG ... --scheduler ADDRESS``. Every run is a child process (start-up included).
    The fleet's bags are one bag: with `inputs`, verify_all is first run on it alone (not
    timed), and a fleet run holds only if its re-derivation re-derived every cycle.
    """
    bag, _ = cached_bag(cycles, cache_dir, inputs=inputs)
    replay = replay_of(run_measured(verifier_argv(bag)).stdout, cycles)
    log(f'  fleet bag: {replay["line"]}')
    rows = []
    with tempfile.TemporaryDirectory(prefix='ghost-bench-fleet-') as tmp:
        # Distinct paths for one cached bag (the fleet's bags are the same flight).
        paths = []
        for index in range(bags):
            link = Path(tmp) / f'uav{index + 1}'
            link.symlink_to(bag.resolve(), target_is_directory=True)
            paths.append(link)
        for count in workers:
            argv = verifier_argv(*paths) + ([] if count == 1 else ['--jobs', str(count)])
            rows.append(_fleet_row('local', count, run_measured(argv), bags, cycles))
            log(f'  fleet of {bags} x {cycles:,} cycles, {count} local worker(s): '
                f'{rows[-1]["wall_s"]:.1f} s, {rows[-1]["bags_per_s"]:.2f} bags/s '
                f'({rows[-1]["verdict"]})')
        for count in dask_workers:
            try:
                from distributed import LocalCluster
            except ImportError as err:
                rows.append({'runner': 'dask', 'workers': count, 'verdict': f'no dask: {err}'})
                continue
            with LocalCluster(n_workers=count, threads_per_worker=1, processes=True,
                              dashboard_address=':0') as cluster:
                argv = verifier_argv(*paths) + ['--scheduler', cluster.scheduler_address]
                rows.append(_fleet_row('dask', count, run_measured(argv), bags, cycles))
            log(f'  fleet of {bags} x {cycles:,} cycles, Dask LocalCluster of {count} '
                f'worker(s): {rows[-1]["wall_s"]:.1f} s, {rows[-1]["bags_per_s"]:.2f} bags/s '
                f'({rows[-1]["verdict"]})')
    if inputs and not replay['holds']:
        for row in rows:
            row['verdict'] = f're-derivation short: {replay["line"]}'[:100]
    return {'bags': bags, 'cycles_per_bag': cycles, 'inputs': inputs, 'replay': replay,
            'runs': rows}


def _cell(value: float | None, digits: int = 2) -> str:
    return '-' if value is None else f'{value:.{digits}f}'


def _markdown(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(header)]
    def line(cells: Sequence[str]) -> str:
        return '| ' + ' | '.join(c.rjust(w) for c, w in zip(cells, widths, strict=True)) + ' |'
    return '\n'.join([line(header), '|' + '|'.join('-' * (w + 1) + ':' for w in widths) + '|',
                      *(line(r) for r in rows)])


def extra_tables(result: Mapping[str, Any], fleet: Mapping[str, Any] | None = None) -> str:
    """The --jobs table, the decode passes, where the time goes and the fleet's throughput."""
    out = []
    header = ['cycles', 'floor s', 'verify_all s', 'ratio', 're-derived']
    counts = sorted({int(n) for row in result['sizes'] for n in row.get('jobs', {})})
    for count in counts:
        header += [f'--jobs {count} s', 'ratio']
    rows = []
    for row in result['sizes']:
        replay = row['verifier'].get('replay', {})
        rederived = (f'{replay["cycles"]:,} holds' if replay.get('holds')
                     else 'not possible' if 'not possible' in str(replay.get('line'))
                     else f'{replay.get("cycles", 0):,} NOT')
        cells = [f'{row["cycles"]:,}', _cell(row['floor']['wall_s']),
                 _cell(row['verifier']['wall_s']), _cell(row['ratio_time']), rederived]
        for count in counts:
            split = row.get('jobs', {}).get(str(count))
            cells += (['-', '-'] if split is None else
                      [_cell(split['wall_s']), _cell(split['ratio_time'])
                       + ('' if split['verdict'] == 'holds' else ' !')])
        rows.append(cells)
    out.append(_markdown(header, rows))
    trial = result['decoder_trial_s']
    floor_s = trial[result['floor_decoder']]
    passes = [[name, 'floor' if name == result['floor_decoder'] else
               ('floor candidate' if name in trial else 'reference'),
               _cell(seconds, 3) if isinstance(seconds, float) else str(seconds)[:60],
               _cell(seconds / floor_s) if isinstance(seconds, float) else '-']
              for name, seconds in {**trial, **result.get('reference_decoders_s', {})}.items()]
    out.append(f'decode-only passes on the {result["decoder_trial_cycles"]:,}-cycle bag:\n'
               + _markdown(['decoder', 'role', 'pass s', 'x floor'], passes))
    parts = result.get('breakdown', {})
    if 'read_s' in parts:
        cycles = max(parts['cycles'], 1)
        items = [('reading (decode, hash, group)', parts['read_s']),
                 *((f'checker: {name}', seconds) for name, seconds in parts['checkers'].items()),
                 ('re-derivation, RECOVERY-v1 on its read' if parts['recovery_follows'] else
                  're-derivation; RECOVERY-v1 (its own read)', parts['rederive_with_recovery_s'])]
        total = sum(seconds for _, seconds in items)
        items += [('all', total),
                  ('(ref.) re-derivation alone', parts['rederive_s']),
                  ('(ref.) its read of the inputs alone', parts['rederive_inputs_s']),
                  ('(ref.) RECOVERY-v1 alone, its own read', parts['recovery_alone_s'])]
        rows = [[name, _cell(seconds), f'{1e6 * seconds / cycles:.0f}',
                 _cell(seconds / floor_s)] for name, seconds in items]
        out.append(f"where verify_all's time goes ({parts['cycles']:,} cycles, CPU s; "
                   f"{parts['rederive']['summary']}):\n"
                   + _markdown(['part', 'CPU s', 'us/cycle', 'x floor pass'], rows))
    if fleet:
        rows = [[run['runner'], str(run['workers']), _cell(run.get('wall_s'), 1),
                 _cell(run.get('bags_per_s')), _cell(run.get('cycles_per_s'), 0),
                 str(run['verdict'])[:40]] for run in fleet['runs']]
        out.append(f'fleet: {fleet["bags"]} bags of {fleet["cycles_per_bag"]:,} cycles:\n'
                   + _markdown(['runner', 'workers', 'wall s', 'bags/s', 'cycles/s',
                                'verdict'], rows))
    return '\n\n'.join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--sizes', type=int, nargs='+', default=list(DEFAULT_SIZES))
    parser.add_argument('--jobs', type=int, nargs='*', default=list(DEFAULT_JOBS),
                        help='verify_all --jobs N measured for each N (default %(default)s)')
    parser.add_argument('--jobs-max-cycles', type=int, default=JOBS_MAX_CYCLES,
                        help='--jobs is measured on sizes up to this (default %(default)s)')
    parser.add_argument('--fleet-bags', type=int, default=FLEET_BAGS,
                        help='bags in the fleet; 0 skips it (default %(default)s)')
    parser.add_argument('--fleet-cycles', type=int, default=FLEET_CYCLES)
    parser.add_argument('--fleet-workers', type=int, nargs='*', default=list(FLEET_WORKERS))
    parser.add_argument('--dask-workers', type=int, nargs='*', default=list(DASK_WORKERS))
    parser.add_argument('--cache-dir', type=Path, default=None,
                        help='where bags are cached (default bench/.cache; with --no-cache, '
                             'a temporary folder)')
    parser.add_argument('--no-cache', action='store_true',
                        help='write the bags into a temporary folder, deleted at the end')
    parser.add_argument('--json', type=Path, default=None, help='write the results here')
    parser.add_argument('--no-inputs', dest='inputs', action='store_false',
                        help='bags of the Ghost messages only (no inputs, no manifest.json: '
                             'the re-derivation is not possible), for comparison')
    args = parser.parse_args(argv)
    from report import verifier_table

    with tempfile.TemporaryDirectory(prefix='ghost-bench-bags-') as tmp:
        cache = Path(tmp) if args.no_cache else (args.cache_dir or CACHE_DIR)
        result = run_verifier(args.sizes, cache, jobs=args.jobs,
                              jobs_max_cycles=args.jobs_max_cycles, inputs=args.inputs)
        fleet = None
        if args.fleet_bags > 0:
            fleet = run_fleet(args.fleet_bags, args.fleet_cycles, args.fleet_workers,
                              args.dask_workers, cache, inputs=args.inputs)
            result['fleet'] = fleet
    print(verifier_table(result))
    print()
    print(extra_tables(result, fleet))
    if args.json is not None:
        write_json(args.json, {'machine': machine_info(), 'verifier': result})
    verdicts = [row['verifier']['verdict'] for row in result['sizes']]
    verdicts += [split['verdict'] for row in result['sizes'] for split in row['jobs'].values()]
    verdicts += [run['verdict'] for run in (fleet or {}).get('runs', [])]
    return 0 if all(verdict == 'holds' for verdict in verdicts) else 1


if __name__ == '__main__':
    sys.exit(main())
