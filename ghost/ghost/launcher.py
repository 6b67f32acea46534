"""Start the closed-loop graph as separate processes without ROS 2's launch tools.

This is the no-ROS twin of launch/closed_loop.launch.py: both take their processes from
``ghost.bringup.closed_loop_graph``. Each node runs as its own process (the executable
colcon installed under lib/ghost_nodes), in its own session so the whole graph can be stopped.
"""

from collections.abc import Mapping, Sequence
from dataclasses import replace
import os
from pathlib import Path
import shutil
import signal
import subprocess
import time
from typing import Any, IO

from ghost.bringup import NodeSpec, overrides_yaml, ros_arguments
from ghost_core.graph import AGENT_PROCESS, IN_PROCESS_NODES
from ghost_nodes.node_parameters import AGENT_EXECUTOR

__all__ = ['GraphProcesses', 'executable_path', 'signal_group', 'stop_groups', 'with_executor']


def executable_path(spec: NodeSpec) -> str:
    """The installed executable of a node (lib/<package>/<executable> in an install prefix)."""
    for prefix in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep):
        if not prefix:
            continue
        candidate = Path(prefix) / 'lib' / spec.package / spec.executable
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which(spec.executable)
    if found:
        return found
    raise FileNotFoundError(f'executable {spec.executable!r} of package {spec.package!r} not '
                            'found on AMENT_PREFIX_PATH: build the workspace and source '
                            'scripts/env.sh (or install/setup.bash)')


def signal_group(proc: 'subprocess.Popen[Any]', sig: int) -> None:
    """Send ``sig`` to the process group (session) of ``proc``, if it still exists."""
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def stop_groups(procs: Sequence['subprocess.Popen[Any]'], sig: int = signal.SIGINT,
                timeout_s: float = 10.0) -> None:
    """Stop processes that each lead their own session, children included.

    ``sig`` to every group still running, then one shared ``timeout_s`` for all to exit; a
    group still running then gets SIGKILL. Last, every group gets SIGKILL once more: a process
    that exited may leave children in its session (rclpy re-executes itself once at start).
    The one teardown of ghost_run's graph, the tests' processes and the benchmarks'.
    """
    for proc in procs:
        if proc.poll() is None:
            signal_group(proc, sig)
    deadline = time.monotonic() + timeout_s
    for proc in procs:
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            signal_group(proc, signal.SIGKILL)
            proc.wait(timeout=5)
        signal_group(proc, signal.SIGKILL)


def with_executor(specs: Sequence[NodeSpec], executor: str) -> list[NodeSpec]:
    """``specs`` with the agent's nodes (``IN_PROCESS_NODES``) set to spin ``executor``.

    Their ``executor`` parameter, in their overrides (so a params_file still beats it); the
    sources and the recorder keep their own (``node_parameters.DEFAULT_EXECUTOR``). In
    single-process mode ghost_agent is given it too. ghost_run and the launch file both use it.
    """
    return [replace(spec, parameters={**spec.parameters, 'executor': executor})
            if spec.name in IN_PROCESS_NODES else spec for spec in specs]


class GraphProcesses:
    """The processes of one graph; stop() ends them, the recorder last so it loses nothing."""

    def __init__(self, specs: Sequence[NodeSpec], log_dir: Path,
                 env: Mapping[str, str] | None = None, single_process: bool = False,
                 executor: str = AGENT_EXECUTOR, delivery: str = 'in_process') -> None:
        """The processes of ``specs``; start() starts them, with logs in ``log_dir``.

        ``single_process``: the nodes of ``IN_PROCESS_NODES`` run in one ``ghost_agent``
        process (``procs['ghost_agent']``), with ``delivery`` between them
        (ghost_nodes.agent_process). ``executor``: what those nodes spin, in one process or
        each in its own (``with_executor``).
        """
        self.specs = with_executor(specs, executor)
        self.log_dir = log_dir
        self.env = dict(env if env is not None else os.environ)
        self.single_process = single_process
        self.executor = executor
        self.delivery = delivery
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self._logs: list[IO[bytes]] = []

    def start(self) -> None:
        """Start every process (the recorder first, so it is ready before any cycle)."""
        self.log_dir.mkdir(parents=True, exist_ok=True)
        ordered = sorted(self.specs, key=lambda s: (s.name != 'recorder',
                                                    s.name in ('scenario', 'input_player')))
        together = [spec for spec in ordered
                    if self.single_process and spec.name in IN_PROCESS_NODES]
        for spec in ordered:
            if spec not in together:
                self._start_one(spec)
        if together:
            self._start_agent(together)

    def _overrides_file(self, spec: NodeSpec) -> str:
        overrides = self.log_dir / f'{spec.name}.params.yaml'
        overrides.write_text(overrides_yaml(spec))
        return str(overrides)

    def _start_one(self, spec: NodeSpec) -> None:
        argv = [executable_path(spec), *ros_arguments(spec, self._overrides_file(spec))]
        self._popen(spec.name, argv)

    def _start_agent(self, specs: Sequence[NodeSpec]) -> None:
        from ghost_nodes.agent_process import graph_document

        graph = self.log_dir / f'{AGENT_PROCESS}.graph.json'
        graph.write_text(graph_document([
            (spec.name, spec.package, spec.executable,
             ros_arguments(spec, self._overrides_file(spec)))
            for spec in specs]))
        agent = NodeSpec(name=AGENT_PROCESS, executable=AGENT_PROCESS)
        self._popen(AGENT_PROCESS, [executable_path(agent), '--graph', str(graph),
                                    '--executor', self.executor, '--delivery', self.delivery])

    def _popen(self, name: str, argv: list[str]) -> None:
        log = (self.log_dir / f'{name}.log').open('ab')
        self._logs.append(log)
        self.procs[name] = subprocess.Popen(  # noqa: S603
            argv, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def kill_node(self, name: str, sig: int = signal.SIGKILL) -> None:
        """Send ``sig`` to one node's process group and wait for it to end."""
        stop_groups([self.procs[name]], sig, 10.0)

    def restart_node(self, name: str) -> None:
        """Start a node again (after kill_node), with the same arguments; its log goes on."""
        if name not in self.procs:
            raise KeyError(f'{name} has no process of its own (single-process mode)')
        if self.procs[name].poll() is None:
            raise RuntimeError(f'{name} is still running')
        if name == AGENT_PROCESS:
            self._start_agent([spec for spec in self.specs if spec.name in IN_PROCESS_NODES])
        else:
            self._start_one(next(spec for spec in self.specs if spec.name == name))

    def failed(self) -> dict[str, int]:
        """Processes that have already exited, with their exit codes."""
        return {name: p.returncode for name, p in self.procs.items() if p.poll() is not None}

    def stop(self, drain_s: float = 0.5, timeout_s: float = 20.0) -> dict[str, int | None]:
        """SIGINT every node, then the recorder after ``drain_s``; SIGKILL what hangs."""
        stop_groups([p for n, p in self.procs.items() if n != 'recorder'], signal.SIGINT,
                    timeout_s)
        if 'recorder' in self.procs:
            time.sleep(drain_s)
            stop_groups([self.procs['recorder']], signal.SIGINT, timeout_s)
        for log in self._logs:
            log.close()
        return {name: p.returncode for name, p in self.procs.items()}

    def kill(self) -> None:
        """SIGKILL every process group (cleanup after a failure)."""
        stop_groups(list(self.procs.values()), signal.SIGKILL, 5.0)
