"""/diagnostics over real DDS: the monitor node beside the real graph, a listener in the test.

Each test runs the node graph (plus the ``monitor`` executable) as processes on its own ROS
domain; a listener process writes every DiagnosticArray it receives to a file, with the
latest actuation it had received by then, so the test can tell how many cycles passed
between a violation and the ERROR.
"""

from collections.abc import Callable, Iterator
import json
from pathlib import Path
import sys
import time

from ghost.bringup import closed_loop_graph, GraphOptions
from ghost.launcher import GraphProcesses
from ghost_core.scenarios import generate_scenario
from ghost_verify import verify_all, verify_baud

CONFIG = Path(__file__).resolve().parents[2] / 'config'
HERE = Path(__file__).resolve().parent
NODES = ('self_assessor', 'forward_predictor', 'outcome_evaluator', 'calibrator',
         'decision_policy', 'action_emitter')
OK, WARN, ERROR, STALE = 0, 1, 2, 3
PERIOD_NS = 100_000_000


class _Run:
    """The graph, the monitor, the listener (and optionally a policy of the test's own)."""

    def __init__(self, tmp_path: Path, env: dict[str, str], processes, scenario: str,
                 policy: str | None = None, rate_hz: float = 0.0) -> None:
        self.bag = tmp_path / 'bag'
        self.out = tmp_path / 'diagnostics.jsonl'
        self.cycles = len(generate_scenario(scenario).cycles)
        # The graph starts its monitor; the listener is one more reader of /actuations.
        specs = closed_loop_graph(CONFIG, GraphOptions(scenario=scenario, bag_path=str(self.bag),
            extra_subscribers={'/actuations': 1}, overrides={'scenario': {'rate_hz': rate_hz}}))
        if policy is not None:
            # The test's policy takes the decision policy's place (same topics, same counts).
            specs = [s for s in specs if s.name != 'decision_policy']
        self.graph = GraphProcesses(specs, tmp_path / 'logs', env)
        self._processes = processes
        self._env = env
        self._policy = policy

    def run(self, settled: Callable[[dict], bool], timeout_s: float = 90.0) -> list[dict]:
        """Play the scenario; wait for its last actuation and a settled /diagnostics; stop.

        Settled: ``settled`` holds for the listener's last message. At most ``timeout_s``.
        """
        self._processes.start([sys.executable, str(HERE / 'diag_listener.py'), str(self.out)],
                              self._env)
        if self._policy is not None:
            self._processes.start([sys.executable, str(HERE / self._policy)], self._env)
        started = time.monotonic()
        try:
            self.graph.start()
            # The fixture stops these too, should anything fail before stop().
            self._processes.procs.extend(self.graph.procs.values())
            deadline = time.monotonic() + timeout_s
            while True:
                assert not self.graph.failed(), self.graph.failed()
                seen = self.messages()
                if seen and seen[-1]['actuations'] >= self.cycles and settled(seen[-1]):
                    break
                assert time.monotonic() < deadline, (
                    f'not within {timeout_s:g} s: the last of {self.cycles} actuations and a '
                    f'settled /diagnostics message; seen: {len(seen)} messages, the last '
                    f'{seen[-1] if seen else None}')
                time.sleep(0.2)
            self.elapsed_s = time.monotonic() - started
        finally:
            codes = self.graph.stop()
        assert codes.get('recorder') == 0, codes
        return self.messages()

    def messages(self) -> list[dict]:
        if not self.out.exists():
            return []
        lines = self.out.read_text().splitlines()
        records = [json.loads(line) for line in lines if line.endswith('}')]
        return [r for r in records if 'status' in r]

    def actuation_times(self) -> dict[int, float]:
        """When the listener received each actuation (monotonic s), by cycle stamp."""
        lines = self.out.read_text().splitlines()
        records = [json.loads(line) for line in lines if line.endswith('}')]
        return {r['actuation_ns']: r['t'] for r in records if 'actuation_ns' in r}


def _status(message: dict, name: str) -> dict:
    return next(s for s in message['status'] if s['name'] == name)


def _judged(message: dict, cycles: int) -> bool:
    """The monitor had judged all ``cycles`` when it published ``message``."""
    totals = {s['name']: s['values'].get('cycles_total') for s in message['status']}
    return totals.get('ghost: BAUD-v1') == totals.get('ghost: ERUR-v1') == str(cycles)


def _flowing(messages: list[dict], cycles: int) -> Iterator[dict]:
    """The messages published while cycles flowed: every node had published, the run not over."""
    for message in messages:
        emitter = _status(message, 'ghost: action_emitter')
        if int(emitter['values']['cycles']) > 0 and message['actuations'] < cycles:
            yield message


def test_a_healthy_run_stays_ok(tmp_path, ros_env, processes) -> None:
    """drift_then_recovery: both properties OK all along; every node OK while cycles flow.

    Once the scenario is over, the nodes go STALE (nothing to judge), the properties stay OK.
    """
    run = _Run(tmp_path, ros_env, processes, 'drift_then_recovery')
    # Until the monitor has judged every cycle and the nodes have gone STALE.
    messages = run.run(lambda m: _judged(m, run.cycles)
                       and all(_status(m, f'ghost: {n}')['level'] == STALE for n in NODES))
    print(f'run: {run.elapsed_s:.1f} s, {len(messages)} diagnostics messages')
    assert messages, 'no /diagnostics message received'
    names = [s['name'] for s in messages[-1]['status']]
    assert names == [f'ghost: {n}' for n in NODES] + ['ghost: BAUD-v1', 'ghost: ERUR-v1']
    assert {s['hardware_id'] for s in messages[-1]['status']} == {'ghost'}
    for message in messages:
        for name in ('ghost: BAUD-v1', 'ghost: ERUR-v1'):
            status = _status(message, name)
            assert status['level'] == OK, status
    flowing = list(_flowing(messages, run.cycles))
    assert flowing, 'no diagnostics message while the cycles flowed'
    for message in flowing:
        for node in NODES:
            status = _status(message, f'ghost: {node}')
            assert status['level'] == OK, status
    calibrator = _status(flowing[-1], 'ghost: calibrator')['values']
    assert calibrator['max_history'] == '8' and calibrator['min_outcomes'] == '4'
    assert calibrator['downgrade_threshold'] == '2'
    assert {'raw_level', 'adjusted_level', 'drift', 'inputs_missing'} <= set(calibrator)
    assert _status(flowing[-1], 'ghost: decision_policy')['values']['decision'] in (
        'PROCEED', 'HOLD')
    last = messages[-1]
    baud, erur = (_status(last, f'ghost: {p}')['values'] for p in ('BAUD-v1', 'ERUR-v1'))
    assert baud['cycles_total'] == erur['cycles_total'] == str(run.cycles)
    assert int(baud['cycles_precondition_held']) > 0 and int(erur['cycles_precondition_held']) > 0
    assert baud['violations'] == erur['violations'] == '0'
    assert all(_status(last, f'ghost: {n}')['level'] == STALE for n in NODES)
    # The offline verdict on the recorded bag agrees.
    result = verify_all(run.bag)
    assert result.baud.holds and result.erur.holds
    assert str(result.baud.cycles_precondition_held) == baud['cycles_precondition_held']
    assert str(result.erur.cycles_precondition_held) == erur['cycles_precondition_held']


def test_an_always_proceed_policy_turns_the_monitor_error_within_one_cycle(
        tmp_path, ros_env, processes) -> None:
    """Smoke run, a policy that always proceeds: BAUD-v1 is ERROR within one cycle of cycle 5.

    Cycles 1-4 are ERUR cycles (PROCEED is right); cycle 5 is the first under drift, where
    PROCEED / CONTINUE_MISSION violate P2 and P3. The first ERROR names that cycle and
    arrives before the listener has seen more than one later actuation; it stays ERROR with
    the count, and the offline verifier finds exactly the same violations in the bag.
    """
    # 5 Hz of wall clock (the stamps keep their 0.1 s): one cycle is 200 ms of margin for a
    # loaded machine; the criterion is counted in cycles either way.
    run = _Run(tmp_path, ros_env, processes, 'smoke', policy='always_proceed.py', rate_hz=5.0)
    messages = run.run(lambda m: _judged(m, run.cycles))
    stamps = [c.belief.stamp_ns for c in generate_scenario('smoke').cycles]
    baud = [_status(m, 'ghost: BAUD-v1') for m in messages]
    first_error = next(i for i, s in enumerate(baud) if s['level'] == ERROR)
    assert all(s['level'] == OK for s in baud[:first_error])
    assert all(s['level'] == ERROR for s in baud[first_error:]), 'the ERROR is not latched'
    values = baud[first_error]['values']
    violation_ns = int(values['first_violation.cycle_stamp_ns'])
    assert violation_ns == stamps[4]
    assert values['first_violation.kind'] in ('p2_decision_proceed',
                                              'p3_non_conservative_command')
    assert values['first_violation.decision_kind'] == 'PROCEED'
    assert values['first_violation.command_kind'] == 'CONTINUE_MISSION'
    assert baud[first_error]['message'].startswith('VIOLATED: ')
    seen_ns = messages[first_error]['latest_actuation_ns']
    cycles_after = (seen_ns - violation_ns) // PERIOD_NS
    latency_ms = (messages[first_error]['t'] - run.actuation_times()[violation_ns]) * 1e3
    print(f'first ERROR: {latency_ms:.1f} ms after the listener received the violating '
          f'actuation; {cycles_after} later actuation(s) in between; run {run.elapsed_s:.1f} s')
    assert seen_ns <= violation_ns + PERIOD_NS, 'ERROR later than one cycle after the violation'
    final = baud[-1]['values']
    assert final['violations'] == '12'  # cycles 5-10, P2 and P3 each
    assert final['violations_by_kind'] == 'p2_decision_proceed=6, p3_non_conservative_command=6'
    assert all(_status(m, 'ghost: ERUR-v1')['level'] == OK for m in messages)
    offline = verify_baud(run.bag)
    assert len(offline.violations) == 12
    first = offline.violations[0]
    assert (first.cycle_stamp_ns, first.kind.value) == (violation_ns,
                                                        values['first_violation.kind'])
