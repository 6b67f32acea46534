"""Test driver: read every declared parameter of running nodes over their parameter services.

    python param_client.py OUT.json /recorder /calibrator ...

Waits (up to --timeout s) for each node's list_parameters and get_parameters services, then
writes ``{fqn: {name: value}}`` to OUT.json (``ros2 param dump`` is not among the vendored
tools). Exit 1 when a node does not answer in time.
"""

import argparse
import json
from pathlib import Path
import sys
import time

from rcl_interfaces.srv import GetParameters, ListParameters
import rclpy
from rclpy.parameter import parameter_value_to_python


def _call(node: object, client: object, request: object, deadline: float) -> object:
    future = client.call_async(request)  # type: ignore[attr-defined]
    rclpy.spin_until_future_complete(node, future,
                                     timeout_sec=max(0.1, deadline - time.monotonic()))
    return future.result()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument('output')
    parser.add_argument('nodes', nargs='+')
    parser.add_argument('--timeout', type=float, default=30.0)
    args = parser.parse_args()
    rclpy.init()
    node = rclpy.create_node('ghost_test_param_client')
    deadline = time.monotonic() + args.timeout
    out: dict[str, dict[str, object]] = {}
    try:
        for fqn in args.nodes:
            lister = node.create_client(ListParameters, f'{fqn}/list_parameters')
            getter = node.create_client(GetParameters, f'{fqn}/get_parameters')
            for client in (lister, getter):
                if not client.wait_for_service(timeout_sec=max(0.1, deadline - time.monotonic())):
                    print(f'{fqn}: no {client.srv_name} service', file=sys.stderr)
                    return 1
            listed = _call(node, lister, ListParameters.Request(depth=0), deadline)
            if listed is None:
                print(f'{fqn}: no answer to list_parameters', file=sys.stderr)
                return 1
            names = sorted(listed.result.names)
            got = _call(node, getter, GetParameters.Request(names=names), deadline)
            if got is None:
                print(f'{fqn}: no answer to get_parameters', file=sys.stderr)
                return 1
            out[fqn] = {}
            for name, value in zip(names, got.values, strict=True):
                python = parameter_value_to_python(value)
                out[fqn][name] = python if isinstance(python, (str, bool, int, float)) else list(
                    python)
        Path(args.output).write_text(json.dumps(out))
        return 0
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == '__main__':
    sys.exit(main())
