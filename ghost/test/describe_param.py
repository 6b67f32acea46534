"""Test driver: read parameter descriptors of a running node over its describe_parameters service.

    python describe_param.py NODE NAME [NAME ...]

Prints ``{name: descriptor}`` as JSON (ranges as ``[from_value, to_value, step]`` lists).
Exit 1 when the node does not answer within 30 s (asked again every 3 s).
"""

import json
import math
import sys

from rcl_interfaces.srv import DescribeParameters
import rclpy


def _number(value: float) -> float | str:
    return value if math.isfinite(value) else str(value)  # JSON has no infinity


def main() -> int:
    node_name, names = sys.argv[1], sys.argv[2:]
    rclpy.init()
    node = rclpy.create_node('ghost_test_describe_client')
    client = node.create_client(DescribeParameters, f'/{node_name}/describe_parameters')
    try:
        if not client.wait_for_service(timeout_sec=30.0):
            print('no service', file=sys.stderr)
            return 1
        # The service can be discovered before the server has matched this client's response
        # reader; a request sent in that gap is answered to no one. Ask again until answered.
        result = None
        for _attempt in range(10):
            future = client.call_async(DescribeParameters.Request(names=names))
            rclpy.spin_until_future_complete(node, future, timeout_sec=3.0)
            result = future.result()
            if result is not None:
                break
            client.remove_pending_request(future)
        if result is None:
            print('no answer', file=sys.stderr)
            return 1
        print(json.dumps({d.name: {
            'description': d.description,
            'read_only': d.read_only,
            'additional_constraints': d.additional_constraints,
            'integer_range': [[r.from_value, r.to_value, r.step] for r in d.integer_range],
            'floating_point_range': [[_number(r.from_value), _number(r.to_value), r.step]
                                     for r in d.floating_point_range],
        } for d in result.descriptors}))
        return 0
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == '__main__':
    sys.exit(main())
