"""The rclpy executor a Ghost node process spins, by its ``executor`` parameter's value.

Separate from ``node_base`` (the node runtime) because the choice and its spin loop are one
small job: which executor a value names, and how each is spun cheaply (docs/performance.md,
"Why the EventsExecutor is the default").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from rclpy.executors import Executor, SingleThreadedExecutor
from rclpy.task import Future

from ghost_nodes.node_parameters import DEFAULT_EXECUTOR

__all__ = ['executor_class', 'process_executor', 'spinner']


def executor_class(name: str) -> Callable[[], Executor]:
    """The rclpy executor an ``executor`` parameter value names (``node_parameters.EXECUTORS``).

    'events': rclpy's EventsExecutor (``rclpy.experimental``, Jazzy), which dispatches from
    middleware events; 'single_threaded': the SingleThreadedExecutor, which rebuilds its wait
    set on every spin.
    """
    if name == 'events':
        from rclpy.experimental.events_executor import EventsExecutor

        return EventsExecutor
    if name == 'single_threaded':
        return SingleThreadedExecutor
    raise ValueError(f'unknown executor {name!r}')


def spinner(executor: Executor, name: str) -> Callable[[float], None]:
    """``spin(timeout_s)``: process what is ready (a callback at least, or until the timeout).

    The EventsExecutor ('events') stays in its C++ loop for the whole timeout (the future
    nobody completes is new each time, so no done-callback piles up on it): its ``spin_once``
    comes back to Python after every callback, which costs about 17 us of CPU a message
    (docs/performance.md). The SingleThreadedExecutor's ``spin_until_future_complete`` is a
    Python loop over ``spin_once`` with more checks, so it runs ``spin_once``.
    """
    if name == 'events':
        return lambda timeout_s: executor.spin_until_future_complete(Future(),
                                                                     timeout_sec=timeout_s)
    return lambda timeout_s: executor.spin_once(timeout_sec=timeout_s)


def process_executor(chosen: Iterable[str]) -> str:
    """The executor the ``executor`` values of one process's nodes name (they must agree)."""
    names = set(chosen)
    if len(names) > 1:
        raise ValueError(f'parameter executor: the nodes of one process spin one executor, '
                         f'got {sorted(names)}')
    return names.pop() if names else DEFAULT_EXECUTOR
