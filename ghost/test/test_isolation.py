"""Isolation: ghost_run picks a domain of its own; a shared domain is warned about and logged.

The pure tests check the candidate domains, the port arithmetic and the locks. The real tests
start two ghost_run at once: without ROS_DOMAIN_ID they claim different domains and both hold;
with the same ROS_DOMAIN_ID the second one warns, and its nodes log the foreign producers.
"""

from pathlib import Path
import re
import shutil
import subprocess
import time

from graph_runs import GHOST_RUN
import pytest
import yaml

from ghost.bringup import closed_loop_graph, GraphOptions
from ghost.isolation import (
    bound_udp_ports,
    candidate_domains,
    claim_free_domain,
    domain_of_port,
    domain_ports_in_use,
    DomainClaimError,
    lock_path,
    max_domain,
    try_lock_domain,
)
from ghost_nodes.readiness import foreign_producer_message, foreign_producers

CONFIG = Path(__file__).resolve().parents[2] / 'config'
PICKED = re.compile(r'^ghost: ROS_DOMAIN_ID=(\d+) \(free domain picked; set ROS_DOMAIN_ID '
                    r'to choose\)$', re.MULTILINE)


def _no_probe(*_args: object, **_kwargs: object) -> list[str]:
    return []


def _claim(lock_dir: Path, **kwargs: object):
    return claim_free_domain(candidates=kwargs.pop('candidates', [1, 2, 3]), lock_dir=lock_dir,
                             ports_in_use=kwargs.pop('ports_in_use', lambda _d: []),
                             participants=_no_probe, **kwargs)


def test_candidates_skip_the_default_domain_and_stay_below_the_ephemeral_ports() -> None:
    assert max_domain(32768) == 100          # Linux's default ephemeral range starts at 32768
    assert 7400 + 250 * 100 + 249 < 32768 <= 7400 + 250 * 101 + 249
    assert max_domain(65536) == 231          # domain 232's block passes port 65535
    assert candidate_domains(100) == list(range(1, 101))
    assert 0 not in candidate_domains(5, first=0)


def test_ports_map_to_their_domain_and_proc_tables_parse() -> None:
    assert domain_of_port(7400 + 250 * 42 + 10) == 42      # participant 0, metatraffic unicast
    assert domain_of_port(7400 + 250 * 42 + 249) == 42
    assert domain_of_port(7399) is None
    table = ('  sl  local_address rem_address   st tx_queue rx_queue\n'
             f'   0: 0100007F:{7400 + 250 * 7 + 11:04X} 00000000:0000 07 00000000:00000000\n'
             f'   1: 00000000:{53:04X} 00000000:0000 07 00000000:00000000\n')
    assert bound_udp_ports([table]) == {7400 + 250 * 7 + 11, 53}
    assert domain_ports_in_use(7, [table]) == [7400 + 250 * 7 + 11]
    assert domain_ports_in_use(8, [table]) == []


def test_two_claims_in_one_process_get_different_domains(tmp_path) -> None:
    """The lock is per open file: even one process cannot claim a domain twice."""
    with _claim(tmp_path) as first, _claim(tmp_path) as second:
        assert (first.domain_id, second.domain_id) == (1, 2)
        assert first.lock_file == lock_path(tmp_path, 1) == tmp_path / '001.lock'
    with _claim(tmp_path) as again:
        assert again.domain_id == 1, 'a released domain is free again'


def test_a_held_lock_is_skipped_even_when_held_by_another_process(tmp_path) -> None:
    holder = subprocess.Popen(  # noqa: S603
        ['flock', '--exclusive', str(lock_path(tmp_path, 1)), 'sleep', '30'])
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            probe = try_lock_domain(tmp_path, 1)
            if probe is None:
                break
            probe.release()
            time.sleep(0.05)
        with _claim(tmp_path) as claim:
            assert claim.domain_id == 2
    finally:
        holder.kill()
        holder.wait()


def test_a_domain_with_bound_ports_is_skipped_and_left_unlocked(tmp_path) -> None:
    with _claim(tmp_path, ports_in_use=lambda d: [7400 + 250 * d + 10] if d == 1 else []) as c:
        assert c.domain_id == 2
        again = try_lock_domain(tmp_path, 1)
        assert again is not None, 'the skipped domain kept its lock'
        again.release()


def test_no_free_domain_is_an_error_naming_the_range(tmp_path) -> None:
    with _claim(tmp_path, candidates=[4, 5]), _claim(tmp_path, candidates=[4, 5]):
        with pytest.raises(DomainClaimError, match=r'no free ROS domain among 4\.\.5'):
            _claim(tmp_path, candidates=[4, 5])


def test_foreign_producers_are_the_topics_with_more_than_one_matched_writer() -> None:
    assert foreign_producers({'/decisions': 2, '/state/nav': 1, '/predictions': 0}) == {
        '/decisions': 2}
    # /diagnostics (which the recorder records) has many producers by design.
    assert foreign_producers({'/diagnostics': 3, '/uav1/diagnostics': 2}) == {
        '/uav1/diagnostics': 2}
    assert foreign_producer_message('/decisions', 2, 1, ['/decision_policy'] * 2) == (
        'foreign producer on /decisions: 2 publishers matched, expected 1 (another Ghost graph '
        'on this ROS domain? see ROS_DOMAIN_ID); publishers: /decision_policy, /decision_policy')


def _leftover_processes(marker: str) -> list[str]:
    """Processes whose command line mentions ``marker`` (a test's tmp_path)."""
    left = []
    for proc in Path('/proc').iterdir():
        if proc.name.isdigit():
            try:
                cmdline = (proc / 'cmdline').read_bytes().replace(b'\0', b' ').decode()
            except OSError:
                continue
            if marker in cmdline:
                left.append(f'{proc.name}: {cmdline}')
    return left


def test_two_demos_at_once_get_domains_of_their_own_and_both_hold(
        tmp_path, ros_env, processes) -> None:
    """Two ghost_run started together without ROS_DOMAIN_ID: different domains, both hold."""
    env = dict(ros_env)
    del env['ROS_DOMAIN_ID']
    runs = [processes.start([*GHOST_RUN, '--scenario', 'smoke', '--run-dir',
                             str(tmp_path / name)], env) for name in ('a', 'b')]
    outputs = [run.communicate(timeout=150) for run in runs]
    domains = []
    for run, (out, err) in zip(runs, outputs, strict=True):
        assert run.returncode == 0, f'stdout:\n{out}\nstderr:\n{err}'
        picked = PICKED.findall(out)
        assert len(picked) == 1, out
        domains.append(int(picked[0]))
        assert 'BAUD-v1: HOLDS (6 cycles evaluated)' in out
        assert 'ERUR-v1: HOLDS (4 cycles evaluated)' in out
        assert 'chain: 10/10 verified' in out
        assert 'foreign producer' not in err
    assert domains[0] != domains[1]
    assert all(1 <= d <= 100 for d in domains)
    for name in ('a', 'b'):
        logs = ''.join(p.read_text() for p in (tmp_path / name / 'logs').glob('*.log'))
        assert 'foreign producer' not in logs
    assert not _leftover_processes(str(tmp_path))


def _slow_config(tmp_path: Path, rate_hz: float) -> Path:
    """A copy of config/ whose scenario plays at ``rate_hz``, so its graph lives long."""
    config = tmp_path / 'config'
    shutil.copytree(CONFIG, config)
    ghost = yaml.safe_load((config / 'ghost.yaml').read_text())
    ghost['/**/scenario']['ros__parameters']['rate_hz'] = rate_hz
    (config / 'ghost.yaml').write_text(yaml.safe_dump(ghost))
    return config


def _wait_for(predicate, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, f'timed out waiting for {what}'
        time.sleep(0.1)


def test_same_domain_is_warned_and_foreign_producers_are_logged(
        tmp_path, ros_env, processes) -> None:
    """The user puts two runs on one domain: the second warns, its nodes log both producers."""
    domain = ros_env['ROS_DOMAIN_ID']
    first = processes.start(
        [*GHOST_RUN, '--scenario', 'drift_then_recovery', '--run-dir', str(tmp_path / 'first'),
         '--config-dir', str(_slow_config(tmp_path, 2.0))], ros_env)
    # The first graph is up (and playing, slowly) before the second run starts.
    ready = tmp_path / 'first' / 'logs' / 'scenario.log'
    _wait_for(lambda: ready.is_file() and 'graph ready' in ready.read_text(), 60,
              "the first run's graph")
    second = processes.start([*GHOST_RUN, '--scenario', 'smoke', '--run-dir',
                              str(tmp_path / 'second')], ros_env)
    out, err = second.communicate(timeout=150)
    assert 'free domain picked' not in out
    warning = [line for line in err.splitlines() if line.startswith('ghost: warning:')]
    assert len(warning) == 1, f'stdout:\n{out}\nstderr:\n{err}'
    assert warning[0].startswith(f'ghost: warning: ROS_DOMAIN_ID={domain} already has a Ghost '
                                 'graph (')
    assert 'unset ROS_DOMAIN_ID to let ghost_run pick a free domain' in warning[0]
    named = re.search(r'\(\d+ node\(s\): ([^)]*)\)', warning[0])
    assert named, warning[0]
    specs = closed_loop_graph(CONFIG, GraphOptions(scenario='smoke'))
    graph_nodes = {f'/{spec.name}' for spec in specs}
    assert set(named.group(1).split(', ')) <= graph_nodes | {'/ghost_run_monitor', '<unnamed>'}
    logs = '\n'.join(p.read_text() for p in (tmp_path / 'second' / 'logs').glob('*.log'))
    foreign = re.findall(r'foreign producer on (/\S+): (\d+) publishers matched, expected 1 '
                         r'\(another Ghost graph on this ROS domain\? see ROS_DOMAIN_ID\); '
                         r'publishers: (.*)', logs)
    assert foreign, f"no foreign-producer line in the second run's logs:\n{logs[-4000:]}"
    assert all(int(count) >= 2 for _topic, count, _names in foreign)
    processes.stop_all()
    assert first.returncode is not None and second.returncode is not None
    _wait_for(lambda: not _leftover_processes(str(tmp_path)), 10, 'every process to end')
