"""ghost_replay: run the agent offline over a recorded input bag and write a full Ghost bag.

    ghost_replay INPUT_BAG --output BAG [--state-topic T] [--observations-topic T]
                 [--params-file FILE ...] [--no-report]

The pure pipeline (no DDS) takes the bag's /state/nav beliefs and /observations fixes in
log-time order, exactly as the node graph would receive them, with the configuration the nodes
load from their parameter files (default: the installed config/ghost.yaml). The output bag holds
the inputs (under the default names) and all six Ghost topics, each Ghost message written at the
log time of the input that completed its cycle. It is then verified (``python -m ghost_verify``
in a child process: the runtime does not import the auditor), and the verdicts and a
judgement summary are printed. Unless --no-report, the flight review (``python -m
ghost_review``, its own process) is written to BAG_review/ and its report's path printed.

Exit codes: 0 the replay completed and every verdict holds; 1 a verdict does not hold, or the
bag cannot be verified (ghost_verify not installed: said so on stderr); 2 usage error (bad
arguments, output exists); 3 the input bag cannot be read.
"""

import argparse
from collections.abc import Sequence
from dataclasses import dataclass, replace
import json
import os
from pathlib import Path
import shutil
import sys
import tempfile

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ghost.reporter import review_and_verify, REVIEWER
from ghost.verifier import verifier_missing, verify_bag
from ghost_bag.manifest import (
    bag_file_digests,
    load_private_key,
    ManifestBuilder,
    ManifestError,
    sign_manifest,
    software_versions,
    write_manifest,
)
from ghost_bag.recorded_inputs import InputBagError, OBSERVATION_TYPE, read_inputs, STATE_TYPE
from ghost_core.cli import ExitCode, guarded, tool_error, ToolParser
from ghost_core.errors import GhostError
from ghost_core.graph import GHOST_TOPICS
from ghost_core.pipeline import CycleTrace, PipelineConfig
from ghost_core.rederive import Replay, TimedInput, trace_contracts, TYPE_NAMES
from ghost_core.summary import judgement_of, JudgementSummary, summarize_judgement
from ghost_core.wire import to_msg_dict
from ghost_nodes.agent_config import pipeline_config_from_files

__all__ = ['ReplayResult', 'default_params_files', 'main', 'replay_bag']

_PROG = 'ghost_replay'
_TOPIC_OF = {kind: topic for topic, kind in GHOST_TOPICS.items()}
_STATE, _OBSERVATIONS, _STATUS = '/state/nav', '/observations', '/vehicle_status'


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """What a replay produced: every cycle, its summary, and the fixes it could not use."""

    traces: tuple[CycleTrace, ...]
    summary: JudgementSummary
    beliefs: int
    observations: int
    late_observations: int
    superseded_observations: int


def default_params_files() -> list[Path]:
    """The installed config/ghost.yaml (share/ghost/config on AMENT_PREFIX_PATH)."""
    for prefix in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep):
        candidate = Path(prefix) / 'share' / 'ghost' / 'config' / 'ghost.yaml'
        if prefix and candidate.is_file():
            return [candidate]
    raise FileNotFoundError('share/ghost/config/ghost.yaml not found on AMENT_PREFIX_PATH: '
                            'source the workspace, or give --params-file')


def _ghost_messages(trace: CycleTrace) -> list[tuple[str, str, dict[str, object]]]:
    return [(_TOPIC_OF[TYPE_NAMES[kind]], TYPE_NAMES[kind], to_msg_dict(contract))
            for kind, contract in trace_contracts(trace) if contract is not None]


class _Recording:
    """The output bag and its manifest.json, written as Ghost's recorder writes them.

    The manifest records the configuration the replay ran with (and the input topic names),
    so that the verifier judges every cycle with it and can re-derive the bag.
    """

    def __init__(self, output_bag: str | os.PathLike[str], config: PipelineConfig,
                 signing_key: Ed25519PrivateKey | None = None) -> None:
        from ament_index_python.packages import get_package_share_directory

        from ghost_bag.write import GhostBagWriter

        msg_dir = Path(get_package_share_directory('ghost_interfaces')) / 'msg'
        self._path = Path(output_bag)
        self._writer = GhostBagWriter(output_bag, msg_dir)
        recorded: dict[str, object] = {
            **config.to_dict(), 'input_topics': {'state': _STATE, 'observations': _OBSERVATIONS}}
        self._manifest = ManifestBuilder(json.loads(json.dumps(recorded)),
                                         software_versions(('ghost_nodes',)))
        self._key = signing_key
        self._writer.open()

    def write(self, topic: str, type_name: str, message: dict[str, object] | bytes,
              log_time_ns: int) -> None:
        data = (message if isinstance(message, bytes)
                else self._writer.serialize(type_name, message))
        self._writer.write(topic, type_name, data, log_time_ns)
        self._manifest.add(topic, type_name, log_time_ns, data)

    def close(self) -> None:
        self._writer.close()
        document = self._manifest.document(bag_file_digests(self._path))
        if self._key is not None:
            document = sign_manifest(document, self._key)
        write_manifest(self._path, document)


def replay_bag(
    input_bag: str | os.PathLike[str],
    output_bag: str | os.PathLike[str] | None = None,
    config: PipelineConfig | None = None,
    state_topic: str = _STATE,
    observations_topic: str = _OBSERVATIONS,
    signing_key: Ed25519PrivateKey | None = None,
) -> ReplayResult:
    """Run the pure agent over the bag's inputs; write the Ghost bag when `output_bag` is set.

    The inputs are fed by ``ghost_core.rederive.Replay`` (what ``verify_all`` re-runs),
    without the outcome evaluator's idle flush: an input bag's log times are not a run's
    wall clock. Raises InputBagError when the input cannot be read, BagWriteError when the
    output cannot be written (e.g. it exists).
    """
    # An input bag's log times are not a run's wall clock: no idle flush, and the recorded
    # configuration says so (so that verify_all re-runs it the same way).
    config = replace(PipelineConfig() if config is None else config, idle_flush_ns=0)
    replay = Replay(config)
    pipeline = replay.pipeline
    traces: list[CycleTrace] = []
    counts = {state_topic: 0, observations_topic: 0, _STATUS: 0}
    writer = None if output_bag is None else _Recording(output_bag, config, signing_key)
    try:
        last_log_ns = 0
        for message in read_inputs(input_bag, state_topic, observations_topic):
            counts[message.topic] += 1
            last_log_ns = message.log_time_ns
            if writer is not None:
                name = (_STATE if message.topic == state_topic else _OBSERVATIONS
                        if message.topic == observations_topic else _STATUS)
                writer.write(name, message.type_name, message.data, message.log_time_ns)
            done = replay.feed(TimedInput(message.log_time_ns, message.sample))
            traces += done
            if writer is not None:
                for trace in done:
                    for topic, kind, msg in _ghost_messages(trace):
                        writer.write(topic, kind, msg, message.log_time_ns)
        done = replay.finish()
        traces += done
        if writer is not None:
            for trace in done:
                for topic, kind, msg in _ghost_messages(trace):
                    writer.write(topic, kind, msg, last_log_ns)
    finally:
        if writer is not None:
            writer.close()
    return ReplayResult(
        traces=tuple(traces),
        summary=summarize_judgement(judgement_of(t) for t in traces),
        beliefs=counts[state_topic], observations=counts[observations_topic],
        late_observations=pipeline.late_observations,
        superseded_observations=pipeline.superseded_observations)


def _parser() -> argparse.ArgumentParser:
    parser = ToolParser(_PROG, __doc__.split('\n\n')[0], 'ghost')
    parser.add_argument('input', type=Path, help='rosbag2 MCAP bag (directory or .mcap file)')
    parser.add_argument('--output', '-o', type=Path, required=True,
                        help='Ghost bag directory to write (must not exist)')
    parser.add_argument('--state-topic', default=_STATE,
                        help=f'{STATE_TYPE} topic of the beliefs (default {_STATE})')
    parser.add_argument('--observations-topic', default=_OBSERVATIONS,
                        help=f'{OBSERVATION_TYPE} topic of the fixes (default {_OBSERVATIONS})')
    parser.add_argument('--params-file', type=Path, action='append', default=None,
                        help='node parameter file(s), in load order (default: the installed '
                             'config/ghost.yaml); e.g. add config/scenarios/<name>.yaml')
    parser.add_argument('--no-report', dest='report', action='store_false',
                        help='do not write the flight review (default: OUTPUT_review/, by '
                             'ghost_review)')
    parser.add_argument('--signing-key', type=Path, metavar='PATH',
                        help='Ed25519 private key (PKCS8 PEM, from ghost_keygen) that signs '
                             "the output's manifest.json, as ghost_run's recorder does; the "
                             'verification then checks the signature')
    return parser


def _replay_into(input_bag: Path, output: Path, config: PipelineConfig, state_topic: str,
                 observations_topic: str, signing_key: Ed25519PrivateKey | None) -> ReplayResult:
    """replay_bag, written beside `output` and renamed into place only once complete.

    Whatever stops it (a bad input, Ctrl-C), nothing is left at `output`, so the same
    command can be run again.
    """
    staging = Path(tempfile.mkdtemp(prefix=f'.{output.name}.partial-', dir=output.parent))
    try:
        result = replay_bag(input_bag, staging / output.name, config, state_topic,
                            observations_topic, signing_key)
        (staging / output.name).rename(output)
        return result
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Replay, write, verify, print; return the exit code."""
    args = _parser().parse_args(argv)
    return guarded(_PROG, lambda: _run(args))


def _run(args: argparse.Namespace) -> int:
    if args.output.exists():
        return tool_error(_PROG, f'{args.output}: the output bag exists; choose a new path',
                          ExitCode.USAGE)
    try:
        args.output.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        return tool_error(_PROG, f'{args.output}: its parent folder cannot be created: '
                                 f'{err.strerror}', ExitCode.USAGE)
    try:
        files = args.params_file or default_params_files()
        config = pipeline_config_from_files(files)
    except (FileNotFoundError, GhostError, ValueError) as err:
        return tool_error(_PROG, str(err), ExitCode.USAGE)
    key = None
    if args.signing_key is not None:
        try:
            key = load_private_key(args.signing_key)
        except ManifestError as err:
            return tool_error(_PROG, f'--signing-key {err}', ExitCode.USAGE)
    try:
        result = _replay_into(args.input, args.output, config, args.state_topic,
                              args.observations_topic, key)
    except InputBagError as err:
        return tool_error(_PROG, str(err), ExitCode.BAD_INPUT)
    except (GhostError, OSError) as err:
        return tool_error(_PROG, f'{args.output}: {err}', ExitCode.BAD_INPUT)
    print(f'{_PROG}: {result.beliefs} beliefs and {result.observations} fixes from '
          f'{args.input} -> {args.output} ({len(result.traces)} cycles)')
    if result.late_observations or result.superseded_observations:
        print(f'{_PROG}: fixes not used: {result.late_observations} later than '
              f'max_observation_lag, {result.superseded_observations} superseded by a later '
              'fix of the same cycle')
    # What the run decided, then the files, then the auditor (its own process: the runtime
    # does not import it), whose verdict line is the last: as ghost_run prints them.
    for line in result.summary.lines():
        print(line)
    reports = args.output.with_name(f'{args.output.name}_reports.json')
    print(f'bag: {args.output}\nreports: {reports}', flush=True)
    options = []
    if key is not None:
        public = args.output.with_name(f'{args.output.name}_signing_key.pub')
        public.write_bytes(key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
        options += ['--public-key', str(public)]
    code = _verify_and_review(args, reports, options, list(files))
    return ExitCode.OK if code == 0 else ExitCode.VIOLATED


def _verify_and_review(args: argparse.Namespace, reports: Path, options: list[str],
                       files: list[Path]) -> int:
    """The auditor's verdict (its lines last), with the review written by the same process."""
    if args.report and verifier_missing(args.output) is None:  # the review verifies too
        done = review_and_verify(args.output, args.output.with_name(
            f'{args.output.name}_review'), reports, options, files)
        if done is not None:
            if done.report is not None:
                print(f'report: {done.report}')
            for line in done.lines:
                print(line)
            return done.code
        print(f'note: no report: {REVIEWER} is not installed in this Python', file=sys.stderr)
    return verify_bag(args.output, '--json', str(reports), *options)


if __name__ == '__main__':
    sys.exit(main())
