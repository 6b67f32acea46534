"""Tables (plain text, also valid Markdown) and plots (PNG, matplotlib Agg) of bench results."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ['closed_loop_table', 'plot_closed_loop', 'plot_verifier', 'targets_table',
           'verifier_table']

ROLES = ('self_assessor', 'forward_predictor', 'outcome_evaluator', 'calibrator',
         'decision_policy', 'action_emitter')
_SHORT = {'self_assessor': 'assess', 'forward_predictor': 'predict',
          'outcome_evaluator': 'evaluate', 'calibrator': 'calib', 'decision_policy': 'decide',
          'action_emitter': 'emit', 'driver': 'driver'}


def _num(value: float | None, digits: int = 2) -> str:
    return '-' if value is None else f'{value:.{digits}f}'


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(header)]
    def line(cells: Sequence[str]) -> str:
        return '| ' + ' | '.join(c.rjust(w) for c, w in zip(cells, widths, strict=True)) + ' |'
    sep = '|' + '|'.join('-' * (w + 1) + ':' for w in widths) + '|'
    return '\n'.join([line(header), sep, *(line(r) for r in rows)])


def closed_loop_table(result: Mapping[str, Any]) -> str:
    """Latency, loss and CPU per rate for the floor and each ghost graph, with the ratios.

    ghost / ghost_mp_events: a process per node on rclpy's SingleThreadedExecutor /
    EventsExecutor; ghost_single / ghost_events: single-process mode (one ghost_agent
    process) on the SingleThreadedExecutor / EventsExecutor, in-process delivery between the
    nodes; ghost_events_dds: the EventsExecutor, every hop through DDS; ghost_events_recorded:
    ghost_events with the recorder recording every topic.
    """
    header = ['rate Hz', 'graph', 'lost', 'p50 ms', 'p99 ms', 'max ms', 'served Hz',
              'CPU s', 'CPU % (nodes)', 'p50 ratio', 'p99 ratio']
    systems = ('floor', 'ghost', 'ghost_mp_events', 'ghost_single', 'ghost_events',
               'ghost_events_dds', 'ghost_events_recorded')
    rows = []
    for row in result['rates']:
        for system in systems:
            stats = row.get(system, {'error': 'not run'})
            first = system == 'floor'
            if stats.get('error') == 'not run':
                continue
            if 'error' in stats:
                rows.append([f'{row["rate_hz"]:g}' if first else '', system, 'ERROR',
                             stats['error'][:40], '', '', '', '', '', '', ''])
                continue
            lat = stats['latency_ms']
            cpu = stats['cpu_percent']
            if 'ghost_agent' in cpu:  # single-process mode: the six nodes share one process
                per_node = f'{_num(cpu["ghost_agent"], 0)} (one process)'
                if 'recorder' in cpu:
                    per_node += f' + rec {_num(cpu["recorder"], 0)}'
            else:
                per_node = ' '.join(f'{_num(cpu.get(r), 0)}' for r in ROLES)
            ratios = row.get('ratios', {}).get(system, {})
            rows.append([
                f'{row["rate_hz"]:g}' if first else '', system,
                f'{stats["lost"]}/{stats["cycles"]}', _num(lat['p50']), _num(lat['p99']),
                _num(lat['max']), _served(stats),
                _num(stats['cpu_total_nodes_s']), per_node,
                '' if system == 'floor' else _num(ratios.get('p50', row.get('ratio_p50'))),
                '' if system == 'floor' else _num(ratios.get('p99', row.get('ratio_p99'))),
            ])
    best = result['highest_zero_loss_rate_hz']
    sustained = result.get('highest_sustained_rate_hz', {})
    footer = (f'CPU % per node, in order: {" ".join(_SHORT[r] for r in ROLES)} (100 = one core);'
              ' served Hz: cycles actuated per second (* = saturated: fed faster than it serves)')
    footer += '\nhighest rate with zero loss (and none below): ' + ', '.join(
        f'{system} {_rate(best.get(system))}' for system in systems)
    footer += '\nhighest rate served without saturation (and none below): ' + ', '.join(
        f'{system} {_rate(sustained.get(system))}' for system in systems)
    return _table(header, rows) + '\n' + footer


def _served(stats: Mapping[str, Any]) -> str:
    """Cycles served per second; '*' marks a saturated graph (serves less than it is fed)."""
    served = stats.get('served_rate_hz')
    return _num(served, 0) + ('' if stats.get('keeps_up', True) else '*')


def _rate(value: float | None) -> str:
    return 'none' if value is None else f'{value:g} Hz'


def verifier_table(result: Mapping[str, Any]) -> str:
    """Time, throughput and peak RSS per bag size for the verifier and the decode floor."""
    header = ['cycles', 'bag MB', 'verify s', 'cycles/s', 'RSS MB', 'floor s', 'floor RSS MB',
              'time ratio', 'verdict']
    rows = []
    for row in result['sizes']:
        v, f = row['verifier'], row['floor']
        rows.append([
            f'{row["cycles"]:,}', _num(row['bag_bytes'] / 1e6, 1), _num(v['wall_s']),
            f'{v["cycles_per_s"]:,.0f}', _num(v['max_rss_bytes'] / 1e6, 1),
            _num(f['wall_s']), _num(f['max_rss_bytes'] / 1e6, 1), _num(row['ratio_time']),
            v['verdict'],
        ])
    growth = result.get('growth', {})
    footer = (f'floor decoder: {result["floor_decoder"]} (decode-only pass on the '
              f'{result["decoder_trial_cycles"]:,}-cycle bag: {_decoders(result)})')
    if growth:
        footer += (f'\ngrowth: time exponent {_num(growth.get("time_exponent"))} '
                   f'(1 = linear); RSS {_num(growth.get("rss_mb_per_1e6_cycles"), 1)} MB per '
                   f'1e6 cycles; largest - 1e4 RSS: {_num(growth.get("rss_delta_mb"), 1)} MB')
    return _table(header, rows) + '\n' + footer


def _decoders(result: Mapping[str, Any]) -> str:
    return ', '.join(f'{name} {_num(s, 3)} s' for name, s in result['decoder_trial_s'].items())


def targets_table(targets: Sequence[Mapping[str, Any]]) -> str:
    """The issue's targets, what was measured, and whether each is met."""
    rows = [[t['target'], t['measured'], {True: 'met', False: 'MISSED', None: 'n/a'}[t['met']]]
            for t in targets]
    return _table(['target', 'measured', 'status'], rows)


def plot_closed_loop(result: Mapping[str, Any], path: Path) -> Path:
    """Latency (p50 and p99) vs rate for ghost and floor, log-log, lost cycles annotated."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    styles = {'ghost': ('tab:red', 'o'), 'floor': ('tab:blue', 's')}
    for system, (color, marker) in styles.items():
        points = [(r['rate_hz'], r[system]) for r in result['rates'] if 'error' not in r[system]]
        if not points:
            continue
        rates = [p[0] for p in points]
        ax.plot(rates, [p[1]['latency_ms']['p50'] for p in points], color=color,
                marker=marker, label=f'{system} p50')
        ax.plot(rates, [p[1]['latency_ms']['p99'] for p in points], color=color,
                marker=marker, linestyle='--', alpha=0.7, label=f'{system} p99')
        saturated = [(rate, stats) for rate, stats in points if stats.get('keeps_up') is False]
        if saturated:
            # Hollow: the graph is fed faster than it serves; its latency is queueing.
            ax.scatter([r for r, _ in saturated],
                       [st['latency_ms']['p50'] for _, st in saturated], s=90,
                       facecolors='white', edgecolors=color, zorder=3, marker=marker)
        for rate, stats in points:
            if stats['lost']:
                ax.annotate(f'{stats["lost"]} lost', (rate, stats['latency_ms']['p99']),
                            textcoords='offset points', xytext=(4, 6), color=color, fontsize=8)
    ax.text(0.02, 0.70, 'hollow marker: saturated (fed faster than it serves)',
            transform=ax.transAxes, ha='left', va='top', fontsize=8, color='dimgrey')
    ax.set_xscale('log')
    ax.set_yscale('log')
    ax.set_xlabel('cycle rate (Hz)')
    ax.set_ylabel('belief published -> actuation received (ms)')
    ax.set_title('Closed loop: latency vs rate (ghost graph vs bare relay floor)')
    ax.grid(True, which='both', alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_verifier(result: Mapping[str, Any], path: Path) -> Path:
    """Wall time and peak RSS vs bag size, verifier and decode-only floor, log-log."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    sizes = [r['cycles'] for r in result['sizes']]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2))
    for system, color in (('verifier', 'tab:red'), ('floor', 'tab:blue')):
        left.plot(sizes, [r[system]['wall_s'] for r in result['sizes']], marker='o',
                  color=color, label=system)
        right.plot(sizes, [r[system]['max_rss_bytes'] / 1e6 for r in result['sizes']],
                   marker='o', color=color, label=system)
    if sizes:
        # Slope 1 through the verifier's first point at >= 1e4 cycles (below, interpreter
        # start-up dominates): linear growth.
        base = next((r for r in result['sizes'] if r['cycles'] >= 10_000), result['sizes'][0])
        t0, n0 = base['verifier']['wall_s'], base['cycles']
        left.plot(sizes, [t0 * s / n0 for s in sizes], color='grey', linestyle=':',
                  label=f'linear (through {n0:,})')
        rss = {r['cycles']: r['verifier']['max_rss_bytes'] / 1e6 for r in result['sizes']}
        if 10_000 in rss:
            right.axhline(rss[10_000] + 50, color='grey', linestyle=':',
                          label='target: RSS(1e4) + 50 MB')
    left.set_xscale('log')
    left.set_yscale('log')
    left.set_xlabel('bag size (cycles, 6 messages each)')
    left.set_ylabel('wall time (s)')
    left.set_title('Verifier time vs bag size')
    right.set_xscale('log')
    right.set_yscale('log')
    right.set_xlabel('bag size (cycles)')
    right.set_ylabel('peak RSS (MB)')
    right.set_title('Verifier memory vs bag size')
    for ax in (left, right):
        ax.grid(True, which='both', alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
