"""What each ghost node's callbacks cost in CPU without DDS: where the loop's extra time goes.

The six processing node classes are built in one process (rclpy initialised, nothing spun)
with their publishers replaced by a stub that keeps the message. The nominal scenario is then
fed through them cycle by cycle, as DDS would deliver it (fix, prediction, belief; raw and
outcome; calibrated; rationale), and each callback is timed. A floor relay does none of this
work (it copies a stamp into a pre-built message), and publishing costs the same in both
graphs, so this time is what a ghost hop adds to a relay hop. A second pass under cProfile
names the functions that time is spent in.

Both deliveries are measured: ``dds``, each message as a node of another process receives it
(it converts the message to its dict and validates it), and ``in_process``, as a node of the
same ghost_agent process does (``ghost_nodes.intra_process``: the message comes with the dict
and contract it was built from, which it neither converts nor validates again).

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
from ghost_nodes.intra_process import IntraProcessBus, IntraProcessPublisher, Memo
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
    """Stands in for a node's publisher (delivery 'dds'): keeps each message instead of sending."""

    def __init__(self, msg_type: type[Any]) -> None:
        self.msg_type = msg_type
        self.sent: list[tuple[Any, Memo | None]] = []

    def publish(self, msg: Any) -> None:
        self.sent.append((msg, None))

    def take(self) -> list[tuple[Any, Memo | None]]:
        sent, self.sent = self.sent, []
        return sent


class _StubIntraProcessPublisher(IntraProcessPublisher):
    """The same for delivery 'in_process': keeps each message with the memo it would carry."""

    def __init__(self, real: IntraProcessPublisher) -> None:
        super().__init__(real._bus, real.node, real.msg_type, real.dds, real.qos)
        self.sent: list[tuple[Any, Memo | None]] = []

    def publish(self, msg: Any, memo: Memo | None = None) -> None:
        self.sent.append((msg, memo))

    def take(self) -> list[tuple[Any, Memo | None]]:
        sent, self.sent = self.sent, []
        return sent


Stub = _StubPublisher | _StubIntraProcessPublisher


def _build(delivery: str) -> tuple[dict[str, Any], dict[str, Stub], IntraProcessBus]:
    # in_process: the nodes get a bus, as in ghost_agent (their subscriptions are registered,
    # never connected: nothing is spun); dds: no bus, as a node in a process of its own.
    bus = IntraProcessBus()
    options: dict[str, Any] = {'intra_process_bus': bus} if delivery == 'in_process' else {}
    classes = {'self_assessor': SelfAssessorNode, 'forward_predictor': ForwardPredictorNode,
               'outcome_evaluator': OutcomeEvaluatorNode, 'calibrator': CalibratorNode,
               'decision_policy': DecisionPolicyNode, 'action_emitter': ActionEmitterNode}
    nodes: dict[str, Any] = {role: cls(**options) for role, cls in classes.items()}
    stubs: dict[str, Stub] = {}
    for role, node in nodes.items():
        stubs[role] = (_StubIntraProcessPublisher(node._pub) if delivery == 'in_process'
                       else _StubPublisher(node._pub.msg_type))
        node._pub = stubs[role]
    return nodes, stubs, bus


Timer = Callable[[str, Callable[[Any], None], tuple[Any, Memo | None]], None]


def _feed(nodes: dict[str, Any], stubs: dict[str, Stub], inputs: list[Any],
          timer: Timer) -> int:
    """Run every cycle through the nodes in pipeline order; return the actuations produced."""
    assessor, predictor = nodes['self_assessor'], nodes['forward_predictor']
    evaluator, calibrator = nodes['outcome_evaluator'], nodes['calibrator']
    policy, emitter = nodes['decision_policy'], nodes['action_emitter']
    previous_predictions: list[Any] = []
    actuations = 0
    for odom, obs in inputs:
        timer('self_assessor', assessor._on_belief, (odom, None))
        raws = stubs['self_assessor'].take()
        timer('forward_predictor', predictor._on_belief, (odom, None))
        predictions = stubs['forward_predictor'].take()
        if obs is not None:
            timer('outcome_evaluator', evaluator._on_observation, (obs, None))
        for prediction in previous_predictions:
            timer('outcome_evaluator', evaluator._on_prediction, prediction)
        timer('outcome_evaluator', evaluator._on_belief, (odom, None))
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


def measure_node_costs(cycles: int = 2000, rate_hz: float = 100.0, top: int = 6,
                       delivery: str = 'dds') -> dict[str, Any]:
    """Per node: callback CPU per cycle (us) and the functions with the most own time.

    ``delivery``: 'dds', each message as a node of another process receives it (converted
    and validated again); 'in_process', as a node of the same ghost_agent process does
    (``ghost_nodes.intra_process``: with the memo it was published with).
    """
    period_ns = round(1e9 / rate_hz)
    scenario = generate_scenario('nominal', cycles=cycles, period_ns=period_ns)
    inputs = [cycle_messages(c) for c in scenario.cycles]
    # period_s as the closed-loop benchmark sets it (a global -p reaches every node).
    rclpy.init(args=['--ros-args', '-p', f'period_s:={period_ns / 1e9!r}'])
    try:
        nodes, stubs, bus = _build(delivery)
        spent = dict.fromkeys(ROLES, 0)

        def timed(role: str, call: Callable[[Any], None], item: tuple[Any, Memo | None]
                  ) -> None:
            msg, memo = item
            start = time.perf_counter_ns()
            if delivery == 'dds':
                call(msg)
            else:
                bus.deliver([call], msg, memo)   # as the process's bus delivers it
            spent[role] += time.perf_counter_ns() - start

        actuations = _feed(nodes, stubs, inputs, timed)
        for node in nodes.values():
            node.destroy_node()
        # Second pass, profiled per node, on fresh nodes (same inputs, same state).
        nodes, stubs, bus = _build(delivery)
        profiles = {role: cProfile.Profile() for role in ROLES}

        def profiled(role: str, call: Callable[[Any], None], item: tuple[Any, Memo | None]
                     ) -> None:
            msg, memo = item
            if delivery == 'dds':
                profiles[role].runcall(call, msg)
            else:
                profiles[role].runcall(bus.deliver, [call], msg, memo)

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
        'delivery': delivery,
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
    result = measure_node_costs(args.cycles, args.rate_hz, delivery='dds')
    in_process = measure_node_costs(args.cycles, args.rate_hz, delivery='in_process')
    print('delivery dds (a node per process, or ghost_agent --delivery dds):')
    print(costs_table(result))
    print('\ndelivery in_process (ghost_agent, the default):')
    print(costs_table(in_process))
    print(f'\nin_process / dds: all six {in_process["total_us_per_cycle"]:.0f} / '
          f'{result["total_us_per_cycle"]:.0f} us = '
          f'{in_process["total_us_per_cycle"] / result["total_us_per_cycle"]:.2f}')
    if args.json is not None:
        write_json(args.json, {'machine': machine_info(), 'node_costs': result,
                               'node_costs_in_process': in_process})
    ok = result['actuations'] == in_process['actuations'] == args.cycles
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
