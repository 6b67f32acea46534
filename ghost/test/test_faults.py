"""Bad input and faults with the real node processes.

Ghost keeps running, stays conservative, and the bag says why.
"""

import math
from pathlib import Path
import subprocess
import sys

from graph_runs import (
    every_cycle,
    FEED,
    feed_cycles,
    json_safe,
    PER_CYCLE_TOPICS,
    recorded_counts,
    wait_line,
    wait_recorded,
    wait_until,
)

from ghost.bringup import closed_loop_graph, expected_subscribers, GraphOptions, Source
from ghost.launcher import GraphProcesses
from ghost_core.levels import DecisionKind, SelfAssessmentLevel
from ghost_verify import verify_all
from ghost_verify.bag import GhostBag
from ghost_verify.trace import ChainStatus

CONFIG = Path(__file__).resolve().parents[2] / 'config'
P = 100_000_000


class _Run:
    """The graph without the scenario node, fed by feed.py; recorded."""

    def __init__(self, tmp_path: Path, env: dict[str, str], cycles: list[dict]) -> None:
        self.bag = tmp_path / 'bag'
        # graph_status: feed.py waits for the nodes' reports.
        self.specs = closed_loop_graph(CONFIG, GraphOptions(
            source=Source.EXTERNAL, scenario='nominal', bag_path=str(self.bag),
            graph_status=True))
        self.graph = GraphProcesses(self.specs, tmp_path / 'logs', env)
        self.env = env
        (tmp_path / 'cycles.json').write_text(json_safe(cycles))
        self.cycles_file = tmp_path / 'cycles.json'

    def feed(self, pause_after: int = 0) -> subprocess.Popen[str]:
        expect = [f'{t}={n}' for t, n in expected_subscribers(self.specs).items()]
        return subprocess.Popen(
            [sys.executable, FEED, str(self.cycles_file), '--expect', *expect,
             '--pause-after', str(pause_after)],
            env=self.env, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, start_new_session=True)


def _cycles_in(bag: Path) -> dict[int, object]:
    return {c.stamp_ns: c for c in GhostBag(bag).cycles()}


def _settled(counts: dict[str, int], cycles: int) -> bool:
    """``cycles`` beliefs judged, predicted and resolved; every decision recorded actuated."""
    return (all(counts.get(topic, 0) >= cycles for topic in (
        '/self_assessment', '/predictions', '/prediction_outcomes'))
        and counts.get('/decisions', 0) == counts.get('/actuations', 0) > 0)


def test_garbage_beliefs_and_observations_end_conservative(tmp_path, ros_env) -> None:
    """Garbage beliefs and observations: nodes stay up, cycles end conservative, with reasons.

    NaN/inf, negative variance, non-PSD, repeated and old stamps, bad observations: every
    node stays up; garbage cycles are never KNOWN nor PROCEED; reasons are in the bag.
    """
    # 80 cycles: after the garbage (last at cycle 10, 1.9 s) the hysteresis keeps the level
    # degraded for min_level_interval_s (5 s) before PROCEED may resume.
    cycles = feed_cycles(80)
    nan, inf = math.nan, math.inf
    cycles[6]['pose_covariance'][0] = nan                     # cycle 7: NaN covariance
    cycles[7]['position'][1] = inf                            # cycle 8: inf position
    cycles[8]['twist_covariance'][7] = -0.5                   # cycle 9: negative variance
    cycles[9]['pose_covariance'][1] = cycles[9]['pose_covariance'][6] = 1.0  # 10: not PSD
    cycles[10]['stamp_ns'] = cycles[9]['stamp_ns']           # cycle 11: repeated stamp
    cycles[11]['stamp_ns'] = cycles[8]['stamp_ns']           # cycle 12: old stamp
    cycles[13]['observation']['frame_id'] = 'odom'            # cycle 14: frame mismatch
    cycles[14]['observation']['position'][0] = nan            # cycle 15: NaN observation
    cycles[15]['observation']['covariance'][7] = -1.0         # cycle 16: negative variance
    cycles[16]['observation']['covariance'][0] = -1.0         # cycle 17: ROS 'unknown' sentinel
    cycles[17]['pose_covariance'] = [0.0] * 36                # cycle 18: no covariance at all
    run = _Run(tmp_path, ros_env, cycles)
    run.graph.start()
    try:
        feed = run.feed()
        wait_line(feed, 'done')
        # Every distinct cycle through the graph and recorded (its outcome last: idle_flush_s
        # after the last input); it fails at once if a node died on the way. No prediction
        # from a non-finite belief.
        wait_recorded(run.bag, every_cycle(len({c['stamp_ns'] for c in cycles}),
                                           topics=PER_CYCLE_TOPICS), graph=run.graph)
        assert run.graph.failed() == {}, 'a node died on bad input'
        codes = run.graph.stop()
    finally:
        run.graph.kill()
    assert all(code == 0 for code in codes.values()), codes
    seen = _cycles_in(run.bag)
    stamps = [c['stamp_ns'] for c in cycles]
    # Repeated and old stamps are no new cycles: 22 distinct cycles, one of each message.
    assert sorted(seen) == sorted(set(stamps))
    for cycle in seen.values():
        assert len(cycle.raw_assessments) == 1 and len(cycle.actuations) == 1
    garbage = {stamps[6]: 'non_finite_covariance', stamps[7]: 'non_finite_position',
               stamps[8]: 'negative_variance', stamps[9]: 'not_positive_semidefinite',
               stamps[17]: 'no_covariance_information'}
    for stamp, reason in garbage.items():
        cycle = seen[stamp]
        raw = cycle.raw_assessments[0]
        assert raw.overall_level == SelfAssessmentLevel.UNKNOWN
        reasons = {raw.message.msg[b]['reason'] for b in ('position', 'velocity', 'orientation')}
        assert any(reason in r for r in reasons), (reason, reasons)
        assert cycle.calibrated[0].adjusted_overall_level != SelfAssessmentLevel.KNOWN
        assert cycle.actuations[0].decision_kind != DecisionKind.PROCEED
    for index, status in ((13, 'frame_mismatch'), (14, 'invalid_observation'),
                          (15, 'invalid_observation'), (16, 'no_observation_covariance')):
        (outcome,) = seen[stamps[index]].outcomes
        assert outcome.msg['status'] == status and outcome.msg['observed'] is False
    # The clean cycles after the garbage PROCEED again (nothing stuck).
    assert seen[stamps[-1]].actuations[0].decision_kind == DecisionKind.PROCEED
    logs = (tmp_path / 'logs' / 'self_assessor.log').read_text()
    assert 'repeated (zero time step)' in logs and 'out of order or stale' in logs
    assert 'belief judged UNKNOWN' in logs
    evaluator = (tmp_path / 'logs' / 'outcome_evaluator.log').read_text()
    assert "observation frame 'odom' is not the belief frame 'map'" in evaluator


def test_missing_inputs_invent_nothing(tmp_path, ros_env) -> None:
    """Observations stop: outcomes say no_observation. Beliefs stop: no cycle, no actuation."""
    cycles = feed_cycles(16)
    for cycle in cycles[8:]:
        cycle['observation'] = None
    run = _Run(tmp_path, ros_env, cycles)
    run.graph.start()
    try:
        feed = run.feed()
        wait_line(feed, 'done')
        # Every cycle through the graph and recorded. The last outcomes come from the
        # evaluator's idle flush (idle_flush_s after the beliefs stopped), the graph's only
        # timer: once they are recorded, whatever the graph does when its input stops is too.
        wait_recorded(run.bag, every_cycle(len(cycles)), graph=run.graph)
        codes = run.graph.stop()
    finally:
        run.graph.kill()
    assert all(code == 0 for code in codes.values()), codes
    seen = _cycles_in(run.bag)
    stamps = [c['stamp_ns'] for c in cycles]
    assert set(seen) <= set(stamps)
    for stamp in stamps[8:13]:
        (outcome,) = seen[stamp].outcomes
        assert outcome.msg['status'] == 'no_observation'
        assert outcome.msg['observed_position'] == {'x': 0.0, 'y': 0.0, 'z': 0.0}
    # Every actuation belongs to a belief that was published.
    actuated = {s for s, c in seen.items() if c.actuations}
    assert actuated <= set(stamps)
    # Once the input stops (idle_flush_s without input), the last cycles are resolved with
    # what arrived: no observation, so no evidence was made up for them.
    for stamp in stamps[13:]:
        (outcome,) = seen[stamp].outcomes
        assert outcome.msg['status'] == 'no_observation' and outcome.msg['observed'] is False


def test_killed_node_restarts_and_the_bag_shows_the_gap(tmp_path, ros_env) -> None:
    """A SIGKILLed and restarted calibrator: the loop resumes; the gap is visible in the bag.

    The cycles it missed have no calibrated assessment, decision or actuation (never invented).
    The restarted calibrator may publish its first assessments before the recorder's reader
    has matched its new writer (the decision policy's may match first): such a cycle has a
    decision citing an assessment the bag lacks, and the verifier says so (assessment_missing).
    """
    cycles = feed_cycles(120)
    run = _Run(tmp_path, ros_env, cycles)
    run.graph.start()
    try:
        feed = run.feed(pause_after=15)
        wait_line(feed, 'paused')
        # The 15 cycles before the pause have gone through the whole graph: the kill cuts
        # none of them, the gap starts with the cycles played next.
        wait_recorded(run.bag, {topic: 15 for topic in (
            '/self_assessment/calibrated', '/decisions', '/actuations')}, graph=run.graph)
        run.graph.kill_node('calibrator')
        feed.stdin.write('go\n')
        feed.stdin.flush()
        # Cycles flow while the calibrator is down: the assessor has judged 5 more.
        wait_recorded(run.bag, {'/self_assessment': 20})
        run.graph.restart_node('calibrator')
        wait_line(feed, 'done')
        # Every belief judged, predicted and resolved (the last outcomes idle_flush_s after
        # the last input), and every decision actuated. Not a count of calibrated assessments:
        # the recorder may miss the restarted calibrator's first ones (see above).
        stamps = len(cycles)
        wait_until(lambda: _settled(recorded_counts(run.bag), stamps),
                   f'all {stamps} cycles judged and resolved, every decision actuated',
                   lambda: recorded_counts(run.bag))
        codes = run.graph.stop()
    finally:
        run.graph.kill()
    assert codes['recorder'] == 0
    seen = _cycles_in(run.bag)
    stamps = [c['stamp_ns'] for c in cycles]
    missing = [s for s in stamps if not seen[s].calibrated]
    assert missing, 'no cycle was affected by the restart'
    result = verify_all(run.bag)
    unrecorded = {link.timestamp_ns for link in result.trace.links
                  if link.chain_status is ChainStatus.ASSESSMENT_MISSING}
    for stamp in missing:
        assert seen[stamp].raw_assessments, 'the assessor kept running'
        if seen[stamp].rationales:
            # Decided on an assessment the recorder missed: flagged, never silently passed.
            assert stamp in unrecorded, (stamp, result.summary_lines())
        else:
            assert not seen[stamp].actuations
    resumed = [s for s in stamps if s > max(missing) and seen[s].actuations]
    assert resumed, 'the loop did not resume after the restart'
    # The verifier flags it, never silently passes it: the cycles missed are incomplete, and
    # the restarted calibrator's histories (it lost its window) are not what the recorded
    # outcomes give.
    assert not result.holds
    flagged = {c.cycle_stamp_ns for c in result.completeness.incomplete_cycles}
    # A restart within READY_BOUND_NS of the first complete cycle, of a node that had not said
    # ready yet, moves the readiness there: the gap's first cycles are then unverifiable
    # (counted, with their reason), the rest incomplete.
    held = {cycle.cycle_stamp_ns for cycle in result.unverifiable}
    assert set(missing) <= flagged | held and set(missing) & flagged
    # A restarted calibrator has lost its window, so its first histories after the restart
    # usually differ from what the recorded outcomes give (ghost_verify's test_history proves
    # that check deterministically); what it flags comes after the gap.
    mismatched = {m.cycle_stamp_ns for m in result.history.mismatches}
    assert all(stamp > max(missing) for stamp in mismatched), result.summary_lines()


def test_recorder_killed_leaves_a_readable_bag_up_to_the_last_chunk(tmp_path, ros_env) -> None:
    """SIGKILL the recorder mid-run: its .mcap keeps every chunk flushed before the kill."""
    cycles = feed_cycles(40)
    run = _Run(tmp_path, ros_env, cycles)
    run.graph.start()
    try:
        feed = run.feed(pause_after=30)
        wait_line(feed, 'paused')
        # The first 30 cycles' chains on disk: the manifest, written after each flush,
        # counts them.
        wait_recorded(run.bag, {topic: 30 for topic in (
            '/self_assessment', '/predictions', '/self_assessment/calibrated', '/decisions',
            '/actuations')}, graph=run.graph)
        run.graph.kill_node('recorder')
        feed.stdin.write('go\n')
        feed.stdin.flush()
        wait_line(feed, 'done')
        run.graph.stop()
    finally:
        run.graph.kill()
    assert not (run.bag / 'metadata.yaml').exists()
    # The verifier's reader takes what was flushed, and says the input is incomplete.
    result = verify_all(run.bag)
    assert result.incomplete_input and not result.holds
    assert result.trace.total_decisions >= 30, 'less than the flushed cycles survived'
    assert result.trace.chain_intact
    assert result.baud.holds and result.erur.holds
