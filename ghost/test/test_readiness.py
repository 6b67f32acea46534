"""Graph readiness from endpoint reports: both ends of every edge must have matched."""

import pytest

from ghost_nodes.readiness import EndpointReport, missing_edges, parse_report


def _report(node: str, writers: dict[str, int] | None = None,
            readers: dict[str, int] | None = None) -> EndpointReport:
    return EndpointReport(node, writers or {}, readers or {})


EXPECTED = {'/decisions': 2}


def test_both_ends_matched_is_ready() -> None:
    reports = [_report('/decision_policy', writers={'/decisions': 2}),
               _report('/action_emitter', readers={'/decisions': 1}),
               _report('/recorder', readers={'/decisions': 1})]
    assert missing_edges(EXPECTED, reports) == {}


def test_writer_matched_but_a_reader_has_not_matched_the_writer() -> None:
    # The CI failure mode: the graph lists the recorder, its reader has not matched yet.
    reports = [_report('/decision_policy', writers={'/decisions': 2}),
               _report('/action_emitter', readers={'/decisions': 1}),
               _report('/recorder', readers={'/decisions': 0})]
    assert missing_edges(EXPECTED, reports) == {
        '/decisions': '1/2 readers matched a writer'}


def test_readers_matched_but_the_writer_has_not_matched_them_all() -> None:
    reports = [_report('/decision_policy', writers={'/decisions': 1}),
               _report('/action_emitter', readers={'/decisions': 1}),
               _report('/recorder', readers={'/decisions': 1})]
    assert missing_edges(EXPECTED, reports) == {
        '/decisions': 'writers matched 1/2 readers'}


def test_subscriptions_sharing_one_dds_reader_are_one_reader_to_the_writer() -> None:
    # Single process: three nodes read /state/nav through one DDS reader, the recorder its own.
    # The scenario's writer matches two readers; four subscriptions have matched it.
    reports = [_report('/scenario', writers={'/state/nav': 2}),
               _report('/self_assessor', readers={'/state/nav': 1}),
               EndpointReport('/forward_predictor', {}, {'/state/nav': 1}, {'/state/nav': 1}),
               EndpointReport('/outcome_evaluator', {}, {'/state/nav': 1}, {'/state/nav': 1}),
               _report('/recorder', readers={'/state/nav': 1})]
    assert missing_edges({'/state/nav': 4}, reports) == {}
    assert missing_edges({'/state/nav': 4}, [reports[0], *reports[2:]]) == {
        '/state/nav': '3/4 readers matched a writer'}
    assert missing_edges({'/state/nav': 4}, [_report('/scenario', writers={'/state/nav': 1}),
                                              *reports[1:]]) == {
        '/state/nav': 'writers matched 1/2 readers'}
    assert parse_report(reports[2].to_json()) == reports[2]


def test_no_reports_names_both_ends() -> None:
    assert missing_edges({'/a': 1, '/b': 3}, []) == {
        '/a': 'writers matched 0/1 readers, 0/1 readers matched a writer',
        '/b': 'writers matched 0/3 readers, 0/3 readers matched a writer'}


def test_report_round_trip() -> None:
    report = _report('/calibrator', {'/self_assessment/calibrated': 2},
                     {'/self_assessment': 1, '/prediction_outcomes': 0})
    assert parse_report(report.to_json()) == report


@pytest.mark.parametrize(('text', 'message'), [
    ('not json', 'not JSON'),
    ('[]', 'lacks a node name'),
    ('{"node": 3}', 'lacks a node name'),
    ('{"node": "/n", "writers": {"/t": -1}, "readers": {}}', 'writers must map'),
    ('{"node": "/n", "writers": {}, "readers": {"/t": 1.5}}', 'readers must map'),
    ('{"node": "/n", "writers": {}}', 'readers must map'),
])
def test_malformed_reports_are_rejected_with_the_reason(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_report(text)


def test_reports_over_real_dds_track_matching_and_poll_slowly_once_settled(
        ros_env, monkeypatch) -> None:
    """Three nodes on an isolated domain: readiness follows the matched endpoints both ways."""
    import time

    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from std_msgs.msg import String

    from ghost_nodes.qos import GHOST_QOS
    from ghost_nodes.readiness import GraphReadiness, GraphStatusReporter

    monkeypatch.setenv('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=int(ros_env['ROS_DOMAIN_ID']))
    executor = SingleThreadedExecutor(context=context)
    try:
        writer = rclpy.create_node('writer', context=context)
        reader = rclpy.create_node('reader', context=context)
        waiter = rclpy.create_node('waiter', context=context)
        for node in (writer, reader, waiter):
            executor.add_node(node)
        writer.create_publisher(String, '/t', GHOST_QOS)
        subscription = reader.create_subscription(String, '/t', lambda _m: None, GHOST_QOS)
        reporters = [GraphStatusReporter(node, fast_period_s=0.05, slow_period_s=0.5,
                                         settle_s=0.5) for node in (writer, reader)]
        readiness = GraphReadiness(waiter, {'/t': 1})

        def spin_until(done, timeout_s: float = 20.0) -> None:
            deadline = time.monotonic() + timeout_s
            while not done() and time.monotonic() < deadline:
                executor.spin_once(timeout_sec=0.05)
            assert done()

        spin_until(lambda: not readiness.missing())
        spin_until(lambda: all(r.period_ns == 500_000_000 for r in reporters))
        # The reader goes away: the writer's count drops, it reports at once, polls fast again.
        reader.destroy_subscription(subscription)
        spin_until(lambda: readiness.missing() == {
            '/t': 'writers matched 0/1 readers, 0/1 readers matched a writer'})
        assert reporters[0].period_ns == 50_000_000
        readiness.close()
    finally:
        executor.shutdown()
        rclpy.try_shutdown(context=context)


def test_a_node_reports_only_when_graph_status_is_on(ros_env, monkeypatch) -> None:
    """Off by default: no status publisher and no timer; on: the report goes out."""
    import rclpy
    from rclpy.parameter import Parameter

    from ghost.bringup import closed_loop_graph, GraphOptions, Source
    from ghost_core.graph import GRAPH_STATUS_TOPIC
    from ghost_nodes.nodes.calibrator import CalibratorNode

    monkeypatch.setenv('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=int(ros_env['ROS_DOMAIN_ID']))
    try:
        quiet = CalibratorNode(context=context)
        reporting = CalibratorNode(context=context, namespace='/reporting', parameter_overrides=[
            Parameter('graph_status', Parameter.Type.BOOL, True)])
        status = GRAPH_STATUS_TOPIC
        assert quiet.graph_status is None
        assert status not in {p.topic_name for p in quiet.publishers}
        assert len(list(quiet.timers)) == len(list(reporting.timers)) - 1  # the poll timer
        assert reporting.graph_status is not None
        assert '/reporting' + status in {p.topic_name for p in reporting.publishers}
        quiet.destroy_node()
        reporting.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)
    # The graph turns it on when a source waits, and leaves a live vehicle's graph alone.
    config = __import__('pathlib').Path(__file__).resolve().parents[2] / 'config'
    with_source = closed_loop_graph(config, GraphOptions(scenario='smoke'))
    assert all(spec.parameters.get('graph_status') is True for spec in with_source)
    live = closed_loop_graph(config, GraphOptions(source=Source.PX4))
    assert not any('graph_status' in spec.parameters for spec in live)
    forced = closed_loop_graph(config, GraphOptions(source=Source.PX4, graph_status=True))
    assert all(spec.parameters.get('graph_status') is True for spec in forced)
