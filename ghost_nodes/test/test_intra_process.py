"""In-process delivery (ghost_nodes.intra_process): real rclpy nodes in this process, real DDS.

The six agent nodes share one IntraProcessBus, as in ghost_agent. A plain rclpy node (not on
the bus) feeds the nominal scenario over DDS and listens to two outputs over DDS, so both
edges of the process are crossed for real. A seventh node on the bus hears every Ghost topic
in the process and checks the memo each message came with against what DDS delivery would
give: ``hash_form`` of the message, and that form parsed (validated) into its contract.
"""

import time

import pytest

SCENARIO_CYCLES = 24


@pytest.fixture
def context(ros_env):
    import rclpy

    context = rclpy.Context()
    rclpy.init(context=context, domain_id=int(ros_env['ROS_DOMAIN_ID']))
    yield context
    rclpy.try_shutdown(context=context)


def _spin_until(executor, done, timeout_s: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not done() and time.monotonic() < deadline:
        executor.spin_once(timeout_sec=0.05)
    return bool(done())


def test_six_nodes_in_one_process_deliver_in_process_with_a_faithful_memo(context) -> None:
    from geometry_msgs.msg import PoseWithCovarianceStamped
    from nav_msgs.msg import Odometry
    from rclpy.executors import SingleThreadedExecutor

    from ghost_core.hashing import content_address, hash_form
    from ghost_core.scenarios import generate_scenario
    from ghost_core.wire import MESSAGE_TYPES
    from ghost_interfaces import msg as ghost_msg
    from ghost_nodes.intra_process import IntraProcessBus
    from ghost_nodes.node_base import GhostNode
    from ghost_nodes.nodes.action_emitter import ActionEmitterNode
    from ghost_nodes.nodes.calibrator import CalibratorNode
    from ghost_nodes.nodes.decision_policy import DecisionPolicyNode
    from ghost_nodes.nodes.forward_predictor import ForwardPredictorNode
    from ghost_nodes.nodes.outcome_evaluator import OutcomeEvaluatorNode
    from ghost_nodes.nodes.self_assessor import SelfAssessorNode
    from ghost_nodes.qos import GHOST_QOS
    from ghost_nodes.scenario_messages import cycle_messages

    topics = {'self_assessment': ghost_msg.BeliefSelfAssessment,
              'predictions': ghost_msg.ForwardPrediction,
              'prediction_outcomes': ghost_msg.PredictionOutcome,
              'self_assessment/calibrated': ghost_msg.CalibratedSelfAssessment,
              'decisions': ghost_msg.DecisionRationale, 'actuations': ghost_msg.ActionEmission}
    bus = IntraProcessBus()
    options = {'context': context, 'intra_process_bus': bus}
    agent = [cls(**options) for cls in (
        SelfAssessorNode, ForwardPredictorNode, OutcomeEvaluatorNode, CalibratorNode,
        DecisionPolicyNode, ActionEmitterNode)]
    checker = GhostNode('memo_checker', (), **options)
    heard: dict[str, list[object]] = {topic: [] for topic in topics}
    problems: list[str] = []

    def check(topic: str):
        def callback(msg) -> None:
            memo = bus.memo(msg)
            if memo is None:
                problems.append(f'{topic}: delivered without its memo')
                return
            form, contract = memo
            _contract_type, parse = MESSAGE_TYPES[type(msg).__name__]
            if hash_form(msg) != form:
                problems.append(f'{topic}: hash_form of the message is not the memo form')
            if parse(hash_form(msg)) != contract:
                problems.append(f'{topic}: the parsed message is not the memo contract')
            if checker.received(msg, parse) != (form, contract):
                problems.append(f'{topic}: received() did not give the memo')
            heard[topic].append(msg)
        return callback

    for topic, msg_type in topics.items():
        checker.create_graph_subscription(msg_type, topic, check(topic), GHOST_QOS)
    bus.connect()

    import rclpy

    plain = rclpy.create_node('feeder_and_listener', context=context)
    state_pub = plain.create_publisher(Odometry, 'state/nav', GHOST_QOS)
    obs_pub = plain.create_publisher(PoseWithCovarianceStamped, 'observations', GHOST_QOS)
    over_dds: dict[str, list[object]] = {'self_assessment/calibrated': [], 'actuations': []}
    for topic in over_dds:
        plain.create_subscription(topics[topic], topic, over_dds[topic].append, GHOST_QOS)
    executor = SingleThreadedExecutor(context=context)
    for node in (*agent, checker, plain):
        executor.add_node(node)
    try:
        policy = agent[4]
        # Endpoints served in the process count as matched (the readiness reports).
        writers, readers, _ = policy._endpoints_in_process()
        assert writers == {'/decisions': 2}          # the emitter and the checker
        assert readers == {'/self_assessment/calibrated': 1}
        # The three readers of /state/nav share one DDS reader (the assessor's).
        assert _spin_until(executor, lambda: state_pub.get_subscription_count() == 1
                           and obs_pub.get_subscription_count() == 1
                           and agent[3]._pub.dds.get_subscription_count() == 1
                           and agent[5]._pub.dds.get_subscription_count() == 1)
        assert [s.topic_name for s in agent[1].subscriptions] == []   # the predictor's
        assert agent[1]._endpoints_in_process()[1] == {'/state/nav': 1}
        # ... and say so: a writer matches that one reader for the three of them.
        assert agent[1]._endpoints_in_process()[2] == {'/state/nav': 1}
        assert agent[0]._endpoints_in_process()[2] == {}   # the assessor owns the reader

        scenario = generate_scenario('nominal', cycles=SCENARIO_CYCLES, period_ns=100_000_000)
        for cycle in scenario.cycles:
            odom, obs = cycle_messages(cycle)
            state_pub.publish(odom)
            if obs is not None:
                obs_pub.publish(obs)
            executor.spin_once(timeout_sec=0.01)
        assert _spin_until(executor, lambda: len(over_dds['actuations'])
                           >= len(heard['self_assessment']) - 1
                           and len(heard['self_assessment']) == SCENARIO_CYCLES)
        _spin_until(executor, lambda: False, timeout_s=0.5)   # nothing more is on its way
    finally:
        for node in (plain, checker, *reversed(agent)):
            node.destroy_node()

    assert problems == []
    assert len(heard['self_assessment']) == SCENARIO_CYCLES
    assert len(heard['actuations']) >= SCENARIO_CYCLES - 1
    # A reader in another process (here: not on the bus) got every message, equal ones.
    for topic, received in over_dds.items():
        assert [hash_form(m) for m in received] == [hash_form(m) for m in heard[topic]], topic
    # And the chain holds on what was delivered: each decision cites H of its calibrated.
    cited = {content_address(hash_form(m)) for m in heard['self_assessment/calibrated']}
    assert {m.calibrated_assessment_sha256 for m in heard['decisions']} <= cited


def test_pairs_dds_would_not_match_are_left_to_dds(context) -> None:
    from rclpy.qos import QoSProfile, QoSReliabilityPolicy
    from std_msgs.msg import String

    from ghost_nodes.intra_process import IntraProcessBus
    from ghost_nodes.node_base import GhostNode

    bus = IntraProcessBus()
    writer = GhostNode('writer', (), context=context, intra_process_bus=bus)
    reader = GhostNode('reader', (), context=context, intra_process_bus=bus)
    best_effort = QoSProfile(depth=10, reliability=QoSReliabilityPolicy.BEST_EFFORT)
    reliable = QoSProfile(depth=10, reliability=QoSReliabilityPolicy.RELIABLE)
    publisher = writer.create_graph_publisher(String, 'chatter', best_effort)
    reader.create_graph_subscription(String, 'chatter', lambda _msg: None, reliable)
    reader.create_graph_subscription(String, 'other', lambda _msg: None, reliable)
    with pytest.raises(RuntimeError, match='before connect'):
        bus.connect()
        writer.create_graph_publisher(String, 'late', reliable)
    try:
        # A reliable reader of a best-effort writer: DDS does not match them, nor does the bus.
        assert publisher.callbacks == []
        assert sorted(s.topic_name for s in reader.subscriptions) == ['/chatter', '/other']
        assert reader._endpoints_in_process() == ({}, {}, {})
    finally:
        reader.destroy_node()
        writer.destroy_node()
