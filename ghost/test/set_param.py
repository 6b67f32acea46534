"""Ask a running node to set one parameter; print 'accepted' or 'refused: <reason>'."""

import ast
import sys

from rcl_interfaces.srv import SetParameters
import rclpy
from rclpy.parameter import Parameter


def main() -> None:
    node_name, name, value = sys.argv[1], sys.argv[2], ast.literal_eval(sys.argv[3])
    rclpy.init()
    node = rclpy.create_node('ghost_test_param_client')
    client = node.create_client(SetParameters, f'/{node_name}/set_parameters')
    try:
        if not client.wait_for_service(timeout_sec=30.0):
            print('no service', file=sys.stderr)
            sys.exit(1)
        future = client.call_async(SetParameters.Request(
            parameters=[Parameter(name, value=value).to_parameter_msg()]))
        rclpy.spin_until_future_complete(node, future, timeout_sec=30.0)
        result = future.result()
        if result is None:
            print('no answer', file=sys.stderr)
            sys.exit(1)
        outcome = result.results[0]
        print('accepted' if outcome.successful else f'refused: {outcome.reason}')
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == '__main__':
    main()
