"""What each ghost node's callbacks cost in CPU without DDS: where the loop's extra time goes.

The six processing node classes are built in one process (rclpy initialised, nothing spun)
with their publishers replaced by a stub that keeps the message. The nominal scenario is then
fed through them cycle by cycle, as DDS would deliver it (fix, prediction, belief; raw and
outcome; calibrated; rationale), and each callback is timed. A floor relay does none of this
work (it copies a stamp into a pre-built message), and publishing costs the same in both
graphs, so this time is what a ghost hop adds to a relay hop. A second pass under cProfile
names the functions that time is spent in.

    python bench/node_costs.py --cycles 2000 --json /tmp/costs.json
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
import cProfile
import os
from pathlib import Path
import pstats
import sys
import time
from typing import Any

from benchlib import bench_ros_env, machine_info, write_json
import rclpy

from ghost_core.scenarios import generate_scenario
from ghost_nodes.nodes.action_emitter import ActionEmitterNode
from ghost_nodes.nodes.calibrator import CalibratorNode
from ghost_nodes.nodes.decision_policy import DecisionPolicyNode
from ghost_nodes.nodes.forward_predictor import ForwardPredictorNode
from ghost_nodes.nodes.outcome_evaluator import OutcomeEvaluatorNode
from ghost_nodes.nodes.self_assessor import SelfAssessorNode
from ghost_nodes.scenario_messages import cycle_messages

__all__ = ['costs_table', 'measure_node_costs', 'main']

ROLES = ('self_assessor', 'forward_predictor', 'outcome_evaluator', 'calibrator',
         'decision_policy', 'action_emitter')


class _StubPublisher:
    """Stands in for a node's publisher: keeps the last message instead of sending it."""

    def __init__(self) -> None:
        self.sent: list[Any] = []

    def publish(self, msg: Any) -> None:
        self.sent.append(msg)

    def take(self) -> list[Any]:
        sent, self.sent = self.sent, []
        return sent


def _build() -> tuple[dict[str, Any], dict[str, _StubPublisher]]:
    nodes: dict[str, Any] = {
        'self_assessor': SelfAssessorNode(),
        'forward_predictor': ForwardPredictorNode(),
        'outcome_evaluator': OutcomeEvaluatorNode(),
        'calibrator': CalibratorNode(),
        'decision_policy': DecisionPolicyNode(),
        'action_emitter': ActionEmitterNode(),
    }
    stubs = {}
    for role, node in nodes.items():
        stubs[role] = _StubPublisher()
        node._pub = stubs[role]
    return nodes, stubs


Timer = Callable[[str, Callable[[Any], None], Any], None]


def _feed(nodes: dict[str, Any], stubs: dict[str, _StubPublisher], inputs: list[Any],
          timer: Timer) -> int:
    """Run every cycle through the nodes in pipeline order; return the actuations produced."""
    assessor, predictor = nodes['self_assessor'], nodes['forward_predictor']
    evaluator, calibrator = nodes['outcome_evaluator'], nodes['calibrator']
    policy, emitter = nodes['decision_policy'], nodes['action_emitter']
    previous_predictions: list[Any] = []
    actuations = 0
    for odom, obs in inputs:
        timer('self_assessor', assessor._on_belief, odom)
        raws = stubs['self_assessor'].take()
        timer('forward_predictor', predictor._on_belief, odom)
        predictions = stubs['forward_predictor'].take()
        if obs is not None:
            timer('outcome_evaluator', evaluator._on_observation, obs)
        for prediction in previous_predictions:
            timer('outcome_evaluator', evaluator._on_prediction, prediction)
        timer('outcome_evaluator', evaluator._on_belief, odom)
        outcomes = stubs['outcome_evaluator'].take()
        previous_predictions = predictions
        for raw in raws:
            timer('calibrator', calibrator._on_raw, raw)
        for outcome in outcomes:
            timer('calibrator', calibrator._on_outcome, outcome)
        for calibrated in stubs['calibrator'].take():
            timer('decision_policy', policy._on_calibrated, calibrated)
        for rationale in stubs['decision_policy'].take():
            timer('action_emitter', emitter._on_decision, rationale)
        actuations += len(stubs['action_emitter'].take())
    return actuations


def measure_node_costs(cycles: int = 2000, rate_hz: float = 100.0,
                       top: int = 6) -> dict[str, Any]:
    """Per node: callback CPU per cycle (us) and the functions with the most own time."""
    period_ns = round(1e9 / rate_hz)
    scenario = generate_scenario('nominal', cycles=cycles, period_ns=period_ns)
    inputs = [cycle_messages(c) for c in scenario.cycles]
    # period_s as the closed-loop benchmark sets it (a global -p reaches every node).
    rclpy.init(args=['--ros-args', '-p', f'period_s:={period_ns / 1e9!r}'])
    try:
        nodes, stubs = _build()
        spent = dict.fromkeys(ROLES, 0)

        def timed(role: str, call: Callable[[Any], None], arg: Any) -> None:
            start = time.perf_counter_ns()
            call(arg)
            spent[role] += time.perf_counter_ns() - start

        actuations = _feed(nodes, stubs, inputs, timed)
        for node in nodes.values():
            node.destroy_node()
        # Second pass, profiled per node, on fresh nodes (same inputs, same state).
        nodes, stubs = _build()
        profiles = {role: cProfile.Profile() for role in ROLES}

        def profiled(role: str, call: Callable[[Any], None], arg: Any) -> None:
            profiles[role].runcall(call, arg)

        _feed(nodes, stubs, inputs, profiled)
        for node in nodes.values():
            node.destroy_node()
    finally:
        rclpy.try_shutdown()
    per_node = {}
    for role in ROLES:
        per_node[role] = {'us_per_cycle': spent[role] / 1e3 / cycles,
                          'breakdown': _breakdown(pstats.Stats(profiles[role]), top)}
    critical = ('self_assessor', 'calibrator', 'decision_policy', 'action_emitter')
    return {
        'cycles': cycles,
        'rate_hz': rate_hz,
        'actuations': actuations,
        'nodes': per_node,
        'total_us_per_cycle': sum(n['us_per_cycle'] for n in per_node.values()),
        # The hops a cycle's latency waits for: max(assessor, evaluator) then the chain.
        'critical_path_us': max(per_node['self_assessor']['us_per_cycle'],
                                per_node['outcome_evaluator']['us_per_cycle'])
        + sum(per_node[r]['us_per_cycle'] for r in critical[1:]),
    }


def _label(func: tuple[str, int, str]) -> str:
    """module.function of a profiler entry (the path from the package root on)."""
    path, _line, name = func
    parts = path.replace('\\', '/').split('/')
    for root in ('ghost_nodes', 'ghost_core', 'rclpy', 'json'):
        if root in parts[:-1]:
            index = len(parts) - 1 - parts[::-1].index(root)
            module = '.'.join(parts[index:])
            return f'{module.removesuffix(".py")}.{name}'
    return name if path == '~' else f'{parts[-1].removesuffix(".py")}.{name}'


def _breakdown(stats: pstats.Stats, top: int) -> list[dict[str, Any]]:
    """Return where a node's callbacks spend their time.

    Each function the node's own methods call, with the share of the node's callback time
    spent in it (its callees included), largest first.
    """
    entries = stats.stats  # type: ignore[attr-defined]
    total = max(stats.total_tt, 1e-12)  # type: ignore[attr-defined]
    shares: dict[str, float] = {}
    own = 0.0
    for func, (_cc, _nc, tt, _ct, callers) in entries.items():
        in_node = '/nodes/' in func[0] and 'ghost_nodes' in func[0]
        if in_node:
            own += tt
            continue
        for caller, edge in callers.items():
            if '/nodes/' in caller[0] and 'ghost_nodes' in caller[0]:
                shares[_label(func)] = shares.get(_label(func), 0.0) + edge[3] / total
    ranked = sorted(shares.items(), key=lambda item: item[1], reverse=True)[:top]
    out = [{'function': name, 'share': share} for name, share in ranked]
    out.append({'function': '(the node methods themselves)', 'share': own / total})
    return out


def costs_table(result: dict[str, Any]) -> str:
    """One line per node: callback CPU per cycle and its three hottest functions."""
    lines = [f'{"node":18} {"us/cycle":>9}  where (share of the node\'s callback time)']
    for role in ROLES:
        node = result['nodes'][role]
        parts = ', '.join(f'{item["function"]} {100 * item["share"]:.0f}%'
                          for item in node['breakdown'][:4])
        lines.append(f'{role:18} {node["us_per_cycle"]:9.0f}  {parts}')
    lines.append(f'{"all six":18} {result["total_us_per_cycle"]:9.0f}  (critical path '
                 f'{result["critical_path_us"]:.0f} us: max(assessor, evaluator) + calibrator '
                 '+ policy + emitter)')
    return '\n'.join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--cycles', type=int, default=2000)
    parser.add_argument('--rate-hz', type=float, default=100.0,
                        help='stamp period of the fed cycles (default 100 Hz)')
    parser.add_argument('--json', type=Path, default=None)
    parser.add_argument('--domain-id', type=int, default=None,
                        help='ROS_DOMAIN_ID (default: $ROS_DOMAIN_ID, else 150-199 by pid)')
    args = parser.parse_args(argv)
    # The nodes are never spun, but they join DDS: keep them off everyone else's domain.
    os.environ.update(bench_ros_env(args.domain_id))
    result = measure_node_costs(args.cycles, args.rate_hz)
    print(costs_table(result))
    if args.json is not None:
        write_json(args.json, {'machine': machine_info(), 'node_costs': result})
    return 0 if result['actuations'] == args.cycles else 1


if __name__ == '__main__':
    sys.exit(main())
