"""Ghost through the real Jazzy ``ros2 launch``, ``ros2 run`` and ``ros2 topic``, as users run it.

The tools are the vendored, unmodified Jazzy sources built by scripts/vendored.sh ros2-jazzy
(``ros2_env``: scripts/env.sh, then the tools' local_setup.bash, on a ROS domain of the test's
own). Every command is a real process, started through ``processes`` so that its whole process
group is stopped at the end. A launch is stopped as Ctrl-C stops it: SIGINT to its process
group. ``ros2 topic`` always runs with ``--no-daemon`` (a daemon would outlive the test).
"""

import json
import os
from pathlib import Path
import re
import signal
import subprocess
import sys
import time
from typing import Any

from graph_runs import every_cycle, recorded_counts, wait_recorded
import pytest
import yaml

from ghost.bringup import closed_loop_graph, expected_subscribers, GraphOptions, Source
from ghost_core.scenarios import generate_scenario

pytestmark = pytest.mark.ros2_tools

HERE = Path(__file__).resolve().parent
CONFIG = HERE.parents[1] / 'config'
LAUNCH = ['ros2', 'launch', 'ghost', 'closed_loop.launch.py']
FEED = str(HERE / 'integration_feed.py')
#: How the docs tell a user to watch a run (Jazzy's echo defaults to best-effort).
ECHO_ACTUATIONS = ['ros2', 'topic', 'echo', '--once', '--no-daemon', '--spin-time', '3',
                   '--qos-reliability', 'reliable', '--qos-durability', 'volatile',
                   '/actuations']
ECHO_GRAPH_STATUS = ['ros2', 'topic', 'echo', '--once', '--no-daemon', '--spin-time', '3',
                     '--qos-durability', 'transient_local', '--qos-reliability', 'reliable',
                     '/ghost/graph_status']
VERIFIERS = ('verify_erur', 'verify_baud', 'trace_decisions', 'verify_all')


def _call(processes: Any, argv: list[str], env: dict[str, str], timeout: float = 60.0,
          **kwargs: Any) -> tuple[int, str]:
    """Run ``argv`` to its end; return its exit code and its stdout + stderr."""
    proc = processes.start(argv, env, stderr=subprocess.STDOUT, **kwargs)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f'{" ".join(argv)} did not end within {timeout} s')
    return proc.returncode, out


def _start_launch(processes: Any, arguments: list[str], env: dict[str, str],
                  tmp_path: Path, name: str = 'launch') -> tuple[subprocess.Popen[str], Path]:
    """Start ``ros2 launch ghost closed_loop.launch.py ARGS`` in tmp_path, logging to a file."""
    log = tmp_path / f'{name}.log'
    # launch_ros and the launch file leave their temporary parameter files behind: keep them
    # in tmp_path rather than /tmp.
    (tmp_path / 'tmp').mkdir(exist_ok=True)
    with log.open('w') as stream:
        proc = processes.start([*LAUNCH, *arguments], {**env, 'TMPDIR': str(tmp_path / 'tmp')},
                               stdout=stream, stderr=subprocess.STDOUT, cwd=tmp_path)
    return proc, log


def _wait_for(log: Path, pattern: str, procs: list[subprocess.Popen[str]],
              timeout: float) -> str:
    """Wait until ``pattern`` (a regex) appears in ``log``; fail if a process ends first."""
    deadline = time.monotonic() + timeout
    while True:
        text = log.read_text(errors='replace') if log.exists() else ''
        if re.search(pattern, text, re.MULTILINE):
            return text
        ended = [p.args for p in procs if p.poll() is not None]
        if ended or time.monotonic() > deadline:
            why = f'{ended} ended' if ended else f'not within {timeout} s'
            pytest.fail(f'no {pattern!r} in {log.name} ({why}):\n{text[-6000:]}')
        time.sleep(0.1)


def _recorded(bag: Path, want: dict[str, int], launch: subprocess.Popen[str],
              log: Path) -> None:
    """Wait until the launch's recorder has written ``want`` (messages per topic)."""
    try:
        wait_recorded(bag, want)
    except AssertionError as err:
        ended = '' if launch.poll() is None else f' (ros2 launch ended: {launch.returncode})'
        pytest.fail(f'{err}{ended}\n{log.read_text(errors="replace")[-6000:]}')


def _ended(launch: subprocess.Popen[str], log: Path, timeout: float = 180) -> str:
    """Wait for a finite run's launch to end by itself; check it ended cleanly; its output."""
    try:
        launch.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f'ros2 launch of a finite run still running after {timeout} s:\n'
                    f'{log.read_text(errors="replace")[-6000:]}')
    output = log.read_text(errors='replace')
    _clean(output, launch)
    return output


def _clean(output: str, launch: subprocess.Popen[str]) -> None:
    """Every node stopped cleanly, and ros2 launch exited 0."""
    unclean = [line for line in output.splitlines()
               if 'process has died' in line or 'Traceback' in line]
    assert not unclean and launch.returncode == 0, (
        f'not every node stopped cleanly (ros2 launch exit {launch.returncode}):\n'
        + '\n'.join(unclean) + f'\n--- the launch log (a stuck stop prints its stacks):\n'
        f'{output[-8000:]}')


def _interrupt(launch: subprocess.Popen[str], log: Path) -> str:
    """Ctrl-C: SIGINT to the launch's process group; wait for it; return its output."""
    os.killpg(launch.pid, signal.SIGINT)
    try:
        launch.wait(timeout=40)
    except subprocess.TimeoutExpired:
        pytest.fail(f'ros2 launch still running 40 s after SIGINT:\n{log.read_text()[-4000:]}')
    return log.read_text(errors='replace')


def _bag_at(bag: Path, tmp_path: Path, log: str) -> None:
    elsewhere = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith('ghost_bag_'))
    assert (bag / 'metadata.yaml').is_file(), (
        f'no complete bag at {bag} (bag:= ignored? bags in the working directory: '
        f'{elsewhere})\n{log[-4000:]}')


def _graph_readers(record: bool, remaps: dict[str, str], feed_readers: int) -> list[str]:
    """``topic=readers`` of an integration-mode graph (no scenario), ``--expect`` of the feed."""
    specs = closed_loop_graph(CONFIG, GraphOptions(source=Source.EXTERNAL, record=record))
    counts = expected_subscribers(specs)
    counts['/actuations'] = counts.get('/actuations', 0) + feed_readers
    return [f'{remaps.get(topic, topic)}={n}' for topic, n in sorted(counts.items())]


def test_make_ros2_then_env_sh_gives_the_readme_ros2(tmp_path, ros2_env, processes) -> None:
    """The README's set-up of the ros2 CLI gives a working ``ros2``; without ../shared, a line.

    ``make ros2``, then in a new shell ``source scripts/env.sh --ros2``: ``ros2 launch`` works
    (``ros2_env`` has built the tools already, so ``make ros2`` finds them built). Without
    ../shared: one line, exit 2.
    """
    repo = HERE.parents[1]
    # A new shell: this one's PATH (no ros2 on it), the README's two commands.
    shell = {'PATH': os.environ['PATH'], 'HOME': os.environ.get('HOME', '/root'),
             'ROS_DOMAIN_ID': ros2_env['ROS_DOMAIN_ID'], 'TMPDIR': str(tmp_path)}
    code, out = _call(processes, ['make', '-s', '--no-print-directory', 'ros2'], shell,
                      timeout=600, cwd=repo)
    assert code == 0 and out.splitlines()[-1] == (
        'ros2: ready; in each shell: source scripts/env.sh --ros2'), out
    code, out = _call(processes, ['bash', '-c', 'source scripts/env.sh --ros2 && ros2 launch '
                                  'ghost closed_loop.launch.py --show-args'], shell, cwd=repo)
    assert code == 0 and "'accuracy_profile':" in out, out
    proc = processes.start(['make', '-s', '--no-print-directory', 'ros2',
                            f'SHARED={tmp_path / "no_shared"}'], shell, cwd=repo,
                           stderr=subprocess.PIPE)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 2 and err.count('\n') == 1, err
    assert f'make ros2: no {tmp_path / "no_shared"}/vendor/ros2-jazzy beside this clone' in err


def test_show_args_lists_every_launch_argument(ros2_env, processes) -> None:
    """``ros2 launch ghost closed_loop.launch.py --show-args`` lists the arguments, exit 0."""
    code, out = _call(processes, [*LAUNCH, '--show-args'], ros2_env)
    assert code == 0, out
    declared = set(re.findall(r"^    '(\w+)':$", out, re.MULTILINE))
    assert {'scenario', 'use_scenario', 'record', 'bag', 'signing_key', 'state_topic',
            'observations_topic', 'enclave_prefix', 'config_dir'} <= declared, out
    # issue 11's new arguments
    missing = {'namespace', 'period_s', 'min_outcomes', 'downgrade_threshold', 'max_history',
               'input_qos', 'params_file', 'px4', 'mavros'} - declared
    assert not missing, f'not declared: {sorted(missing)}\n{out}'


@pytest.mark.parametrize(('argument', 'named'), [
    ('scenario:=nope', ('scenario', 'nope')),
    ('input_qos:=sometimes', ('input_qos', 'sometimes')),
    ('record:=maybe', ('record', 'maybe')),
    ('min_outcomes:=0', ('min_outcomes',)),
    ('namespace:=9lives', ('namespace', '9lives')),
    ('accuracy_profile:=lidar', ('accuracy_profile', 'lidar')),
    ('input:=no_such_bag', ('input', 'no_such_bag')),
    ('speed:=0', ('speed', '0')),
    ('mavros:=maybe', ('mavros', 'maybe')),
])
def test_bad_launch_argument_is_refused(tmp_path, ros2_env, processes, argument, named) -> None:
    """A bad value is refused before any node starts: non-zero exit, the argument named."""
    code, out = _call(processes, [*LAUNCH, argument], {**ros2_env, 'TMPDIR': str(tmp_path)},
                      timeout=60, cwd=tmp_path)
    assert code != 0, out
    for word in named:
        assert word in out, out
    assert 'process started' not in out, out


def test_an_unknown_launch_argument_is_refused_with_the_known_ones(tmp_path, ros2_env,
                                                                   processes) -> None:
    """``accuracy_profil:=rtk`` (a typo) is refused before any node starts, not ignored.

    The refusal names it and lists the known arguments: exactly those ``--show-args`` shows.
    """
    code, out = _call(processes, [*LAUNCH, 'scenario:=smoke', 'accuracy_profil:=rtk'],
                      {**ros2_env, 'TMPDIR': str(tmp_path)}, timeout=60, cwd=tmp_path)
    assert code != 0 and 'process started' not in out, out
    assert "unknown launch argument accuracy_profil:='rtk'; the known ones: " in out, out
    known = out.split('the known ones: ')[1].split(' (')[0].split(', ')
    code, shown = _call(processes, [*LAUNCH, '--show-args'], ros2_env)
    assert code == 0, shown
    assert sorted(known) == sorted(re.findall(r"^    '(\w+)':$", shown, re.MULTILINE)), out


#: A user's launch file with an argument of its own, including Ghost's as INCLUDE says.
_PARENT = """
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, GroupAction, IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource

ghost_launch_file = os.path.join(get_package_share_directory('ghost'), 'launch',
                                 'closed_loop.launch.py')


def generate_launch_description():
    return LaunchDescription([DeclareLaunchArgument('mine', default_value='1'), INCLUDE])
"""


def _documented_include() -> str:
    """docs/integration.md's way to include Ghost's launch file from one's own."""
    text = (HERE.parents[1] / 'docs' / 'integration.md').read_text(encoding='utf-8')
    block = re.search(r'pass Ghost only its own:\n\n```python\n(.*?)```', text, re.DOTALL)
    assert block is not None, 'docs/integration.md: no python block on including the launch file'
    return block.group(1).strip()


@pytest.mark.parametrize('include', ['plain', 'documented'])
def test_an_including_files_arguments_are_refused_unless_included_as_documented(
        tmp_path, ros2_env, processes, include) -> None:
    """Included plainly, the includer's own ``mine`` reaches Ghost's file and is refused.

    Included as docs/integration.md says (a GroupAction passing only Ghost's arguments), the
    graph starts (Ctrl-C then stops it; how cleanly a stop at start-up ends is not this test's).
    """
    statement = ('IncludeLaunchDescription(PythonLaunchDescriptionSource(ghost_launch_file), '
                 "launch_arguments={'use_scenario': 'false'}.items())" if include == 'plain'
                 else _documented_include())
    parent = tmp_path / 'mine.launch.py'
    parent.write_text(_PARENT.replace('INCLUDE', statement), encoding='utf-8')
    log = tmp_path / 'launch.log'
    (tmp_path / 'tmp').mkdir()
    with log.open('w') as stream:
        launch = processes.start(['ros2', 'launch', str(parent)],
                                 {**ros2_env, 'TMPDIR': str(tmp_path / 'tmp')}, stdout=stream,
                                 stderr=subprocess.STDOUT, cwd=tmp_path)
    if include == 'plain':
        code = launch.wait(timeout=60)
        out = log.read_text()
        assert code != 0 and "unknown launch argument mine:='1'" in out, out
        assert 'process started' not in out, out
        return
    out = _wait_for(log, r'\[INFO\] \[self_assessor-\d+\]: process started', [launch],
                    timeout=60)
    assert 'unknown launch argument' not in out, out
    _interrupt(launch, log)


#: The README's two commands ("The ros2 commands"): a smoke run recorded to a bag, then a
#: verifier on it, chained as a user chains them.
README = HERE.parents[1] / 'README.md'


def _readme_chain() -> tuple[str, str, str]:
    """The README's launch line, its verify line, and the bag path they share."""
    lines = README.read_text(encoding='utf-8').splitlines()
    launch = next(line for line in lines
                  if line.startswith('ros2 launch ghost closed_loop.launch.py scenario:=smoke'))
    verify = lines[lines.index(launch) + 1]
    bag = re.search(r'bag:=(\S+)', launch)
    assert bag is not None and verify.startswith('ros2 run ghost_verify verify_erur '), (
        launch, verify)
    return launch, verify.split('#')[0].strip(), bag.group(1)


def test_the_readme_smoke_launch_ends_and_its_bag_verifies(tmp_path, ros2_env,
                                                           processes) -> None:
    """The README's launch of the smoke scenario ends by itself, so its verifier can follow.

    ``ros2 launch ghost closed_loop.launch.py scenario:=smoke record:=true bag:=BAG && ros2 run
    ghost_verify verify_erur BAG``, as written but for the bag's folder (the test's own): the
    launch exits 0 once the last cycle is actuated, the recorder drained and the bag closed,
    every node cleanly; then verify_erur, verify_baud, trace_decisions and verify_all pass.
    """
    launch_line, verify_line, readme_bag = _readme_chain()
    bag = tmp_path / 'bag'
    chain = f'{launch_line} > launch.log 2>&1 && {verify_line}'.replace(readme_bag, str(bag))
    (tmp_path / 'tmp').mkdir()
    code, verified = _call(processes, ['bash', '-c', chain],
                           {**ros2_env, 'TMPDIR': str(tmp_path / 'tmp')}, timeout=240,
                           cwd=tmp_path)
    output = (tmp_path / 'launch.log').read_text(errors='replace')
    assert code == 0, f'{chain}: exit {code}\n{verified}\n--- launch:\n{output[-6000:]}'
    assert 'ERUR-v1: HOLDS (4 cycles evaluated)' in verified, verified
    assert re.search(r'\[scenario\]: run complete: the last cycle is actuated', output), output
    unclean = [line for line in output.splitlines()
               if 'process has died' in line or 'Traceback' in line]
    assert not unclean, '\n'.join(unclean) + f'\n{output[-8000:]}'
    _bag_at(bag, tmp_path, output)
    expected = len(generate_scenario('smoke').cycles)
    counts = recorded_counts(bag)
    assert all(counts.get(topic, 0) >= n for topic, n in every_cycle(expected).items()), counts
    results = {}
    for tool in VERIFIERS:
        results[tool] = _call(processes, ['ros2', 'run', 'ghost_verify', tool, str(bag)],
                              ros2_env, timeout=120)
    assert {tool: code for tool, (code, _) in results.items()} == dict.fromkeys(VERIFIERS, 0), (
        '\n'.join(f'== {tool} (exit {code})\n{out}' for tool, (code, out) in results.items()))
    assert 'BAUD-v1: HOLDS (6 cycles evaluated)' in results['verify_baud'][1]
    assert f'chain: {expected}/{expected} verified' in results['verify_all'][1]
    assert f'cycles: {expected}/{expected} complete' in results['verify_all'][1]
    # trace_decisions prints one line by default.
    assert results['trace_decisions'][1] == f'chain: {expected}/{expected} verified\n'


def test_an_input_bag_launch_with_the_rtk_profile_ends_and_verifies(tmp_path, ros2_env,
                                                                     processes) -> None:
    """input:=BAG plays a recorded input bag (what ``ros2 bag play`` does), then the launch ends.

    With accuracy_profile:=rtk: the recording's configuration holds rtk's thresholds, and
    verify_all re-derives every message from it exactly, so the self-assessor judged with them.
    The input player exits after "input complete" once the last cycle is actuated.
    """
    from input_bags import write_input_bag

    from ghost_core.profiles import accuracy_profile

    source = write_input_bag(tmp_path / 'in', generate_scenario('smoke'))
    bag = tmp_path / 'bag'
    launch, log = _start_launch(processes, [
        f'input:={source}', 'speed:=2', 'accuracy_profile:=rtk', 'record:=true', f'bag:={bag}'],
        ros2_env, tmp_path)
    output = _ended(launch, log)
    assert re.search(r'\[input_player\]: input complete', output), output[-4000:]
    assert re.search(r'\[input_player\]: run complete', output), output[-4000:]
    _bag_at(bag, tmp_path, output)
    thresholds = json.loads((bag / 'manifest.json').read_text())['config']['thresholds']
    rtk = accuracy_profile('rtk')
    assert [thresholds[block] for block in ('position', 'velocity', 'orientation')] == [
        {'known_max_std': b.known_max_std, 'uncertain_max_std': b.uncertain_max_std}
        for b in (rtk.position, rtk.velocity, rtk.orientation)], thresholds
    code, verdict = _call(processes, ['ros2', 'run', 'ghost_verify', 'verify_all', str(bag)],
                          ros2_env, timeout=120)
    assert code == 0, verdict
    assert re.search(r'^replay: 60/60 messages re-derived exactly', verdict, re.MULTILINE), verdict


@pytest.mark.parametrize('qos', ['reliable', 'best_effort'])
def test_integration_launch_with_remapped_inputs_verifies(tmp_path, ros2_env, processes,
                                                          qos) -> None:
    """An integration-mode launch fed by an estimator stand-in records a bag that verifies.

    use_scenario:=false state_topic:=/ekf/odom observations_topic:=/rtk/fix, fed 30 cycles at
    10 Hz by a publisher of the test (reliable, or best-effort as MAVROS publishes): the bag
    at bag:= verifies with ``ros2 run ghost_verify verify_all``, every cycle in it.
    """
    bag = tmp_path / 'bag'
    cycles = 30
    launch, log = _start_launch(processes, [
        'use_scenario:=false', 'state_topic:=/ekf/odom', 'observations_topic:=/rtk/fix',
        'record:=true', f'bag:={bag}', 'graph_status:=true'], ros2_env, tmp_path)
    # The feed waits for every edge of the graph, as the scenario would (and for its own
    # reader on /actuations): a sample published before its reader matched is lost.
    code, out = _call(processes, [
        sys.executable, FEED, '--state-topic', '/ekf/odom', '--fix-topic', '/rtk/fix',
        '--cycles', str(cycles), '--rate-hz', '10', '--qos', qos, '--expect',
        *_graph_readers(record=True, remaps={'/state/nav': '/ekf/odom',
                                             '/observations': '/rtk/fix'}, feed_readers=1)],
        ros2_env, timeout=150)
    assert code == 0, f'{out}\nlaunch:\n{log.read_text()[-6000:]}'
    assert f'actuated {cycles}' in out
    output = _interrupt(launch, log)
    _clean(output, launch)  # Ctrl-C stops every node cleanly
    _bag_at(bag, tmp_path, output)
    report = tmp_path / 'report.json'
    code, out = _call(processes, ['ros2', 'run', 'ghost_verify', 'verify_all', str(bag),
                                  '--json', str(report)], ros2_env, timeout=120)
    assert code == 0, out
    document = json.loads(report.read_text())
    # The feed started once every edge matched; a node's ready record may reach the recorder
    # just after the first cycle's messages: that cycle is unverifiable, not judged.
    held = document['cycles_unverifiable']
    assert held <= 1 and document['cycles_seen'] == cycles - held, out
    assert document['trace']['total_decisions'] == cycles - held, out


def test_topic_echo_shows_actuations_and_graph_status_during_a_run(tmp_path, ros2_env,
                                                                   processes) -> None:
    """``ros2 topic echo --once`` with the docs' QoS flags prints what Ghost publishes.

    During a run: an ActionEmission from /actuations, and the nodes' reports from
    /ghost/graph_status.
    """
    launch, log = _start_launch(processes, ['use_scenario:=false', 'graph_status:=true'],
                                ros2_env, tmp_path)
    feed_log = tmp_path / 'feed.log'
    readers = _graph_readers(record=False, remaps={}, feed_readers=1)
    on_actuations = next(int(r.split('=')[1]) for r in readers if r.startswith('/actuations='))
    with feed_log.open('w') as stream:
        # Waits for the graph, then until the echo's reader is discovered too (one more
        # reader on /actuations than the graph's and its own), then plays.
        feed = processes.start([
            sys.executable, FEED, '--cycles', '30', '--rate-hz', '10', '--expect', *readers,
            '--also-discovered', f'/actuations={on_actuations + 1}'], ros2_env, stdout=stream,
            stderr=subprocess.STDOUT)
    _wait_for(feed_log, r'^graph ready$', [launch, feed], timeout=90)
    echo = processes.start(ECHO_ACTUATIONS, ros2_env, stderr=subprocess.STDOUT)
    code, status = _call(processes, ECHO_GRAPH_STATUS, ros2_env, timeout=60)
    assert code == 0, status
    assert re.search(r'^data: .*"node"', status, re.MULTILINE), status
    feed.wait(timeout=90)
    assert feed.returncode == 0, feed_log.read_text()
    try:  # every cycle has been actuated: the echo has had 30 ActionEmissions to print
        printed, _ = echo.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        pytest.fail(f'ros2 topic echo /actuations printed nothing:\n{feed_log.read_text()}')
    assert echo.returncode == 0, printed
    for field in ('header:', 'decision:', 'rationale_sha256:', 'command:', 'contract_id:'):
        assert re.search(rf'^{field}', printed, re.MULTILINE), printed
    _interrupt(launch, log)


#: How the docs tell a user to look at Ghost's health (diagnostic_updater's QoS: reliable).
ECHO_DIAGNOSTICS = ['ros2', 'topic', 'echo', '--once', '--no-daemon', '--spin-time', '3',
                    '--qos-reliability', 'reliable', '--qos-durability', 'volatile',
                    '/diagnostics', 'diagnostic_msgs/msg/DiagnosticArray']


def test_namespaced_launch_publishes_diagnostics_and_its_bag_verifies(tmp_path, ros2_env,
                                                                      processes) -> None:
    """namespace:=uav1: every Ghost topic under /uav1, /diagnostics names it, the bag verifies.

    The scenario plays 100 cycles at 10 Hz (the params_file says so), so the echoes of
    /diagnostics (1 Hz) and of /uav1/actuations meet the run.
    """
    bag = tmp_path / 'bag'
    params = tmp_path / 'slow.yaml'
    params.write_text('/**/scenario:\n  ros__parameters:\n    cycles: 100\n')
    launch, log = _start_launch(
        processes, ['scenario:=smoke', 'namespace:=uav1', 'record:=true', f'bag:={bag}',
                    f'params_file:={params}'], ros2_env, tmp_path)
    # Both echoes from the start (with the type, so no discovery is needed before they
    # subscribe): each takes the first message it gets.
    echoes = {name: processes.start(argv, ros2_env, stderr=subprocess.STDOUT) for name, argv in (
        ('diagnostics', ECHO_DIAGNOSTICS),
        ('actuations', [*ECHO_ACTUATIONS[:-1], '/uav1/actuations',
                        'ghost_interfaces/msg/ActionEmission']))}
    printed = {}
    for name, echo in echoes.items():
        try:
            printed[name], _ = echo.communicate(timeout=90)
        except subprocess.TimeoutExpired:
            pytest.fail(f'ros2 topic echo of {name} printed nothing within 90 s')
        assert echo.returncode == 0, printed[name]
    assert 'ghost uav1: BAUD-v1' in printed['diagnostics'], printed['diagnostics']
    assert 'hardware_id: uav1' in printed['diagnostics']
    assert 'command:' in printed['actuations'], printed['actuations']
    # The launch ends by itself once the run is complete.
    output = _ended(launch, log)
    # Loggers are named by namespace and node.
    assert re.search(r'\[uav1\.scenario\]: scenario complete', output), output[-4000:]
    expected = 100
    _recorded(bag, every_cycle(expected, namespace='uav1'), launch, log)
    _bag_at(bag, tmp_path, output)
    code, verdict = _call(processes, ['ros2', 'run', 'ghost_verify', 'verify_all', str(bag)],
                          ros2_env, timeout=120)
    assert code == 0 and f'chain: {expected}/{expected} verified' in verdict, verdict
    topics = yaml.safe_load((bag / 'metadata.yaml').read_text())[
        'rosbag2_bagfile_information']['topics_with_message_count']
    # /diagnostics stays absolute in a namespace (every graph on the domain shares it).
    assert {t['topic_metadata']['name'] for t in topics} == {'/diagnostics'} | {
        f'/uav1/{name}' for name in ('state/nav', 'observations', 'vehicle_status',
                                     'self_assessment',
                                     'predictions', 'prediction_outcomes',
                                     'self_assessment/calibrated', 'decisions', 'actuations',
                                     'ghost/configuration', 'ghost/lifecycle')}
    # The launch's own parameter files are gone with it.
    assert not list((tmp_path / 'tmp').glob('ghost_launch_*'))


def test_single_process_launch_runs_the_agent_in_one_process_and_its_bag_verifies(
        tmp_path, ros2_env, processes) -> None:
    """single_process:=true: one ghost_agent process instead of the agent's nodes; same bag.

    The scenario and the recorder keep their own processes; the launch ends them all once the
    run is complete.
    """
    bag = tmp_path / 'bag'
    launch, log = _start_launch(
        processes, ['scenario:=smoke', 'record:=true', f'bag:={bag}', 'single_process:=true',
                    'executor:=events'], ros2_env, tmp_path)
    output = _ended(launch, log)
    _recorded(bag, every_cycle(10), launch, log)
    started = set(re.findall(r'\[INFO\] \[(\w+)-\d+\]: process started', output))
    assert started == {'scenario', 'recorder', 'ghost_agent'}, output[-4000:]
    _bag_at(bag, tmp_path, output)
    code, verdict = _call(processes, ['ros2', 'run', 'ghost_verify', 'verify_all', str(bag)],
                          ros2_env, timeout=120)
    assert code == 0 and 'chain: 10/10 verified' in verdict, verdict
    assert launch.returncode == 0 and 'Traceback' not in output, output[-4000:]
