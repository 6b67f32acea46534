"""Ghost and its inputs started and stopped in every order, through the real tools; bags verified.

One order is one run: ``ros2 launch ghost closed_loop.launch.py use_scenario:=false
record:=true`` with a standalone ``input_player`` (started before or after the launch), or
``ghost_run --input`` (its player waits for the graph), stopped as a user stops it (SIGINT to
the process group, or the inputs ending first). Then ``verify_all`` on the bag: exit 0 is a
verified run. The DDS tests (test_startup_orders.py) run each order once; ``make stress``
(scripts/stress.py) runs each many times under load.

    python ghost/test/startup_orders.py ORDER WORKDIR   (env: the vendored ros2 tools, a domain)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
import os
from pathlib import Path
import re
import signal
import subprocess
import sys
import time

HERE = Path(__file__).resolve().parent
LAUNCH = ['ros2', 'launch', 'ghost', 'closed_loop.launch.py']
#: The input bag's scenario: 10 Hz, long enough to outlast the graph's start-up.
INPUT_SCENARIO = 'gnss_outage'


@dataclass(frozen=True)
class OrderResult:
    """What one run of an order gave: ``verify_all``'s exit code and its output, the logs."""

    order: str
    code: int
    verdict: str
    logs: str

    @property
    def verified(self) -> bool:
        """``verify_all`` exited 0."""
        return self.code == 0


def write_inputs(path: Path, cycles: int = 300) -> Path:
    """An input bag of ``cycles`` cycles of INPUT_SCENARIO (10 Hz)."""
    sys.path.insert(0, str(HERE))
    import dataclasses

    from input_bags import write_input_bag

    from ghost_core.scenarios import generate_scenario

    scenario = generate_scenario(INPUT_SCENARIO)
    return write_input_bag(path, dataclasses.replace(scenario, cycles=scenario.cycles[:cycles]))


class _Runs:
    """The processes of one run, each in its own session, logged to files in ``workdir``."""

    def __init__(self, workdir: Path, env: Mapping[str, str]) -> None:
        self.workdir = workdir
        self.env = {**env, 'TMPDIR': str(workdir / 'tmp'), 'PYTHONUNBUFFERED': '1'}
        (workdir / 'tmp').mkdir(parents=True, exist_ok=True)
        self.procs: dict[str, subprocess.Popen[str]] = {}

    def start(self, name: str, argv: list[str]) -> subprocess.Popen[str]:
        with (self.workdir / f'{name}.log').open('w') as log:
            proc = subprocess.Popen(argv, env=self.env, cwd=self.workdir, stdout=log,  # noqa: S603
                                    stderr=subprocess.STDOUT, text=True, start_new_session=True)
        self.procs[name] = proc
        return proc

    def log(self, name: str) -> str:
        path = self.workdir / f'{name}.log'
        return path.read_text(errors='replace') if path.exists() else ''

    def wait_for(self, name: str, pattern: str, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if re.search(pattern, self.log(name), re.MULTILINE):
                return True
            if self.procs[name].poll() is not None:
                return bool(re.search(pattern, self.log(name), re.MULTILINE))
            time.sleep(0.1)
        return False

    def interrupt(self, name: str, timeout_s: float = 60.0) -> int | None:
        """Ctrl-C: SIGINT to the process group; wait for the process to end."""
        proc = self.procs[name]
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGINT)
            except ProcessLookupError:
                pass
        try:
            return proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.kill(name)
            return None

    def kill(self, name: str) -> None:
        try:
            os.killpg(self.procs[name].pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.procs[name].wait(timeout=10)

    def stop_all(self) -> None:
        for name, proc in self.procs.items():
            if proc.poll() is None:
                self.interrupt(name, 30.0)
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # what the session still holds
            except ProcessLookupError:
                pass

    def logs(self) -> str:
        return '\n'.join(f'--- {name}.log (exit {proc.returncode}):\n{self.log(name)[-3000:]}'
                         for name, proc in self.procs.items())


def _player(inputs: Path, speed: float = 1.0) -> list[str]:
    return ['ros2', 'run', 'ghost_nodes', 'input_player', '--ros-args', '-p',
            f'input:={inputs}', '-p', f'speed:={speed}']


def _recorded_actuations(bag: Path) -> int:
    """Actuations in the recorder's partial manifest (written every chunk_max_age_s)."""
    import json

    try:
        document = json.loads((bag / 'manifest.json').read_text())
    except (OSError, ValueError):
        return 0
    topics = document.get('topics') or {}
    entry = topics.get('/actuations') if isinstance(topics, dict) else None
    return int(entry.get('count', 0)) if isinstance(entry, dict) else 0


def _launch_record(bag: Path) -> list[str]:
    return [*LAUNCH, 'use_scenario:=false', 'record:=true', f'bag:={bag}']


#: Actuations recorded before the run is stopped (2 s of cycles at 10 Hz).
ACTUATED = 20


def _ghost_then_inputs(runs: _Runs, inputs: Path, bag: Path) -> None:
    runs.start('launch', _launch_record(bag))
    _started(runs, 'launch', r'\[recorder.*\]: recording', 120.0)
    time.sleep(2.0)
    runs.start('player', _player(inputs))
    _wait_actuations(runs, bag, ACTUATED, 120.0)


def _inputs_then_ghost(runs: _Runs, inputs: Path, bag: Path) -> None:
    runs.start('player', _player(inputs))
    _started(runs, 'player', r'playing', 60.0)
    runs.start('launch', _launch_record(bag))
    _wait_actuations(runs, bag, ACTUATED, 120.0)


def _inputs_stop_then_ghost(runs: _Runs) -> None:
    runs.interrupt('player')
    time.sleep(2.0)
    runs.interrupt('launch')


def _ghost_stops(runs: _Runs) -> None:
    runs.interrupt('launch')
    runs.interrupt('player')


def ghost_first_inputs_stop(runs: _Runs, inputs: Path, bag: Path) -> None:
    """The launch, then the inputs; the inputs stop; Ghost runs on 2 s; then Ctrl-C."""
    _ghost_then_inputs(runs, inputs, bag)
    _inputs_stop_then_ghost(runs)


def ghost_first_ghost_stops(runs: _Runs, inputs: Path, bag: Path) -> None:
    """The launch, then the inputs; Ctrl-C of the launch while the inputs run."""
    _ghost_then_inputs(runs, inputs, bag)
    _ghost_stops(runs)


def inputs_first_inputs_stop(runs: _Runs, inputs: Path, bag: Path) -> None:
    """The inputs, then the launch; the inputs stop; Ghost runs on 2 s; then Ctrl-C."""
    _inputs_then_ghost(runs, inputs, bag)
    _inputs_stop_then_ghost(runs)


def inputs_first_ghost_stops(runs: _Runs, inputs: Path, bag: Path) -> None:
    """The inputs, then the launch; Ctrl-C of the launch while the inputs run."""
    _inputs_then_ghost(runs, inputs, bag)
    _ghost_stops(runs)


def ghost_run_input(runs: _Runs, inputs: Path, bag: Path) -> None:
    """``ghost_run --input``: it records, plays, ends by itself and verifies."""
    runs.start('ghost_run', ['ghost_run', '--input', str(inputs), '--speed', '4', '--no-report',
                             '--run-dir', str(bag.parent / 'run')])
    runs.procs['ghost_run'].wait(timeout=300)
    _link_bag(bag.parent / 'run', bag)


def ghost_run_sigint(runs: _Runs, inputs: Path, bag: Path) -> None:
    """``ghost_run --input``, Ctrl-C while the inputs play."""
    runs.start('ghost_run', ['ghost_run', '--input', str(inputs), '--no-report',
                             '--run-dir', str(bag.parent / 'run')])
    _wait_actuations(runs, bag.parent / 'run' / 'bag', ACTUATED, 180.0)
    runs.interrupt('ghost_run', 120.0)
    _link_bag(bag.parent / 'run', bag)


ORDERS: Mapping[str, Callable[[_Runs, Path, Path], None]] = {
    'ghost_first_inputs_stop': ghost_first_inputs_stop,
    'ghost_first_ghost_stops': ghost_first_ghost_stops,
    'inputs_first_inputs_stop': inputs_first_inputs_stop,
    'inputs_first_ghost_stops': inputs_first_ghost_stops,
    'ghost_run_input': ghost_run_input,
    'ghost_run_sigint': ghost_run_sigint,
}


def _started(runs: _Runs, name: str, pattern: str, timeout_s: float) -> None:
    if not runs.wait_for(name, pattern, timeout_s):
        raise RuntimeError(f'{name}: no {pattern!r} within {timeout_s} s')


def _wait_actuations(runs: _Runs, bag: Path, count: int, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while _recorded_actuations(bag) < count and time.monotonic() < deadline:
        time.sleep(0.2)


#: What ros2 launch prints when a node did not exit on its SIGINT within its timeout.
_ESCALATED = ("sending signal 'SIGTERM'", "sending signal 'SIGKILL'", 'process has died')


def _unclean_stop(runs: _Runs) -> str:
    """The first sign that a process did not exit on SIGINT by itself ('' when all did)."""
    for name, proc in runs.procs.items():
        if proc.returncode not in (0, None) and name != 'ghost_run':
            return f'{name} exited {proc.returncode}'
        found = [line for line in runs.log(name).splitlines()
                 if any(sign in line for sign in _ESCALATED)]
        if found:
            return f'{name}: {found[0].strip()}'
    return ''


def _link_bag(run_dir: Path, bag: Path) -> None:
    found = sorted(path.parent for path in run_dir.glob('**/metadata.yaml'))
    if found and not bag.exists():
        bag.symlink_to(found[0])


def run_order(order: str, workdir: Path, env: Mapping[str, str],
              inputs: Path | None = None) -> OrderResult:
    """Run ``order`` once in ``workdir`` (created), then ``verify_all`` its bag."""
    workdir.mkdir(parents=True, exist_ok=True)
    inputs = inputs or write_inputs(workdir / 'inputs')
    bag = workdir / 'bag'
    runs = _Runs(workdir, env)
    try:
        ORDERS[order](runs, inputs, bag)
    except Exception as err:  # noqa: BLE001 - the run's failure is the result
        runs.stop_all()
        return OrderResult(order, -1, f'{order}: {err}', runs.logs())
    finally:
        runs.stop_all()
    if not (bag / 'metadata.yaml').exists():
        return OrderResult(order, -1, f'{order}: no closed bag at {bag}', runs.logs())
    unclean = _unclean_stop(runs)
    if unclean:
        return OrderResult(order, -1, f'{order}: not every node exited on SIGINT: {unclean}',
                           runs.logs())
    verify = subprocess.run([sys.executable, '-m', 'ghost_verify', str(bag)],  # noqa: S603
                            env=runs.env, capture_output=True, text=True, timeout=600,
                            check=False)
    return OrderResult(order, verify.returncode, verify.stdout + verify.stderr, runs.logs())


def claimed_env(env: Mapping[str, str]) -> tuple[dict[str, str], object]:
    """`env` on a free ROS domain of the tests' range, claimed as the tests claim one.

    Returns the environment and the claim (``release()`` it when done).
    """
    from ghost.isolation import claim_free_domain

    claim = claim_free_domain(list(range(101, 201)), probe_budget_s=0.0)
    return {**env, 'ROS_DOMAIN_ID': str(claim.domain_id),
            'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST'}, claim


def main(argv: list[str]) -> int:
    """``startup_orders.py ORDER WORKDIR``: run it once, print the verdict, exit as verify_all."""
    env, claim = claimed_env(os.environ)
    try:
        result = run_order(argv[0], Path(argv[1]), env)
    finally:
        claim.release()  # type: ignore[attr-defined]
    print(result.verdict)
    if not result.verified:
        print(result.logs)
    return result.code


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
