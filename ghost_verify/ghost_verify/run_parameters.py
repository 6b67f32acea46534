"""The parameters the verifier judges with, and the check that the messages carry them.

One authority: the run's own configuration, as Ghost's recorder recorded it (manifest.json
``config`` at the start, then each ConfigurationChange a node published while it ran;
``ghost_core.run_configuration``). Every cycle is judged with the M, K and W in force at its
stamp, and a message that carries another M, K, W, thresholds address or Q is a
``parameters_mismatch``: an agent cannot judge itself by numbers of its own choosing.

A bag with no configuration record (someone else's recorder, a lone .mcap file) is judged with
the auditor's ``-m/-k/-w``, or else with the values its messages claim, under a printed
warning (``self-reported parameters``). Given values always win for judging; the check of the
messages against a recorded configuration runs regardless.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import StrEnum
import json
import os

from ghost_bag.errors import BagError
from ghost_bag.manifest import MANIFEST_NAME
from ghost_bag.recorded_configuration import read_configuration_changes
from ghost_core import bounded_json
from ghost_core.errors import ConfigError
from ghost_core.evidence import TRANSPORT_BOUND_NS
from ghost_core.hashing import content_address
from ghost_core.pipeline import PipelineConfig
from ghost_core.run_configuration import (
    ChangeInForce,
    configuration_from_records,
    ConfigurationRecord,
    ConfigurationTimeline,
    gate_timeouts,
)

from .manifest import manifest_dir

__all__ = ['BRIDGE_CONFIG_KEY', 'load_run_config', 'load_run_parameters', 'ParameterSource',
           'RunParameters', 'parse_run_config']

#: The run configuration's key for px4_bridge's (ghost_px4.bridge.BRIDGE_CONFIG_KEY; the
#: auditor does not import ghost_px4 to read it).
BRIDGE_CONFIG_KEY = 'px4_bridge'


class ParameterSource(StrEnum):
    """Where the parameters a cycle is judged with (or one of them, M or K) come from."""

    #: manifest.json's config and the recorded configuration changes.
    RUN_CONFIGURATION = 'run_configuration'
    #: The auditor's -m/-k/-w (given values override the recorded ones).
    COMMAND_LINE = 'command_line'
    #: The values the messages claim (nothing else to go by): printed as a warning.
    SELF_REPORTED = 'self_reported'
    #: None at all (no cycle recorded one).
    NONE = 'none'


def load_run_config(bag: str | os.PathLike[str]) -> tuple[dict[str, object] | None, str]:
    """The run configuration recorded beside the bag (manifest.json), or None and why not."""
    folder = manifest_dir(bag)
    if folder is None:
        return None, (f'a lone .mcap file has no {MANIFEST_NAME}: the run configuration is '
                      'not recorded (give the bag directory)')
    path = folder / MANIFEST_NAME
    if not path.is_file():
        return None, f'no {MANIFEST_NAME}: the run configuration is not recorded'
    try:
        document = json.loads(path.read_text(encoding='utf-8'))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        return None, f'{MANIFEST_NAME} cannot be read as JSON ({" ".join(str(err).split())})'
    config = document.get('config') if isinstance(document, dict) else None
    if not isinstance(config, dict):
        return None, f'{MANIFEST_NAME} holds no config object'
    if not config:
        return None, (f'{MANIFEST_NAME} records an empty run configuration (a recorder '
                      'started without run_config)')
    return config, ''


def parse_run_config(document: dict[str, object]) -> tuple[PipelineConfig, dict[str, str]]:
    """The agent's configuration and the input topic names of a recorded ``config``.

    ConfigError names what is wrong.
    """
    topics = document.get('input_topics')
    # The bridges' configurations (px4_bridge: bridge_rederive's; mavros_, ap_bridge): not the
    # agent's.
    agent = {key: value for key, value in document.items()
             if key not in ('input_topics', BRIDGE_CONFIG_KEY, 'mavros_bridge', 'ap_bridge')}
    names: dict[str, str] = {}
    if topics is not None:
        if not isinstance(topics, dict) or set(topics) != {'state', 'observations'} or not all(
                isinstance(name, str) and name.startswith('/') for name in topics.values()):
            raise ConfigError('input_topics must map state and observations to topic names')
        names = {str(role): str(name) for role, name in topics.items()}
    return PipelineConfig.from_dict(agent), names


@dataclass(frozen=True, slots=True)
class RunParameters:
    """The parameters of one bag: the run's timeline, or the auditor's, or the messages'.

    `timeline` is None when the bag records no usable configuration: `missing` says why (no
    record at all) or `problem` does (a record that cannot be used: a failure of the check).
    The given values (-m/-k/-w) override the judging whatever the source.
    """

    timeline: ConfigurationTimeline | None
    min_outcomes: int | None = None
    downgrade_threshold: int | None = None
    window_size: int | None = None
    input_topics: dict[str, str] = field(default_factory=dict)
    #: The content address of manifest.json's config, when there is one.
    config_sha256: str = ''
    #: The recorded px4_bridge configuration (``bridge_rederive`` reads it), when there is one.
    px4_bridge: object = None
    #: The recorded ap_bridge configuration (``bridge_rederive`` reads it), when there is one.
    ap_bridge: object = None
    mavros_bridge: object = None
    #: When the recorder logged the self-assessor's start configuration (None: not recorded).
    assessor_started_log_ns: int | None = None
    #: The command gate's recorded timeouts: (log time, timeout ns), in log-time order.
    gate_timeouts: tuple[tuple[int, int], ...] = ()
    missing: str = ''
    problem: str = ''

    @property
    def authority(self) -> ParameterSource:
        """Where the parameters come from (given values override the judging still)."""
        if self.timeline is not None:
            return ParameterSource.RUN_CONFIGURATION
        if None not in (self.min_outcomes, self.downgrade_threshold, self.window_size):
            return ParameterSource.COMMAND_LINE
        return ParameterSource.SELF_REPORTED

    @property
    def loop_in_force(self) -> Callable[[int], tuple[int, int]] | None:
        """M and K in force at a cycle stamp, from the run's configuration (None without)."""
        return None if self.timeline is None else self.timeline.loop_parameters

    def window_at(self, stamp_ns: int, recorded: int) -> int:
        """The W a history at `stamp_ns` is recomputed with (`recorded`: what it claims)."""
        if self.window_size is not None:
            return self.window_size
        if self.timeline is not None:
            return self.timeline.parameters_at(stamp_ns).window_size
        return recorded

    def warning(self, *, window: bool = True) -> str | None:
        """The warning line of a bag judged with its messages' own parameters, if it is.

        `window`: whether W is judged with too (verify_all's history check), or M and K only.
        """
        flags = (('-m', self.min_outcomes), ('-k', self.downgrade_threshold),
                 *((('-w', self.window_size),) if window else ()))
        unused = [flag for flag, value in flags if value is None]
        if self.timeline is not None or not unused:
            return None
        why = self.problem or self.missing
        return (f"self-reported parameters: {why} (Ghost's recorder writes it: ghost_run, ros2 "
                f'launch ghost); {", ".join(unused)} not given, so those parameters are the ones '
                "the agent's own messages claim (give them to judge with yours)")


def load_run_parameters(bag: str | os.PathLike[str], *, min_outcomes: int | None = None,
                        downgrade_threshold: int | None = None,
                        window_size: int | None = None) -> RunParameters:
    """The parameters `bag` is judged with: its recorded configuration and changes, if any.

    The configuration records in the bag (ghost/configuration: each node's start part, then
    its changes) are the authority; manifest.json's ``config`` is used when the bag holds no
    start configuration (a bag recorded before v1.3), and must agree with it when both exist.
    """
    given = RunParameters(None, min_outcomes, downgrade_threshold, window_size)
    try:
        records = [ConfigurationRecord(record.node, record.in_force_after_stamp_ns,
                                       record.configuration, record.log_time_ns)
                   for record in read_configuration_changes(bag)]
        in_bag, changes, why = configuration_from_records(records)
        timeouts = gate_timeouts(records)
    except (BagError, ConfigError) as err:
        return replace(given, problem=f'the recorded configuration changes cannot be used: '
                                      f'{err}')
    given = replace(given, assessor_started_log_ns=_assessor_started(records),
                    gate_timeouts=timeouts)
    document, missing = load_run_config(bag)
    if document is not None:
        given = replace(given, config_sha256=content_address(document))
        try:
            start, topics = parse_run_config(document)
        except ConfigError as err:
            return replace(given, problem=f'the recorded run configuration cannot be used: {err}')
        given = replace(given, input_topics=topics, px4_bridge=document.get(BRIDGE_CONFIG_KEY),
                        ap_bridge=document.get('ap_bridge'),
                        mavros_bridge=document.get('mavros_bridge'))
    if in_bag is not None and why and document is not None:
        # Only part of the start is in the bag: what is there must be manifest.json's.
        differs = _differing_key(in_bag, document)
        if differs is not None:
            return replace(given, problem=f'{differs} cannot change while Ghost runs: the bag '
                                          f'records another value than {MANIFEST_NAME}')
        in_bag = None
    if in_bag is not None and why:
        return replace(given, missing=why)
    if in_bag is not None:
        try:
            recorded = PipelineConfig.from_dict(in_bag)
        except ConfigError as err:
            return replace(given, problem=f'the start configuration in the bag cannot be used: '
                                          f'{err}')
        if document is not None and recorded != start:
            return replace(given, problem=f'the start configuration in the bag differs from '
                                          f"{MANIFEST_NAME}'s config")
        start = recorded
    elif document is None:
        return replace(given, missing=f'{why}, and {missing}')
    if changes:
        changes = _not_retroactive(bag, changes, given.input_topics)
    try:
        timeline = ConfigurationTimeline(start, changes)
    except ConfigError as err:
        return replace(given, problem=f'the recorded configuration changes cannot be used: '
                                      f'{err}')
    return replace(given, timeline=timeline)


def _assessor_started(records: list[ConfigurationRecord]) -> int | None:
    """The log time of the self-assessor's start record (the one naming its assessor_id)."""
    for record in records:
        try:
            section = bounded_json.loads(record.configuration)
        except ValueError:
            continue
        policies = section.get('policies') if isinstance(section, dict) else None
        if isinstance(policies, dict) and 'assessor_id' in policies:
            return record.log_time_ns
    return None


def _differing_key(part: dict[str, object], document: dict[str, object]) -> str | None:
    """The first key of a partial start configuration whose value is not manifest.json's."""
    for key, value in sorted(part.items()):
        other = document.get(key)
        if key == 'policies' and isinstance(value, dict):
            if not isinstance(other, dict) or any(
                    other.get(name) != item for name, item in value.items()):
                return key
        elif other != value:
            return key
    return None


def _not_retroactive(bag: str | os.PathLike[str], changes: list[ChangeInForce],
                     topics: dict[str, str]) -> list[ChangeInForce]:
    """The changes, each in force at the earliest for cycles the recorder logged after it.

    A change claims the cycle after which it is in force (`in_force_after_stamp_ns`); a cycle
    whose belief the recorder logged more than the transport bound before the change cannot
    have been computed with it (SPEC 5, v1.3: nothing retroactive is believed), so the claim
    is moved past every such cycle. Without recorded beliefs, the claims stand.
    """
    from .evidence import load_input_index

    try:
        beliefs = load_input_index(bag, topics).beliefs
    except BagError:
        return changes
    logged = sorted((log, stamp) for stamp, log in beliefs.by_stamp)
    newest = array('q')
    best = -1
    for _, stamp in logged:
        best = max(best, stamp)
        newest.append(best)
    times = [log for log, _ in logged]
    bounded = []
    for change in changes:
        index = bisect_left(times, change.log_time_ns - TRANSPORT_BOUND_NS)
        floor = newest[index - 1] if index else -1
        bounded.append(change if change.in_force_after_stamp_ns >= floor
                       else replace(change, in_force_after_stamp_ns=floor))
    return bounded
