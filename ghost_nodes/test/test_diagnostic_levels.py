"""The levels /diagnostics gives each node and property (ghost_nodes.diagnostics, no ROS)."""

from ghost_core.monitor import OnlineMonitor
from ghost_core.properties import ActuationView, CalibratedView
from ghost_nodes.diagnostics import (
    default_hardware_id,
    GraphHealth,
    Level,
    property_status,
    status_name,
)

S = 1_000_000_000
STALE_NS = S  # the horizon: 10 cycles of 0.1 s


def _levels(health: GraphHealth, now: int) -> dict[str, Level]:
    return {s.name.removeprefix('ghost: '): s.level
            for s in health.node_statuses(now, '/', 'ghost')}


def _cycle(health: GraphHealth, now: int, skip: tuple[str, ...] = ()) -> None:
    """One cycle through the graph, each topic a millisecond after the one it follows."""
    for offset, topic in enumerate(('observations', 'state/nav', 'self_assessment',
                                    'predictions', 'prediction_outcomes',
                                    'self_assessment/calibrated', 'decisions', 'actuations')):
        if topic not in skip:
            health.on_message(topic, now + offset * 1_000_000, 7, f'{topic} ok')


def test_names_and_hardware_id_follow_the_namespace() -> None:
    """Flat diagnostic_updater-style names; a namespace is part of the component."""
    assert status_name('calibrator', '/') == 'ghost: calibrator'
    assert status_name('BAUD-v1', '/uav1') == 'ghost uav1: BAUD-v1'
    assert status_name('calibrator', '/fleet/uav2') == 'ghost fleet uav2: calibrator'
    assert (default_hardware_id('/'), default_hardware_id('/uav1')) == ('ghost', 'uav1')


def test_nodes_are_stale_before_the_first_cycle_and_ok_while_cycles_flow() -> None:
    health = GraphHealth(STALE_NS)
    assert set(_levels(health, 0).values()) == {Level.STALE}
    for i in range(5):
        _cycle(health, i * S // 10)
    levels = _levels(health, S // 2)
    assert set(levels.values()) == {Level.OK}, levels
    status = health.node_statuses(S // 2, '/', 'ghost')[3]
    assert status.message == 'self_assessment/calibrated ok'
    assert dict(status.values)['inputs_missing'] == 'none'
    # The graph goes quiet: nothing to judge.
    assert set(_levels(health, 3 * S).values()) == {Level.STALE}


def test_a_node_that_stops_answering_is_error_and_its_readers_wait() -> None:
    """The evaluator dies: it is ERROR; the calibrator, missing its outcomes, is WARN."""
    health = GraphHealth(STALE_NS)
    _cycle(health, 0)
    for i in range(1, 25):
        _cycle(health, i * S // 10, skip=('prediction_outcomes', 'self_assessment/calibrated',
                                          'decisions', 'actuations'))
    levels = _levels(health, 25 * S // 10)
    assert levels['outcome_evaluator'] == Level.ERROR
    assert levels['calibrator'] == Level.WARN
    assert levels['self_assessor'] == levels['forward_predictor'] == Level.OK
    assert levels['decision_policy'] == levels['action_emitter'] == Level.STALE


def test_a_missing_input_is_a_warning() -> None:
    """No fixes (GNSS outage): the evaluator still answers, and says what it lacks."""
    health = GraphHealth(STALE_NS)
    for i in range(20):
        _cycle(health, i * S // 10, skip=('observations',) if i >= 5 else ())
    status = health.node_statuses(2 * S, '/', 'ghost')[2]
    assert status.level == Level.WARN and status.message == 'inputs missing: observations'


def test_a_property_is_ok_until_violated_then_error_for_good() -> None:
    monitor = OnlineMonitor(STALE_NS)
    calibrated = CalibratedView(100, 0, 1, 6, 2, 0, 4, 2)
    monitor.on_calibrated(calibrated, 0)
    monitor.on_actuation(ActuationView(100, 1, 1), 0)

    def baud() -> object:
        return property_status(monitor.states()[0], monitor.parameters.used, (),
                               monitor.pending, '/', 'ghost')

    ok = baud()
    assert ok.level == Level.OK and ok.message == 'holds (1 cycles evaluated)'
    monitor.on_calibrated(CalibratedView(200, 0, 1, 6, 2, 0, 4, 2), 1)
    monitor.on_actuation(ActuationView(200, 0, 2), 1)
    monitor.on_calibrated(CalibratedView(300, 0, 1, 6, 2, 0, 4, 2), 2)
    monitor.on_actuation(ActuationView(300, 1, 1), 2)
    error = baud()
    values = dict(error.values)
    assert error.level == Level.ERROR
    assert error.message == 'VIOLATED: p2_decision_proceed at cycle 200 (2 violations)'
    assert values['first_violation.cycle_stamp_ns'] == '200'
    assert values['first_violation.decision_kind'] == 'PROCEED'
    assert values['violations'] == '2' and values['holds'] == 'false'
