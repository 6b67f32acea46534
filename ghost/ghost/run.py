"""The main job: run the closed loop as separate processes, record it, verify the bag.

One cohesive job (the ghost_run command: plan, run, wait, verify), so one module past 400 lines.

    ghost_run --scenario drift_then_recovery        (or: make demo SCENARIO=...)
    ghost_run --input INPUT_BAG [--speed X]         (a recorded flight, played into the graph)
    ghost_run --scenario smoke --namespace uav1     (every node and topic under /uav1)
    ghost_run --px4-ulog LOG.ulg [--speed X]        (a PX4 flight log played as PX4 would,
                                                      through px4_bridge and the command gate)
    ghost_run --mavros [--timeout S]                (MAVROS's topics, PX4 or ArduPilot behind
                                                      it, through mavros_bridge)
    ghost_run --ardupilot-log LOG.bin [--speed X]   (an ArduPilot log played as AP_DDS would,
                                                      through ap_bridge and the command gate)

Exit code: 0 when the run completed and BAUD-v1, ERUR-v1 and the chain all hold; 1 when the
verifier found a violation or a broken chain; 2 for a usage error; 3 when the run itself failed
(a node died, or the loop did not complete in time).
"""

import argparse
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, UTC
import importlib.util
import os
from pathlib import Path
import sys
import time
from typing import Any

from ghost.bringup import closed_loop_graph, GraphOptions, NodeSpec, Source
from ghost.isolation import ClaimedDomain, DomainClaimError
from ghost.launcher import GraphProcesses
from ghost.progress import LoopProgress
from ghost.reporter import review_and_verify, REVIEWER
from ghost.verifier import verifier_missing, verify_bag
from ghost_bag.errors import BagError
from ghost_bag.recorded_judgements import read_judgements
from ghost_core.cli import ExitCode, guarded, positive, tool_error, ToolParser
from ghost_core.graph import (
    AGENT_SETTINGS,
    GATE_MODES,
    GHOST_TOPICS,
    GRAPH_STATUS_TOPIC,
    normalise_namespace,
    SCENARIOS,
    topic_in_namespace,
)
from ghost_core.summary import summarize_judgement
from ghost_nodes.node_parameters import AGENT_EXECUTOR, EXECUTORS

__all__ = ['main']

_PROG = 'ghost_run'


def _config_dir() -> Path:
    for prefix in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep):
        candidate = Path(prefix) / 'share' / 'ghost' / 'config'
        if prefix and (candidate / 'ghost.yaml').is_file():
            return candidate
    raise FileNotFoundError('share/ghost/config not found on AMENT_PREFIX_PATH: build the '
                            'workspace and source scripts/env.sh')


def _parser() -> argparse.ArgumentParser:
    parser = ToolParser(_PROG, __doc__.split('\n\n')[0], 'ghost',
                        epilog='3 also: the run failed (a node died, the loop is incomplete)')
    parser.add_argument('--scenario', default='drift_then_recovery', choices=SCENARIOS)
    parser.add_argument('--seed', type=int, default=0, help='scenario seed (default 0)')
    parser.add_argument('--run-dir', type=Path, default=None,
                        help='folder for the bag, reports and node logs '
                             '(default: runs/<scenario>-<UTC time>)')
    parser.add_argument('--config-dir', type=Path, default=None,
                        help='folder with ghost.yaml and scenarios/ (default: share/ghost/config)')
    parser.add_argument('--timeout', type=positive(float), default=None,
                        help='seconds to wait for the loop to complete (default 120, or with '
                             "--input the recording's duration / speed + 60; with --px4 or "
                             '--mavros none: until Ctrl-C)')
    _add_source_arguments(parser)
    parser.add_argument('--gate', choices=GATE_MODES, default=None,
                        help="the command gate between the mission and the vehicle: 'px4' "
                             "(default with --px4 / --px4-ulog), 'ardupilot' (default with "
                             "--ardupilot / --ardupilot-log), 'twist' (cmd_vel_in -> "
                             "cmd_vel) or 'none' (default otherwise); launch gate:=")
    parser.add_argument('--no-report', dest='report', action='store_false',
                        help='do not write the flight review (default: RUN_DIR/review/, by '
                             'ghost_review)')
    parser.add_argument('--signing-key', type=Path, default=None, metavar='PATH',
                        help="Ed25519 private key (from ghost_keygen) that signs the bag's "
                             'manifest.json (default: unsigned)')
    _add_agent_arguments(parser)
    return parser


def _add_source_arguments(parser: argparse.ArgumentParser) -> None:
    """What feeds the agent instead of a scenario (one at most), and how it is played."""
    sources = parser.add_mutually_exclusive_group()
    sources.add_argument('--input', type=Path, default=None,
                         help='play this input bag (/state/nav + /observations, e.g. from '
                              'ghost_import of a PX4 or ArduPilot log) into the graph instead '
                              'of a scenario')
    sources.add_argument('--px4', action='store_true',
                         help="listen to PX4's uXRCE-DDS topics through px4_bridge instead of "
                              'a scenario; runs until --timeout or Ctrl-C, then verifies '
                              '(launch px4:=true)')
    sources.add_argument('--mavros', action='store_true',
                         help="listen to MAVROS's topics (PX4 or ArduPilot) through "
                              'mavros_bridge instead of a scenario; runs until --timeout or '
                              'Ctrl-C, then verifies (launch mavros:=true; needs ghost_mavros '
                              'and mavros_msgs)')
    sources.add_argument('--px4-ulog', type=Path, default=None, metavar='LOG',
                         help="play this PX4 flight log (ULog) as PX4's uXRCE-DDS bridge would "
                              '(px4_log_player on fmu/out/...) into px4_bridge and the command '
                              'gate, with a stand-in mission sending setpoints; record; verify '
                              'BAUD, ERUR, the chain and GATE (needs ghost_px4)')
    sources.add_argument('--ardupilot', action='store_true',
                         help="listen to ArduPilot's AP_DDS topics through ap_bridge instead "
                              'of a scenario; runs until --timeout or Ctrl-C, then verifies '
                              '(launch ardupilot:=true)')
    sources.add_argument('--ardupilot-log', type=Path, default=None, metavar='LOG',
                         help='play this ArduPilot flight log (DataFlash .bin) as AP_DDS would '
                              '(ap_log_player on /ap/...) into ap_bridge and the command gate, '
                              'with a stand-in mission sending cmd_vel; record; verify (needs '
                              'ardupilot_msgs)')
    parser.add_argument('--speed', type=positive(float), default=None,
                        help='with --input, --px4-ulog or --ardupilot-log only: playback speed '
                             '(default 1 = recorded pace)')
    parser.add_argument('--state-topic', default=None,
                        help='with --input only: the belief topic inside the bag (default '
                             '/state/nav)')
    parser.add_argument('--observations-topic', default=None,
                        help='with --input only: the fix topic inside the bag (default '
                             '/observations)')


def _add_agent_arguments(parser: argparse.ArgumentParser) -> None:
    """The agent settings (``ghost_core.graph.AGENT_SETTINGS``) and how the agent runs."""
    agent = parser.add_argument_group(
        'agent settings', 'the launch file has an argument of the same name and meaning for '
        'each (namespace:=, period_s:=, ...); unset = the configuration files')
    agent.add_argument('--namespace', default='',
                       help='ROS namespace of every Ghost node and topic, e.g. uav1 '
                            '(/uav1/actuations); default: the root namespace')
    for setting in AGENT_SETTINGS:
        flag = '--' + setting.name.replace('_', '-')
        if setting.choices:
            agent.add_argument(flag, choices=setting.choices, default=None,
                               help=setting.description)
        else:
            kind = float if setting.kind is float else int
            agent.add_argument(flag, type=positive(kind), default=None,
                               metavar=setting.name.upper(), help=setting.description)
    agent.add_argument('--params-file', type=Path, default=None, metavar='PATH',
                       help='your own parameter file, loaded after every other')
    agent.add_argument('--single-process', action='store_true',
                       help='run the agent, monitor, bridge and gate nodes in one process on '
                            'one executor (ghost_agent; launch single_process:=true): the same '
                            'topics, recorded and verified the same, at less cost')
    agent.add_argument('--executor', choices=EXECUTORS, default=AGENT_EXECUTOR,
                       help="what the agent's nodes spin, in one process or each in its own: "
                            "rclpy's EventsExecutor ('events', rclpy.experimental; the "
                            "default) or SingleThreadedExecutor ('single_threaded'); launch "
                            'executor:=')
    agent.add_argument('--delivery', choices=('in_process', 'dds'), default='in_process',
                       help='with --single-process: between the nodes of the process, in it '
                            'without DDS (default) or through DDS as between processes')
    agent.add_argument('--no-monitor', dest='monitor', action='store_false',
                       help='do not start the online monitor (/diagnostics; launch '
                            'monitor:=false)')


def _agent_settings(args: argparse.Namespace) -> dict[str, object]:
    """The agent settings given on the command line (``GraphOptions.settings``)."""
    given = {setting.name: getattr(args, setting.name) for setting in AGENT_SETTINGS}
    return {name: value for name, value in given.items() if value is not None}


def _input_cycles(args: argparse.Namespace) -> tuple[int, float]:
    """The number of cycles an input bag makes (new belief stamps) and its duration (s)."""
    from ghost_bag.recorded_inputs import read_inputs

    last: int | None = None
    cycles = 0
    first_log = last_log = 0
    for message in read_inputs(args.input, args.state_topic, args.observations_topic):
        if cycles == 0 and last is None:
            first_log = message.log_time_ns
        last_log = message.log_time_ns
        if message.topic == args.state_topic and (last is None
                                                  or message.sample.stamp_ns > last):
            last = message.sample.stamp_ns
            cycles += 1
    return cycles, (last_log - first_log) / 1e9


#: After a played log ends (``--px4-ulog``), the loop is done once no actuation came for this
#: long: the last samples' cycles have gone through the graph.
SETTLE_S = 2.0


def _wait_for_loop(expected_cycles: int | None, graph: GraphProcesses, timeout_s: float,
                   namespace: str, source: str | None = None) -> int:
    """Count actuations on the graph's actuations until ``expected_cycles`` or timeout.

    ``expected_cycles`` None: until the ``source`` node (``px4_log_player``) has exited after
    its last message and the actuations have settled (``SETTLE_S``), or, without a source (a
    live vehicle, ``--px4``), until the timeout or Ctrl-C.
    """
    import rclpy
    from rclpy.executors import ExternalShutdownException

    from ghost_core.levels import DecisionKind
    from ghost_core.ros_inputs import time_ns
    from ghost_interfaces.msg import ActionEmission
    from ghost_nodes.qos import GHOST_QOS
    from ghost_nodes.readiness import GraphStatusReporter

    rclpy.init(domain_id=int(graph.env['ROS_DOMAIN_ID']))
    # In the graph's namespace: its status reports go to that graph's readiness topic.
    node = rclpy.create_node('ghost_run_monitor', namespace=namespace or None)
    seen: set[int] = set()
    decision = ['-']

    def on_actuation(msg: Any) -> None:
        seen.add(time_ns(msg.header.stamp))
        decision[0] = DecisionKind(msg.decision.kind).name

    node.create_subscription(ActionEmission, 'actuations', on_actuation, GHOST_QOS)
    # Report the matched /actuations reader: the scenario waits for it before its first cycle.
    GraphStatusReporter(node)
    deadline = time.monotonic() + timeout_s
    last_change, last_count = time.monotonic(), 0
    progress = LoopProgress(expected_cycles)
    try:
        while ((expected_cycles is None or len(seen) < expected_cycles)
               and time.monotonic() < deadline):
            rclpy.spin_once(node, timeout_sec=0.1)
            progress.update(len(seen), decision[0])
            if len(seen) != last_count:
                last_change, last_count = time.monotonic(), len(seen)
            exited = graph.failed()
            dead = {n: c for n, c in exited.items() if not (n == source and c == 0)}
            if dead:
                print(f'node(s) exited early: {dead} (logs in {graph.log_dir})', file=sys.stderr)
                break
            if source in exited and time.monotonic() - last_change > SETTLE_S:
                break
    except (KeyboardInterrupt, ExternalShutdownException):
        # Ctrl-C: the graph (in sessions of its own) is stopped, recorded and verified next.
        print('ghost: interrupted: stopping the graph', file=sys.stderr, flush=True)
    finally:
        progress.close()
        node.destroy_node()
        rclpy.try_shutdown()
    return len(seen)


def _public_key_file(private_key: Path, run_dir: Path) -> Path:
    """Write the public key of ``private_key`` to ``run_dir/signing_key.pub``; return it."""
    from cryptography.hazmat.primitives import serialization

    from ghost_bag.manifest import load_private_key

    public = load_private_key(private_key).public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    path = run_dir / 'signing_key.pub'
    path.write_bytes(public)
    return path


def _isolate(env: dict[str, str], namespace: str) -> ClaimedDomain | None:
    """Give the graph a ROS domain of its own, or warn if the user's one has a Ghost graph.

    Without ``ROS_DOMAIN_ID`` (or with it empty, which ROS reads as 0): claim a free domain,
    put it in ``env`` and return the claim, to be held while the graph runs. With it: keep it,
    return None, and warn on stderr if Ghost nodes already publish on it. ``ValueError`` for
    an id that is not an integer in 0..232.
    """
    from ghost import isolation

    discovery = env['ROS_AUTOMATIC_DISCOVERY_RANGE']
    chosen = env.get('ROS_DOMAIN_ID', '').strip()
    if not chosen:
        claim = isolation.claim_free_domain(discovery_range=discovery)
        env['ROS_DOMAIN_ID'] = str(claim.domain_id)
        print(f'ghost: ROS_DOMAIN_ID={claim.domain_id} (free domain picked; set ROS_DOMAIN_ID '
              'to choose)', flush=True)
        return claim
    if not chosen.isdigit() or int(chosen) > 232:
        raise ValueError(f'ROS_DOMAIN_ID must be an integer in 0..232, got {chosen!r}')
    domain = int(chosen)
    # Localhost-only discovery: no bound port in the domain's block means no one to find, so
    # the discovery probe (up to 4 s) runs only when someone is there.
    if discovery.upper() == 'LOCALHOST' and not isolation.domain_ports_in_use(domain):
        return None
    nodes = isolation.ghost_publishers_on_domain(
        domain, [topic_in_namespace(topic, namespace) for topic in (GRAPH_STATUS_TOPIC,
                                                                    *GHOST_TOPICS)],
        discovery_range=discovery)
    if nodes:
        print(f'ghost: warning: ROS_DOMAIN_ID={domain} already has a Ghost graph '
              f'({len(nodes)} node(s): {", ".join(nodes)}): its topics will mix with this run\'s '
              'and both recordings may fail to verify; unset ROS_DOMAIN_ID to let ghost_run '
              'pick a free domain', file=sys.stderr, flush=True)
    return None


class _UsageError(ValueError):
    """A command line that cannot run (exit code 2)."""


class _BadInput(ValueError):
    """An input (bag, log) that cannot be read or used (exit code 3)."""


@dataclass(frozen=True)
class _Plan:
    """What one run plays, how many cycles it expects and how long it may take."""

    options: GraphOptions
    #: Cycles the loop must complete; None: as many as the source gives.
    expected: int | None
    label: str
    name: str
    timeout_s: float
    #: The node whose exit (code 0) ends the input (the PX4 log player), if any.
    source_node: str | None = None
    #: Verify with --require-coverage: the source is a scenario built to cover both
    #: properties (its catalogue entry says so, ghost_core.scenarios).
    require_coverage: bool = False


def _is_dataflash(path: Path) -> bool:
    """Whether ``path`` starts as an ArduPilot DataFlash log does (its FMT message)."""
    try:
        with path.open('rb') as handle:
            return handle.read(3) == b'\xa3\x95\x80'
    except OSError:
        return False


def _plan(args: argparse.Namespace, namespace: str) -> _Plan:
    """The run the arguments ask for (``_UsageError`` if they cannot be run)."""
    options = GraphOptions(
        scenario=args.scenario, namespace=namespace, settings=_agent_settings(args),
        params_file=str(args.params_file) if args.params_file else '', monitor=args.monitor,
        gate=args.gate or '', graph_status=True, extra_subscribers={'/actuations': 1},
        overrides={'scenario': {'seed': args.seed}})
    if args.px4_ulog is not None:
        return _px4_ulog_plan(args, options)
    if args.ardupilot_log is not None:
        return _ardupilot_log_plan(args, options)
    if args.ardupilot:
        return _Plan(replace(options, source=Source.ARDUPILOT, overrides={}), None,
                     "ArduPilot's AP_DDS topics (Ctrl-C to stop)", 'ardupilot', float('inf'))
    if args.px4:
        # A live vehicle: no known number of cycles; run until --timeout or Ctrl-C.
        return _Plan(replace(options, source=Source.PX4, overrides={}), None,
                     "PX4's uXRCE-DDS topics (Ctrl-C to stop)", 'px4', float('inf'))
    if args.mavros:
        if importlib.util.find_spec('mavros_msgs') is None:
            raise _UsageError('--mavros needs mavros_msgs, which this workspace lacks: source '
                              'your MAVROS workspace (docs/integration.md, MAVROS)')
        return _Plan(replace(options, source=Source.MAVROS, overrides={}), None,
                     "MAVROS's topics (Ctrl-C to stop)", 'mavros', float('inf'))
    if args.input is not None:
        from ghost_bag.errors import InputBagError

        try:
            expected, duration_s = _input_cycles(args)
        except InputBagError as err:
            raise _BadInput(str(err)) from None
        overrides = {'input_player': {
            'speed': float(args.speed), 'bag_state_topic': args.state_topic,
            'bag_observations_topic': args.observations_topic}}
        return _Plan(replace(options, source=Source.INPUT_BAG,
                             input_bag=str(args.input.resolve()), overrides=overrides),
                     expected, f'input {args.input}', 'input', duration_s / args.speed + 60.0)
    from ghost_core.scenarios import generate_scenario

    scenario = generate_scenario(args.scenario, seed=args.seed)
    return _Plan(options, len(scenario.cycles), args.scenario, args.scenario, 120.0,
                 require_coverage=scenario.parameters.covers_both_properties)


def _px4_ulog_plan(args: argparse.Namespace, options: GraphOptions) -> _Plan:
    """A PX4 ULog played as PX4 would, through px4_bridge and the gate."""
    try:
        from ghost_px4.ulog_read import UlogReadError
        from ghost_px4.ulog_topics import bridge_parameters, ulog_duration_s
    except ImportError as err:
        raise _UsageError(f'--px4-ulog needs the ghost_px4 package ({err})') from None
    if _is_dataflash(args.px4_ulog):
        raise _BadInput(f'--px4-ulog: {args.px4_ulog} is an ArduPilot DataFlash log, not a '
                        f'PX4 ULog: run `ghost_import {args.px4_ulog} --output BAG` and '
                        '`ghost_run --input BAG`')
    try:
        duration_s = ulog_duration_s(args.px4_ulog)
    except UlogReadError as err:
        raise _BadInput(f'--px4-ulog: {err}') from None
    # The vehicle's own EKF2 settings, from the log, so the bridge reads it as PX4 did.
    overrides = {'px4_log_player': {'speed': float(args.speed), 'exit_when_done': True},
                 'px4_bridge': dict(bridge_parameters(args.px4_ulog))}
    options = replace(options, source=Source.PX4_ULOG,
                      px4_ulog=str(args.px4_ulog.resolve()), overrides=overrides)
    # The log decides the number of cycles: until the player is done and the loop settled.
    return _Plan(options, None, f'PX4 log {args.px4_ulog} ({duration_s:.0f} s at '
                 f'{args.speed:g}x)', 'px4-ulog', duration_s / args.speed + 60.0,
                 'px4_log_player')


def _ardupilot_log_plan(args: argparse.Namespace, options: GraphOptions) -> _Plan:
    """An ArduPilot DataFlash log played as AP_DDS would, through ap_bridge and the gate."""
    from ghost_ardupilot.ap_playback import bridge_parameters, LOADED_TYPES
    from ghost_ardupilot.dataflash_read import DataflashReadError, load_dataflash

    try:
        log = load_dataflash(args.ardupilot_log, LOADED_TYPES)
    except DataflashReadError as err:
        raise _BadInput(f'--ardupilot-log: {err}') from None
    times = [int(row['TimeUS']) for row in log.rows('XKF1') or log.rows('NKF1')]
    duration_s = (max(times) - min(times)) / 1e6 if times else 0.0
    # The vehicle's own GNSS lag and height source, so the bridge reads it as ArduPilot did.
    overrides: dict[str, Mapping[str, object]] = {
        'ap_log_player': {'speed': float(args.speed), 'exit_when_done': True},
        'ap_bridge': bridge_parameters(log)}
    options = replace(options, source=Source.ARDUPILOT_LOG,
                      ardupilot_log=str(args.ardupilot_log.resolve()), overrides=overrides)
    return _Plan(options, None, f'ArduPilot log {args.ardupilot_log} ({duration_s:.0f} s at '
                 f'{args.speed:g}x)', 'ardupilot-log', duration_s / args.speed + 60.0,
                 'ap_log_player')


def _playback_flags(args: argparse.Namespace) -> None:
    """Refuse a playback flag without its source; fill in the defaults of those given."""
    if (args.speed is not None and args.input is None and args.px4_ulog is None
            and args.ardupilot_log is None):
        raise _UsageError('--speed needs --input, --px4-ulog or --ardupilot-log (it is their '
                          'playback speed)')
    for flag, name in (('--state-topic', 'state_topic'),
                       ('--observations-topic', 'observations_topic')):
        if getattr(args, name) is not None and args.input is None:
            raise _UsageError(f'{flag} needs --input (it names a topic inside that bag)')
    args.speed = 1.0 if args.speed is None else args.speed
    args.state_topic = args.state_topic or '/state/nav'
    args.observations_topic = args.observations_topic or '/observations'
    if args.px4_ulog is not None and importlib.util.find_spec('px4_msgs') is None:
        raise _UsageError('--px4-ulog needs px4_msgs, which this workspace lacks: `make '
                          'demo-px4` builds it (from ../shared/vendor/px4_msgs) and runs the '
                          'real logs')
    if ((args.ardupilot_log is not None or args.ardupilot)
            and importlib.util.find_spec('ardupilot_msgs') is None):
        raise _UsageError('--ardupilot and --ardupilot-log need ardupilot_msgs, which this '
                          'workspace lacks: `make demo-ardupilot` builds it (from '
                          '../shared/vendor/ardupilot_msgs) and runs the real logs')


def _prepare(args: argparse.Namespace) -> tuple[_Plan, Path, list[NodeSpec]]:
    """The plan, the (new, empty) run folder and the graph (``_UsageError`` if impossible)."""
    _playback_flags(args)
    try:
        namespace = normalise_namespace(args.namespace)
    except ValueError as err:
        raise _UsageError(f'--namespace: {err}') from None
    if args.params_file is not None and not args.params_file.is_file():
        raise _UsageError(f'--params-file {args.params_file} is not a file')
    plan = _plan(args, namespace)
    if args.signing_key is not None:
        from ghost_bag.manifest import load_private_key, ManifestError

        try:
            load_private_key(args.signing_key)
        except (ManifestError, OSError, ValueError) as err:
            raise _UsageError(f'--signing-key: {err}') from None
        signing = {'recorder': {'signing_key': str(args.signing_key.resolve())}}
        plan = replace(plan, options=replace(
            plan.options, overrides={**plan.options.overrides, **signing}))
    stamp = datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')
    run_dir = (args.run_dir or Path('runs') / f'{plan.name}-{stamp}').resolve()
    if run_dir.exists() and any(run_dir.iterdir()):
        raise _UsageError(f'run folder {run_dir} exists and is not empty')
    try:
        config_dir = args.config_dir or _config_dir()
    except FileNotFoundError as err:
        raise _UsageError(str(err)) from None
    try:
        specs = closed_loop_graph(config_dir, replace(
            plan.options, bag_path=str(run_dir / 'bag')))
    except ValueError as err:
        raise _UsageError(str(err)) from None
    run_dir.mkdir(parents=True, exist_ok=True)
    return plan, run_dir, specs


def main(argv: list[str] | None = None) -> int:
    """Run, record, verify; print the summary; return the exit code."""
    args = _parser().parse_args(argv)
    return guarded(_PROG, lambda: _run(args))


def _run(args: argparse.Namespace) -> int:
    try:
        plan, run_dir, specs = _prepare(args)
    except _UsageError as err:
        return tool_error(_PROG, str(err), ExitCode.USAGE)
    except _BadInput as err:
        return tool_error(_PROG, str(err), ExitCode.BAD_INPUT)
    env = dict(os.environ)
    env.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    try:
        claim = _isolate(env, plan.options.namespace)
    except ValueError as err:
        return tool_error(_PROG, str(err), ExitCode.USAGE)
    except DomainClaimError as err:
        return tool_error(_PROG, str(err), ExitCode.BAD_INPUT)
    graph = GraphProcesses(specs, run_dir / 'logs', env, single_process=args.single_process,
                           executor=args.executor, delivery=args.delivery)
    expected = plan.expected
    print(f'ghost: {plan.label} ({expected if expected is not None else "open-ended"} cycles)'
          f' -> {run_dir}', flush=True)
    graph.start()
    try:
        got = _wait_for_loop(expected, graph, plan.timeout_s if args.timeout is None
                             else args.timeout, normalise_namespace(args.namespace),
                             plan.source_node)
    finally:
        codes = graph.stop()
        # The graph is gone: the domain is free for the next run.
        if claim is not None:
            claim.release()
    print(f'ghost: {got}/{expected if expected is not None else got} cycles actuated; '
          f'processes exited {codes}', flush=True)
    return _verify(run_dir, args.signing_key, expected, got,
                   require_coverage=plan.require_coverage, report=args.report)


def _verify(run_dir: Path, signing_key: Path | None, expected: int | None, got: int, *,
            require_coverage: bool = False, report: bool = True) -> int:
    """Verify the run's bag with the auditor (its own process); the run's exit code.

    With `require_coverage` (a scenario built to cover both properties) a vacuous BAUD-v1
    or ERUR-v1 verdict fails the run.
    """
    bag = run_dir / 'bag'
    if not (bag / 'metadata.yaml').is_file():
        return tool_error(_PROG, f'the recorder left no complete bag in {bag} (log: '
                                 f'{run_dir / "logs" / "recorder.log"})', ExitCode.BAD_INPUT)
    reports = run_dir / 'reports.json'
    options = ['--json', str(reports)]
    if require_coverage:
        options.append('--require-coverage')
    if signing_key is not None:
        # Check the signature too, with the public half of the key that signed (written
        # beside the run; the private key never leaves its file).
        options += ['--public-key', str(_public_key_file(signing_key, run_dir))]
    # What the run decided, in the words ghost_replay prints it, then the files, then the
    # auditor, whose verdict line is the last.
    try:
        for line in summarize_judgement(read_judgements(bag)).lines():
            print(line)
    except BagError as err:
        print(f'note: no judgement summary: {" ".join(str(err).split())}', file=sys.stderr)
    print(f'bag: {bag}\nreports: {reports}\nlogs: {run_dir / "logs"}', flush=True)
    verdict = None
    if report and verifier_missing(bag) is None:
        # The auditor's verification and the flight review, in one ghost_review process.
        done = review_and_verify(bag, run_dir / 'review', reports, options[2:])
        if done is not None:
            if done.report is not None:
                print(f'report: {done.report}')
            for line in done.lines:
                print(line)
            verdict = done.code
        else:
            print(f'note: no report: {REVIEWER} is not installed in this Python',
                  file=sys.stderr)
    if verdict is None:
        verdict = verify_bag(bag, *options)
    if expected is not None and got < expected:
        return tool_error(_PROG, f'the loop completed {got} of {expected} cycles',
                          ExitCode.BAD_INPUT)
    return verdict


if __name__ == '__main__':
    sys.exit(main())
