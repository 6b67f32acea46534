"""Helpers for the real-process tests: run the graph, read what the bag holds."""

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
import json
import math
from pathlib import Path
import queue
import subprocess
import sys
import threading
import time
from typing import TYPE_CHECKING
import weakref

from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory
import yaml

from ghost_bag.manifest import MANIFEST_NAME
from ghost_core.calibration import drift_condition
from ghost_core.graph import DIAGNOSTICS_TOPIC, GHOST_TOPICS
from ghost_core.hashing import hash_form
from ghost_core.levels import SelfAssessmentLevel
from ghost_core.scenarios import generate_scenario
from ghost_verify.bag import GhostBag

if TYPE_CHECKING:
    from ghost.launcher import GraphProcesses

FEED = str(Path(__file__).with_name('feed.py'))
GHOST_RUN = [sys.executable, '-c',
             'import sys; from ghost.run import main; sys.exit(main())']


def run_main_job(scenario: str, run_dir: Path, env: dict[str, str],
                 timeout: float = 150.0,
                 extra: Sequence[str] = ()) -> subprocess.CompletedProcess[str]:
    """Run ghost_run (the README's main job) and return its completed process."""
    return subprocess.run([*GHOST_RUN, '--scenario', scenario, '--run-dir', str(run_dir),
                           *extra],
                          env=env, text=True, capture_output=True, timeout=timeout,
                          check=False)


def payloads_by_topic(bag: Path) -> dict[str, list[dict[str, object]]]:
    """Return every message's decoded payload per topic, in recorded order, as message dicts.

    Payloads are compared decoded, not as CDR bytes: the CDR encoder does not clear its
    alignment padding, so equal messages may differ in those unused bytes. /diagnostics (the
    monitor's wall-clock health at 1 Hz, recorded by default) is no cycle's payload: left out.
    The configuration records are sorted by node (the nodes start in any order).
    """
    meta = yaml.safe_load((bag / 'metadata.yaml').read_text())
    files = meta['rosbag2_bagfile_information']['relative_file_paths']
    out: dict[str, list[dict[str, object]]] = defaultdict(list)
    for name in files:
        with (bag / name).open('rb') as stream:
            reader = make_reader(stream, decoder_factories=[DecoderFactory()])
            for _s, channel, _m, decoded in reader.iter_decoded_messages(log_time_order=False):
                if channel.topic != DIAGNOSTICS_TOPIC:
                    out[channel.topic].append(hash_form(decoded))
    # The nodes' start configurations come in whatever order the nodes came up: by node.
    for topic, records in out.items():
        if topic.endswith('ghost/configuration'):
            records.sort(key=lambda record: str(record['node']))
    return dict(out)


#: What a message names of the order its inputs arrived in (SPEC 5 v1.3: the raw assessment
#: names the fix it had, which a fix and a belief on two topics can reach in either order),
#: and the content addresses that cover it: the verifier checks those, not the comparisons.
ARRIVAL_FIELDS = frozenset({'has_confirmation', 'confirmation_stamp', 'raw_assessment_sha256',
                            'self_assessment_sha256', 'calibrated_assessment_sha256',
                            'rationale_sha256'})


def without_arrival(value: object) -> object:
    """A payload without ARRIVAL_FIELDS, at any depth (to compare two runs' content)."""
    if isinstance(value, dict):
        return {key: without_arrival(item) for key, item in value.items()
                if key not in ARRIVAL_FIELDS}
    if isinstance(value, list):
        return [without_arrival(item) for item in value]
    return value


def cycle_table(bag: Path) -> list[dict[str, object]]:
    """Per cycle: counts of each ghost message and which precondition held."""
    rows = []
    for cycle in GhostBag(bag).cycles():
        row: dict[str, object] = {
            'stamp_ns': cycle.stamp_ns, 'calibrated': len(cycle.calibrated),
            'rationales': len(cycle.rationales), 'actuations': len(cycle.actuations),
            'raw': len(cycle.raw_assessments)}
        if cycle.calibrated:
            c = cycle.calibrated[0]
            drift = drift_condition(c.outcomes_considered, c.count_beyond_3_std,
                                    c.count_beyond_5_std, c.min_outcomes, c.downgrade_threshold)
            row['baud'] = drift
            row['erur'] = not drift and c.raw_overall_level == SelfAssessmentLevel.KNOWN
        if cycle.actuations:
            row['decision'] = cycle.actuations[0].decision_kind
        rows.append(row)
    return rows


def reports(run_dir: Path) -> dict[str, object]:
    return json.loads((run_dir / 'reports.json').read_text())  # type: ignore[no-any-return]


def feed_cycles(n: int) -> list[dict]:
    """N cycles of the nominal scenario in the feed's JSON form."""
    out = []
    for cycle in generate_scenario('nominal', cycles=n).cycles:
        b, o = cycle.belief, cycle.observation
        obs = None
        if o is not None:
            cov = [0.0] * 36
            for i in range(3):
                for j in range(3):
                    cov[i * 6 + j] = o.covariance[i * 3 + j]
            obs = {'stamp_ns': o.stamp_ns, 'frame_id': o.frame_id, 'position': list(o.position),
                   'covariance': cov}
        out.append({'stamp_ns': b.stamp_ns, 'frame_id': b.frame_id, 'position': list(b.position),
                    'velocity': list(b.velocity), 'orientation': list(b.orientation_xyzw),
                    'pose_covariance': list(b.pose_covariance),
                    'twist_covariance': list(b.twist_covariance), 'observation': obs})
    return out


def json_safe(cycles: list[dict]) -> str:
    def fix(v):
        if isinstance(v, float) and not math.isfinite(v):
            return str(v)
        if isinstance(v, list):
            return [fix(x) for x in v]
        if isinstance(v, dict):
            return {k: fix(x) for k, x in v.items()}
        return v
    return json.dumps(fix(cycles))


#: One line reader per child: several wait_line calls on one child share it, so a line read
#: while waiting for another is still there for the next call.
_READERS: weakref.WeakKeyDictionary[subprocess.Popen[str], queue.Queue[str]] = (
    weakref.WeakKeyDictionary())


def _lines_of(proc: subprocess.Popen[str]) -> queue.Queue[str]:
    lines = _READERS.get(proc)
    if lines is None:
        lines = _READERS[proc] = queue.Queue()

        def pump(out: queue.Queue[str]) -> None:
            assert proc.stdout is not None
            for got in proc.stdout:
                out.put(got)
            out.put('')  # end of the output

        threading.Thread(target=pump, args=(lines,), daemon=True).start()
    return lines


def wait_line(proc: subprocess.Popen[str], line: str, timeout: float = 60.0) -> None:
    """Wait for ``line`` on the child's stdout, at most ``timeout`` s, even if it goes silent.

    A thread reads the lines (a blocking readline cannot time out); the deadline holds
    whether the child writes other lines, nothing at all, or exits.
    """
    lines = _lines_of(proc)
    deadline = time.monotonic() + timeout
    while True:
        try:
            got = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise AssertionError(f'no {line!r} from the feed within {timeout:g} s') from None
        if got.strip() == line:
            return
        if got == '':
            lines.put('')  # the end stays the end for a later call
            proc.wait(timeout=10)
            raise AssertionError(f'feed exited: {proc.stderr.read() if proc.stderr else ""}')


def recorded_counts(bag: Path) -> dict[str, int]:
    """Messages per topic the recorder has written so far, from its ``manifest.json``.

    The recorder rewrites the manifest after every flush of its file (every
    ``chunk_max_age_s``, 0.5 s by default) and at close, so these messages are on disk.
    Empty before its first manifest.
    """
    try:
        topics = json.loads((bag / MANIFEST_NAME).read_text())['topics']
        return {topic: int(entry['count']) for topic, entry in topics.items()}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def wait_until(check: Callable[[], bool], what: str, seen: Callable[[], object],
               timeout: float = 30.0, interval: float = 0.1) -> None:
    """Poll ``check`` until it holds; at ``timeout`` s fail, saying what was awaited and seen."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f'not within {timeout:g} s: {what}; seen: {seen()}')
        time.sleep(interval)


def wait_recorded(bag: Path, want: Mapping[str, int], timeout: float = 30.0,
                  graph: 'GraphProcesses | None' = None) -> dict[str, int]:
    """Wait until the recorder has written at least ``want[topic]`` messages of each topic.

    ``graph`` (a ``GraphProcesses``): fail at once if one of its processes has exited.
    Returns the counts seen.
    """
    counts: dict[str, int] = {}

    def done() -> bool:
        if graph is not None and graph.failed():
            raise AssertionError(f'waiting for the recorder to hold {dict(want)}: '
                                 f'{graph.failed()} exited; recorded: {counts}')
        counts.update(recorded_counts(bag))
        return all(counts.get(topic, 0) >= n for topic, n in want.items())

    wait_until(done, f'the recorder holding {dict(want)} in {bag}',
               lambda: counts or 'no manifest', timeout)
    return counts


#: The Ghost topics with exactly one message per cycle, whatever the belief: /predictions has
#: none for a belief without a usable position (non-finite, or flagged invalid by PX4).
PER_CYCLE_TOPICS = tuple(topic for topic in GHOST_TOPICS if topic != '/predictions')


def every_cycle(cycles: int, namespace: str = '',
                topics: Sequence[str] = tuple(GHOST_TOPICS)) -> dict[str, int]:
    """``cycles`` messages on each of ``topics`` (one per cycle each), in ``namespace``."""
    prefix = f'/{namespace.strip("/")}' if namespace.strip('/') else ''
    return {f'{prefix}{topic}': cycles for topic in topics}


def run_fed_graph(tmp_path: Path, env: dict[str, str], cycles: list[dict],
                  remaps: dict[str, str] | None = None) -> tuple[Path, dict[str, int | None]]:
    """The graph without its scenario, fed ``cycles`` by feed.py publishing best-effort.

    feed.py publishes as MAVROS and PX4's bridge do (sensor-data QoS), on the remapped input
    topics, at 10 Hz once the graph has matched; the graph is then stopped. Returns the bag and
    every process's exit code.
    """
    from ghost.bringup import closed_loop_graph, expected_subscribers, GraphOptions, Source
    from ghost.launcher import GraphProcesses

    remaps = remaps or {}
    bag = tmp_path / 'bag'
    config = Path(__file__).resolve().parents[2] / 'config'
    specs = closed_loop_graph(config, GraphOptions(bag_path=str(bag), source=Source.EXTERNAL,
        remaps=remaps, graph_status=True))  # the feed waits for the nodes' reports
    expect = [f'{remaps.get(t, t)}={n}' for t, n in expected_subscribers(specs).items()]
    (tmp_path / 'cycles.json').write_text(json_safe(cycles))
    graph = GraphProcesses(specs, tmp_path / 'logs', env)
    graph.start()
    try:
        feed = subprocess.Popen(  # noqa: S603
            [sys.executable, FEED, str(tmp_path / 'cycles.json'), '--best-effort',
             '--state-topic', remaps.get('/state/nav', '/state/nav'),
             '--observations-topic', remaps.get('/observations', '/observations'),
             '--rate-hz', '10', '--expect', *expect], env=env, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        try:
            wait_line(feed, 'done')
            feed.wait(timeout=10)
        finally:
            feed.kill()
        # Every cycle through the graph and recorded: its last outcome comes idle_flush_s
        # after the last input.
        wait_recorded(bag, every_cycle(len({c['stamp_ns'] for c in cycles})), graph=graph)
        codes = graph.stop()
    finally:
        graph.kill()
    return bag, codes
