"""What the benchmark scripts share: paths, ROS isolation, child processes, statistics."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
import json
import math
import os
from pathlib import Path
import platform
import signal
import subprocess
import sys
import tempfile
from typing import Any, IO

from ghost.launcher import stop_groups

__all__ = [
    'BENCH_DIR',
    'CACHE_DIR',
    'CONFIG_DIR',
    'MSG_DIR',
    'REPO',
    'RESULTS_DIR',
    'ChildRun',
    'ProcessSet',
    'bench_ros_env',
    'machine_info',
    'percentile',
    'read_json',
    'run_measured',
    'write_json',
]

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
#: The .msg files of ghost_interfaces (the bags embed them as schemas).
MSG_DIR = REPO / 'ghost_interfaces' / 'msg'
#: ghost.yaml and scenarios/ of this checkout (what closed_loop_graph() reads).
CONFIG_DIR = REPO / 'config'
RESULTS_DIR = BENCH_DIR / 'results'
CACHE_DIR = BENCH_DIR / '.cache'


def bench_ros_env(domain_id: int | None = None) -> dict[str, str]:
    """Return os.environ for ROS processes isolated on one domain with localhost discovery.

    Without ``domain_id``: the ROS_DOMAIN_ID already set (the test fixtures set one of their
    own), else one in 150..199 picked from the pid, away from the test suite's usual range.
    """
    env = dict(os.environ)
    if domain_id is None:
        domain_id = int(env['ROS_DOMAIN_ID']) if env.get('ROS_DOMAIN_ID') else (
            150 + os.getpid() % 50)
    env['ROS_DOMAIN_ID'] = str(domain_id)
    env['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    env.pop('ROS_LOCALHOST_ONLY', None)
    env['PYTHONUNBUFFERED'] = '1'
    env.setdefault('RMW_IMPLEMENTATION', 'rmw_fastrtps_cpp')
    return env


class ProcessSet:
    """Processes started by a benchmark, each in its own session; stop() ends every group.

    The same shutdown as ghost.launcher.GraphProcesses (SIGINT, then SIGKILL of the
    whole process group for what hangs), for processes that are not installed executables.
    """

    def __init__(self, log_dir: Path, env: Mapping[str, str]) -> None:
        self.log_dir = log_dir
        self.env = dict(env)
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self._logs: list[IO[bytes]] = []

    def start(self, name: str, argv: Sequence[str]) -> subprocess.Popen[bytes]:
        """Start one process; its stdout and stderr go to <log_dir>/<name>.log."""
        self.log_dir.mkdir(parents=True, exist_ok=True)
        log = (self.log_dir / f'{name}.log').open('wb')
        self._logs.append(log)
        proc = subprocess.Popen(  # noqa: S603
            list(argv), env=self.env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True)
        self.procs[name] = proc
        return proc

    def failed(self) -> dict[str, int]:
        """Processes that have already exited, with their exit codes."""
        return {name: p.returncode for name, p in self.procs.items() if p.poll() is not None}

    def stop(self, timeout_s: float = 10.0) -> None:
        """SIGINT every process group, wait, SIGKILL what is left (children included)."""
        stop_groups(list(self.procs.values()), signal.SIGINT, timeout_s)
        for log in self._logs:
            log.close()
        self._logs.clear()


@dataclass(frozen=True)
class ChildRun:
    """One measured child process: wall time, peak RSS, CPU time, exit code and output."""

    wall_s: float
    max_rss_bytes: int
    cpu_s: float
    returncode: int
    stdout: str
    stderr: str


# Runs in a small interpreter (no site packages): forks the measured command, waits for it and
# writes its own rusage. The measured process must not be forked from a big one: Linux keeps a
# process's peak RSS across exec, so a child of a 100 MB parent would report at least 100 MB.
_MEASURE = """
import json, os, sys, time
out, argv = sys.argv[1], sys.argv[2:]
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - start
code = os.waitstatus_to_exitcode(status)
with open(out, 'w') as f:
    json.dump({'wall_s': wall, 'maxrss_kb': usage.ru_maxrss, 'returncode': code,
               'cpu_s': usage.ru_utime + usage.ru_stime}, f)
sys.exit(code if code >= 0 else 128 - code)
"""


def run_measured(argv: Sequence[str], env: Mapping[str, str] | None = None,
                 timeout_s: float = 1800.0) -> ChildRun:
    """Run a command to completion; return its wall time, its own peak RSS and CPU time.

    The command is started by a small measuring process (see _MEASURE), so that its peak RSS
    is its own; its output goes to temporary files (no pipe to drain while waiting).
    """
    with tempfile.TemporaryDirectory(prefix='ghost-bench-run-') as tmp:
        report = Path(tmp) / 'rusage.json'
        with (Path(tmp) / 'out').open('w+b') as out, (Path(tmp) / 'err').open('w+b') as err:
            proc = subprocess.Popen(  # noqa: S603
                [sys.executable, '-S', '-c', _MEASURE, str(report), *argv],
                env=None if env is None else dict(env), stdout=out, stderr=err,
                start_new_session=True)
            try:
                proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                stop_groups([proc], signal.SIGKILL, 5.0)
            out.seek(0)
            err.seek(0)
            stdout = out.read().decode(errors='replace')
            stderr = err.read().decode(errors='replace')
        if not report.is_file():
            return ChildRun(wall_s=float('nan'), max_rss_bytes=0, cpu_s=float('nan'),
                            returncode=proc.returncode if proc.returncode else -9,
                            stdout=stdout, stderr=stderr or 'killed (timeout)')
        usage = json.loads(report.read_text())
        return ChildRun(wall_s=usage['wall_s'], max_rss_bytes=usage['maxrss_kb'] * 1024,
                        cpu_s=usage['cpu_s'], returncode=usage['returncode'],
                        stdout=stdout, stderr=stderr)


def percentile(values: Sequence[float], q: float) -> float | None:
    """Return the q-th percentile (0..100, nearest rank) of `values`, None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100.0 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def machine_info() -> dict[str, Any]:
    """Return what identifies the machine a result was measured on."""
    model = ''
    try:
        for line in Path('/proc/cpuinfo').read_text().splitlines():
            if line.startswith('model name'):
                model = line.split(':', 1)[1].strip()
                break
    except OSError:
        pass
    mem_kb = 0
    try:
        for line in Path('/proc/meminfo').read_text().splitlines():
            if line.startswith('MemTotal:'):
                mem_kb = int(line.split()[1])
    except OSError:
        pass
    return {
        'hostname': platform.node(),
        'cpu_model': model,
        'cpus': os.cpu_count(),
        'memory_gb': round(mem_kb / 1024 / 1024, 1),
        'kernel': platform.release(),
        'python': platform.python_version(),
        'rmw': os.environ.get('RMW_IMPLEMENTATION', 'rmw_fastrtps_cpp'),
        'load_average_at_start': list(os.getloadavg()),
    }


def write_json(path: Path, document: object) -> None:
    """Write `document` as indented JSON (atomically: a temporary file, then rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + '.tmp')
    tmp.write_text(json.dumps(document, indent=2, sort_keys=True) + '\n', encoding='utf-8')
    tmp.replace(path)


def read_json(path: Path) -> Any:
    """Read a JSON file."""
    return json.loads(path.read_text(encoding='utf-8'))
