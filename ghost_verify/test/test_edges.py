"""The start-up and shutdown rule (docs/properties.md), and the attacks it must not let through.

An honest run whose first cycles were cut before its nodes were ready, or whose last ones were
cut by Ctrl-C, holds with those cycles unverifiable. The attacks change only what Ghost's own
nodes publish (their ghost/lifecycle records and their outputs) and keep the recorder's log
times, as an audit builds them: a node that says "ready" again in the middle of a run, or
"stopping" and then goes on, hides nothing; ``verify_all`` fails.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from run_bags import GHOST_TOPIC, run_config, run_messages, scenario_inputs, write_run_bag, Written

from ghost_core.lifecycle import (
    lifecycle_record,
    parse_lifecycle,
    READY,
    READY_BOUND_NS,
    run_edges,
    STOP_BOUND_NS,
    STOPPING,
)
from ghost_core.scenarios import generate_scenario
from ghost_verify.unverifiable import UnverifiableReason
from ghost_verify.verify import verify_all

pytestmark = pytest.mark.bag

NODES = ('/self_assessor', '/forward_predictor', '/outcome_evaluator', '/calibrator',
         '/decision_policy', '/action_emitter')
LIFECYCLE = ('/ghost/lifecycle', 'std_msgs/msg/String')


def _record(node: str, event: str, log_time_ns: int) -> Written:
    return Written(LIFECYCLE[0], LIFECYCLE[1], {'data': lifecycle_record(node, event)},
                   log_time_ns)


def _run(name: str = 'nominal') -> tuple[list[Written], dict[str, object]]:
    scenario = generate_scenario(name)
    config = scenario.parameters.pipeline_config()
    written, _ = run_messages(scenario_inputs(scenario), config)
    return written, run_config(config)


def _cycle_stamps(written: list[Written]) -> list[int]:
    return sorted({item.stamp_ns for item in written if item.stamp_ns is not None})


def _without(written: list[Written], stamps: set[int], kinds: tuple[str, ...]) -> list[Written]:
    topics = {GHOST_TOPIC[kind] for kind in kinds}
    return [item for item in written
            if not (item.stamp_ns in stamps and item.topic in topics)]


def _first_log(written: list[Written], stamp: int) -> int:
    return min(item.log_time_ns for item in written if item.stamp_ns == stamp)


def _bag(tmp_path: Path, written: list[Written], config: dict[str, object]) -> Path:
    return write_run_bag(tmp_path / 'bag', sorted(written, key=lambda item: item.log_time_ns),
                         config)


def _ready_at(log_time_ns: int) -> list[Written]:
    return [_record(node, READY, log_time_ns + index) for index, node in enumerate(NODES)]


def test_records_parse_and_nothing_else_is_believed() -> None:
    assert parse_lifecycle(lifecycle_record('/calibrator', READY)) == ('/calibrator', READY)
    for text in ('', '[]', '{"event":"ready"}', '{"event":"paused","node":"/a"}',
                 '{"event":"ready","node":"/a","extra":1}', '[' * 100_000, 'x' * 5000):
        assert parse_lifecycle(text) is None
    with pytest.raises(ValueError, match='lifecycle event'):
        lifecycle_record('/a', 'paused')


def test_each_nodes_first_ready_counts_and_the_earliest_stop() -> None:
    edges = run_edges({'/a': 5, '/b': 7}, [(30, '/a', READY), (10, '/a', READY),
                                           (20, '/c', READY), (50, '/b', STOPPING),
                                           (40, '/a', STOPPING)])
    # /b never said ready: its configuration record; /c said it once.
    assert (edges.ready_ns, edges.stop_ns, edges.last_ready) == (20, 40, '/c')
    assert edges.ready_from(None) == 20 and edges.ready_from(0) == 20
    late = run_edges({'/a': 5}, [(READY_BOUND_NS * 3, '/a', READY)])
    assert late.ready_from(100) == 100 + READY_BOUND_NS


def test_an_honest_run_cut_at_both_edges_holds_with_the_edges_unverifiable(
        tmp_path: Path) -> None:
    """The edges of an honest run cut by its start-up and its stop are unverifiable.

    The first cycles lack their actuations (the emitter not matched yet), the last ones their
    calibrated assessment and what follows (the nodes drained away).
    """
    written, config = _run()
    stamps = _cycle_stamps(written)
    early, late = set(stamps[:3]), set(stamps[-3:])
    cut = _without(_without(written, early, ('actuation',)), late,
                   ('calibrated', 'rationale', 'actuation'))
    ready = _first_log(written, stamps[3]) - 10
    stop = _first_log(written, stamps[-3]) - 1
    records = [*_ready_at(ready), *(_record(node, STOPPING, stop + i)
                                    for i, node in enumerate((*NODES, '/recorder')))]
    result = verify_all(_bag(tmp_path, [*cut, *records], config))
    assert result.holds, result.summary_lines()
    reasons = {(cycle.cycle_stamp_ns, cycle.reason) for cycle in result.unverifiable}
    assert {(s, UnverifiableReason.BEFORE_READY) for s in early} <= reasons
    assert {(s, UnverifiableReason.AFTER_STOP) for s in late} <= reasons
    assert result.edges is not None and result.edges.holds
    document = result.to_json()['edges']
    assert document['cycles_before_ready'] == 3 and document['cycles_after_stop'] == 3  # type: ignore[index]
    assert any(line.startswith('start-up and shutdown: 3 cycles before ready, 3 after the '
                               'stop') for line in result.summary_lines())
    # Without the records the same cuts fail, as they did before the rule.
    assert not verify_all(_bag(tmp_path / 'plain', cut, config)).holds
    # --strict holds nothing back.
    assert not verify_all(_bag(tmp_path / 'strict', [*cut, *records], config),
                          strict=True).holds


@pytest.mark.parametrize('attack', ['ready_again', 'ready_late_for_a_new_node',
                                    'stopping_mid_run', 'stopping_then_silence'])
def test_a_node_cannot_declare_itself_not_ready_mid_run(tmp_path: Path, attack: str) -> None:
    """Hide a dropped actuation in the middle of the run behind lifecycle records: caught."""
    written, config = _run('gnss_outage')
    stamps = _cycle_stamps(written)
    ready = [*_ready_at(_first_log(written, stamps[0]) - 1_000_000)]
    middle = len(stamps) // 2
    hidden = set(stamps[middle:middle + 3])
    forged = _without(written, hidden, ('actuation',))
    at = _first_log(written, stamps[middle]) - 1
    if attack == 'ready_again':
        records = [*ready, *_ready_at(at + 2_000_000_000)]
    elif attack == 'ready_late_for_a_new_node':
        # A new node that says it became ready only now (its first ready).
        records = [*ready, _record('/watchdog', READY, at + 2_000_000_000)]
    elif attack == 'stopping_mid_run':
        records = [*ready, _record('/action_emitter', STOPPING, at)]
    else:
        # Stop, and drop every actuation from there on, though the run goes on.
        forged = _without(written, set(stamps[middle:]), ('actuation',))
        records = [*ready, *(_record(node, STOPPING, at + i) for i, node in enumerate(NODES))]
    honest = verify_all(_bag(tmp_path / 'honest', [*written, *ready], config))
    assert honest.holds, honest.summary_lines()
    result = verify_all(_bag(tmp_path / 'forged', [*forged, *records], config))
    assert not result.holds, result.summary_lines()
    assert _first_log(written, stamps[-1]) > at + STOP_BOUND_NS  # the run went on after it
    if attack.startswith('stopping'):
        assert result.edges is not None and not result.edges.holds
        assert any('output_after_stop' in line for line in result.failures())
    else:
        assert result.completeness.incomplete_cycles, result.summary_lines()


def test_cycles_after_a_real_stop_reach_no_check_but_a_replayed_stop_does_not_help(
        tmp_path: Path) -> None:
    """A stop with the run's end: the incomplete tail is spared; a fake earlier stop is not."""
    written, config = _run()
    stamps = _cycle_stamps(written)
    tail = set(stamps[-2:])
    cut = _without(written, tail, ('actuation',))
    stop = _first_log(written, stamps[-2])
    result = verify_all(_bag(tmp_path, [*cut, _record('/recorder', STOPPING, stop)], config))
    assert result.holds, result.summary_lines()
    edges = result.edges
    assert edges is not None
    assert {cycle.cycle_stamp_ns for cycle in edges.unverifiable} == tail
    moved = [replace(item, log_time_ns=item.log_time_ns) for item in cut]
    early = _first_log(written, stamps[len(stamps) // 3])
    assert not verify_all(_bag(tmp_path / 'early', [*moved, _record('/recorder', STOPPING,
                                                                      early)], config)).holds
