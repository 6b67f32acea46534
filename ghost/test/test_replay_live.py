"""verify_all's re-derivation on real recordings: the graph over real DDS, its recorder's bag.

An honest ghost_run (in a namespace) re-derives exactly; an outcome evaluator that lies,
run in the graph in place of the real one, passes every other check and is caught; a
``ros2 param set`` of K and Q mid-run is followed. The pure cases (lying assessors, cut
recordings, random runs) are in ghost_verify/test/test_rederive.py.
"""

import json
from pathlib import Path
import subprocess
import sys
import time

from graph_runs import run_main_job
import pytest

from ghost.bringup import closed_loop_graph, GraphOptions, ros_arguments
from ghost.launcher import GraphProcesses
from ghost_bag.manifest import MANIFEST_NAME
from ghost_core.scenarios import generate_scenario
from ghost_verify import verify_all

# A module-scoped ghost_run on a domain of its own (module_ros_env).
pytestmark = pytest.mark.dds

HERE = Path(__file__).resolve().parent
CONFIG = HERE.parents[1] / 'config'
VERIFY = [sys.executable, '-m', 'ghost_verify']
SCENARIO = 'drift_then_recovery'
CYCLES = len(generate_scenario(SCENARIO).cycles)


@pytest.fixture(scope='module')
def honest_run(tmp_path_factory: pytest.TempPathFactory,
               module_ros_env: dict[str, str]) -> Path:
    """One drift_then_recovery run through ghost_run, in namespace uav1; its bag."""
    run_dir = tmp_path_factory.mktemp('honest') / 'run'
    done = run_main_job(SCENARIO, run_dir, module_ros_env, extra=['--namespace', 'uav1'])
    assert done.returncode == 0, f'stdout:\n{done.stdout}\nstderr:\n{done.stderr}'
    return run_dir / 'bag'


def test_an_honest_recording_is_re_derived_exactly(honest_run: Path, tmp_path: Path) -> None:
    """Every message of the real run equals the one re-derived from its recorded inputs."""
    report = tmp_path / 'report.json'
    done = subprocess.run([*VERIFY, str(honest_run), '--json', str(report)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (f'replay: {6 * CYCLES}/{6 * CYCLES} messages re-derived exactly ({CYCLES} cycles, '
            f'from {CYCLES} beliefs and {CYCLES} fixes)') in done.stdout.splitlines()
    replay = json.loads(report.read_text())['replay']
    assert replay['holds'] and replay['possible'] and replay['messages_differing'] == 0
    assert replay['input_topics'] == {'state': '/uav1/state/nav',
                                      'observations': '/uav1/observations'}
    assert replay['topics']['outcome']['topics'] == ['/uav1/prediction_outcomes']
    config = json.loads((honest_run / MANIFEST_NAME).read_text())['config']
    assert config['input_topics'] == replay['input_topics']
    assert config['policies']['assessor_id'] == 'covariance_threshold_hysteresis_v4'


def _actuations_recorded(bag: Path) -> int:
    """How many actuations the recorder has written (its manifest, rewritten every flush)."""
    try:
        topics = json.loads((bag / MANIFEST_NAME).read_text())['topics']
    except (OSError, ValueError, KeyError):
        return 0
    return int(topics.get('/actuations', {}).get('count', 0))


def _run_graph(tmp_path: Path, env: dict[str, str], processes, *, rate_hz: float,
               replace: tuple[str, str] | None = None, during=None) -> Path:
    """Play SCENARIO through the real graph (``replace``: (node, script) run in its place).

    ``during(graph)`` is called once a few actuations are recorded. Returns the bag.
    """
    bag = tmp_path / 'bag'
    specs = closed_loop_graph(CONFIG, GraphOptions(scenario=SCENARIO, bag_path=str(bag),
        monitor=False, overrides={'scenario': {'rate_hz': rate_hz}}))
    stand_in = None
    if replace is not None:
        node, script = replace
        spec = next(s for s in specs if s.name == node)
        specs = [s for s in specs if s is not spec]
        # Its parameters come from its files, as the node's do (and the readiness report the
        # graph turns on for the scenario to wait for).
        assert spec.parameters == {'graph_status': True}
        stand_in = processes.start([sys.executable, str(HERE / script), *ros_arguments(spec)],
                                   env)
    graph = GraphProcesses(specs, tmp_path / 'logs', env)
    graph.start()
    processes.procs.extend(graph.procs.values())
    try:
        deadline = time.monotonic() + 120
        called = during is None
        while _actuations_recorded(bag) < CYCLES:
            assert time.monotonic() < deadline, f'{_actuations_recorded(bag)} actuations'
            assert not graph.failed(), graph.failed()
            if not called and _actuations_recorded(bag) >= 3:
                during(graph)
                called = True
            time.sleep(0.2)
        if stand_in is not None:
            stand_in.send_signal(2)
            stand_in.wait(timeout=20)
    finally:
        codes = graph.stop()
    assert codes.get('recorder') == 0, codes
    return bag


def test_a_lying_evaluator_in_the_graph_is_caught_by_replay_only(tmp_path, ros_env,
                                                                 processes) -> None:
    """The real nodes over DDS, the outcome evaluator lying: every other check holds."""
    bag = _run_graph(tmp_path, ros_env, processes, rate_hz=10.0,
                     replace=('outcome_evaluator', 'lying_evaluator.py'))
    plain = verify_all(bag, replay=False)
    assert plain.holds, plain.summary_lines()
    assert plain.baud.cycles_precondition_held == 0  # the drift was never seen
    result = verify_all(bag)
    assert not result.holds and result.replay is not None and result.replay.possible
    stream, difference = result.replay.first_difference()
    assert (stream, difference.field, difference.recorded) == (
        'outcome', 'position_mahalanobis', 0.8)
    assert difference.recomputed > 0.8
    topics = {topic.kind: topic for topic in result.replay.topics}
    assert topics['raw_assessment'].differences == topics['prediction'].differences == 0
    done = subprocess.run([*VERIFY, str(bag)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 1 and 'replay: DIFFERS (' in done.stdout, done.stdout
    skipped = subprocess.run([*VERIFY, str(bag), '--no-replay'], capture_output=True,
                             text=True, timeout=120, check=False)
    assert skipped.returncode == 0 and 'replay:' not in skipped.stdout, skipped.stdout


def _set(env: dict[str, str], *changes: tuple[str, str, object]) -> None:
    """Set parameters of running nodes, all at once (each client is a process of its own)."""
    clients = [subprocess.Popen([sys.executable, str(HERE / 'set_param.py'), node, name,  # noqa: S603
                                 repr(value)], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
               for node, name, value in changes]
    for client in clients:
        out, err = client.communicate(timeout=90)
        assert client.returncode == 0 and out.strip() == 'accepted', out + err


def test_a_mid_run_param_set_of_k_and_q_is_followed(tmp_path, ros_env, processes) -> None:
    """ros2 param set of K and Q while the graph runs: recorded, judged and re-derived with.

    The nodes publish each change on ghost/configuration, the recorder records it, and the
    verifier judges every cycle with the configuration in force at its stamp.
    """
    def change(_graph: GraphProcesses) -> None:
        _set(ros_env, ('calibrator', 'downgrade_threshold', 5),
             ('forward_predictor', 'process_noise', 0.5))

    bag = _run_graph(tmp_path, ros_env, processes, rate_hz=3.0, during=change)
    result = verify_all(bag)
    assert result.holds, result.summary_lines()
    replay = result.replay
    assert replay is not None and replay.holds and replay.parameters_changed
    followed = {(change.parameter, change.previous, change.value)
                for change in replay.parameters_followed}
    assert followed == {('downgrade_threshold', 2, 5), ('process_noise_q', 0.05, 0.5)}, followed
    parameters = result.parameters
    assert parameters is not None and parameters.holds
    assert sorted(change.node for change in parameters.changes) == [
        '/calibrator', '/forward_predictor']
    # Every cycle before the change carries the first values, every one after the new ones.
    assert parameters.summary().startswith('parameters: HOLDS (')
