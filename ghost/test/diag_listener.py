"""Test listener: writes every /diagnostics message (and actuation) it receives as a JSON line.

Each line: {"t": monotonic seconds, "latest_actuation_ns": the largest actuation stamp this
listener had received by then (null before any), "actuations": how many, "status": [{"name",
"level", "message", "hardware_id", "values": {key: value}}]}. It also reads `actuations`, and
reports that reader on /ghost/graph_status only once its /diagnostics reader has matched the
monitor, so a scenario that waits for it (extra_subscribers) starts after both are matched.
Prints 'ready' then; runs until SIGINT/SIGTERM. Each actuation is a line too:
{"t": monotonic seconds, "actuation_ns": its cycle stamp}.
"""

import argparse
import json
import signal
import time

from diagnostic_msgs.msg import DiagnosticArray
import rclpy
from rclpy.qos import QoSProfile

from ghost_interfaces.msg import ActionEmission
from ghost_nodes.qos import GHOST_QOS
from ghost_nodes.readiness import GraphStatusReporter


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument('out')
    args = parser.parse_args()
    rclpy.init()
    node = rclpy.create_node('ghost_test_diag_listener')
    out = open(args.out, 'w', encoding='utf-8')
    seen = {'latest': None, 'count': 0}

    def on_actuation(msg: ActionEmission) -> None:
        stamp = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        seen['count'] += 1
        if seen['latest'] is None or stamp > seen['latest']:
            seen['latest'] = stamp
        out.write(json.dumps({'t': time.monotonic(), 'actuation_ns': stamp}) + '\n')
        out.flush()

    def on_diagnostics(msg: DiagnosticArray) -> None:
        out.write(json.dumps({
            't': time.monotonic(), 'latest_actuation_ns': seen['latest'],
            'actuations': seen['count'],
            'status': [{'name': s.name, 'level': s.level[0] if isinstance(s.level, bytes)
                        else int(s.level), 'message': s.message, 'hardware_id': s.hardware_id,
                        'values': {kv.key: kv.value for kv in s.values}} for s in msg.status],
        }) + '\n')
        out.flush()

    diagnostics = node.create_subscription(DiagnosticArray, '/diagnostics', on_diagnostics,
                                           QoSProfile(depth=100))
    node.create_subscription(ActionEmission, 'actuations', on_actuation, GHOST_QOS)
    stop = []
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    reporter = None
    while not stop:
        rclpy.spin_once(node, timeout_sec=0.05)
        if reporter is None and diagnostics.get_publisher_count() > 0:
            reporter = GraphStatusReporter(node)
            print('ready', flush=True)
    out.close()
    node.destroy_node()
    rclpy.try_shutdown()


if __name__ == '__main__':
    main()
