"""One hop of the closed-loop floor: a bare rclpy relay standing in for one ghost node.

The floor graph has the ghost graph's shape: the same topics, message types, QoS, joins and
one process per hop, but each hop does nothing beyond what a relay must. On each input it
copies the cycle stamp into a pre-built message of the type (and the byte size) the ghost node
publishes for a steady-state nominal cycle, and publishes it. The two joins release a cycle
when both of its inputs are in:

    /state/nav ─┬─ self_assessor ── /self_assessment ─────────┐
                ├─ forward_predictor ── /predictions ─┐       ├─ calibrator ── decision_policy
                └──────────────── outcome_evaluator ──┴───────┘        ── action_emitter
    /observations ──────────────────┘   (/prediction_outcomes)             (/actuations)

``python bench/floor_relay.py --role calibrator --period-ns 10000000``
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
import sys
import time
from typing import Any

from geometry_msgs.msg import PoseWithCovarianceStamped
from nav_msgs.msg import Odometry
import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node

from ghost_core.scenarios import generate_scenario, run_scenario
from ghost_core.wire import to_msg_dict
from ghost_interfaces.msg import (
    ActionEmission,
    BeliefSelfAssessment,
    CalibratedSelfAssessment,
    DecisionRationale,
    ForwardPrediction,
    PredictionOutcome,
)
from ghost_nodes.convert import from_msg_dict
from ghost_nodes.qos import GHOST_QOS

__all__ = ['ROLES', 'main']

ROLES = ('self_assessor', 'forward_predictor', 'outcome_evaluator', 'calibrator',
         'decision_policy', 'action_emitter')
#: A cycle of the nominal scenario late enough for the calibration window to be full.
_STEADY_CYCLE = 40


def templates(period_ns: int) -> dict[str, Any]:
    """The rclpy message each role publishes, as the ghost node does for a steady cycle."""
    scenario = generate_scenario('nominal', cycles=_STEADY_CYCLE + 1, period_ns=period_ns)
    trace = run_scenario(scenario)[_STEADY_CYCLE]
    assert trace.prediction is not None
    return {
        'self_assessor': from_msg_dict(BeliefSelfAssessment, to_msg_dict(trace.raw)),
        'forward_predictor': from_msg_dict(ForwardPrediction, to_msg_dict(trace.prediction)),
        'outcome_evaluator': from_msg_dict(PredictionOutcome, to_msg_dict(trace.outcome)),
        'calibrator': from_msg_dict(CalibratedSelfAssessment, to_msg_dict(trace.calibrated)),
        'decision_policy': from_msg_dict(DecisionRationale, to_msg_dict(trace.rationale)),
        'action_emitter': from_msg_dict(ActionEmission, to_msg_dict(trace.emission)),
    }


def _key(msg: Any) -> tuple[int, int]:
    return msg.header.stamp.sec, msg.header.stamp.nanosec


class Join:
    """Release a cycle once every one of `parts` has arrived for its stamp (stamps rise)."""

    def __init__(self, parts: tuple[str, ...], release: Callable[[Any], None]) -> None:
        self._parts = frozenset(parts)
        self._seen: dict[tuple[int, int], set[str]] = {}
        self._release = release

    def add(self, part: str, msg: Any) -> None:
        key = _key(msg)
        seen = self._seen.setdefault(key, set())
        seen.add(part)
        if seen == self._parts:
            # Everything up to this cycle is done (or lost): forget it.
            for old in [k for k in self._seen if k <= key]:
                del self._seen[old]
            self._release(msg.header.stamp)


class RelayNode(Node):
    """The floor stand-in of one ghost node."""

    def __init__(self, role: str, period_ns: int, work_us: float = 0.0) -> None:
        super().__init__(f'floor_{role}')
        self._work_ns = round(work_us * 1e3)
        self._out = templates(period_ns)[role]
        self._period_ns = period_ns
        topic, msg_type = _OUTPUTS[role]
        self._pub = self.create_publisher(msg_type, topic, GHOST_QOS)
        sub = self.create_subscription
        if role in ('self_assessor', 'forward_predictor'):
            handler = self._relay_prediction if role == 'forward_predictor' else self._relay
            sub(Odometry, '/state/nav', handler, GHOST_QOS)
        elif role == 'outcome_evaluator':
            # The ghost evaluator's subscriptions, in its order. The prediction for cycle t was
            # published a period before t, so only the belief and the fix are waited for.
            join = Join(('belief', 'observation'), self._emit)
            sub(PoseWithCovarianceStamped, '/observations',
                lambda m: join.add('observation', m), GHOST_QOS)
            sub(ForwardPrediction, '/predictions', lambda m: None, GHOST_QOS)
            sub(Odometry, '/state/nav', lambda m: join.add('belief', m), GHOST_QOS)
        elif role == 'calibrator':
            join = Join(('raw', 'outcome'), self._emit)
            sub(BeliefSelfAssessment, '/self_assessment', lambda m: join.add('raw', m),
                GHOST_QOS)
            sub(PredictionOutcome, '/prediction_outcomes', lambda m: join.add('outcome', m),
                GHOST_QOS)
        elif role == 'decision_policy':
            sub(CalibratedSelfAssessment, '/self_assessment/calibrated', self._relay, GHOST_QOS)
        else:
            sub(DecisionRationale, '/decisions', self._relay, GHOST_QOS)

    def _emit(self, stamp: Any) -> None:
        if self._work_ns:
            # Experiments only (--work-us): stand-in for a node's own processing time.
            until = time.perf_counter_ns() + self._work_ns
            while time.perf_counter_ns() < until:
                pass
        self._out.header.stamp = stamp
        self._pub.publish(self._out)

    def _relay(self, msg: Any) -> None:
        self._emit(msg.header.stamp)

    def _relay_prediction(self, msg: Any) -> None:
        target = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        target += self._period_ns
        self._out.target_stamp.sec, self._out.target_stamp.nanosec = divmod(
            target, 1_000_000_000)
        self._emit(msg.header.stamp)


_OUTPUTS: dict[str, tuple[str, type]] = {
    'self_assessor': ('/self_assessment', BeliefSelfAssessment),
    'forward_predictor': ('/predictions', ForwardPrediction),
    'outcome_evaluator': ('/prediction_outcomes', PredictionOutcome),
    'calibrator': ('/self_assessment/calibrated', CalibratedSelfAssessment),
    'decision_policy': ('/decisions', DecisionRationale),
    'action_emitter': ('/actuations', ActionEmission),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--role', choices=ROLES, required=True)
    parser.add_argument('--period-ns', type=int, required=True)
    parser.add_argument('--work-us', type=float, default=0.0,
                        help='busy CPU time added per published message (experiments; '
                             'the floor is 0)')
    args = parser.parse_args(argv)
    # The same run/shutdown pattern as the ghost nodes (ghost_nodes.node_base.run).
    rclpy.init()
    node: RelayNode | None = None
    try:
        node = RelayNode(args.role, args.period_ns, args.work_us)
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    sys.exit(main())
