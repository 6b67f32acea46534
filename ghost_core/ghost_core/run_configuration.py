"""The run's configuration as the authority: the start configuration and every change to it.

A Ghost run records its configuration once at the start (manifest.json ``config``, a
``PipelineConfig.to_dict()``) and each change a node applies while it runs (``ros2 param set``)
as a ConfigurationChange message (a ``ChangeInForce`` once read): the node's part of the
configuration after the change, and the stamp after which its cycles use it.
``ConfigurationTimeline`` answers which configuration was in force for a cycle, so that the
verifier judges each cycle with it rather than with the values the agent's own messages
claim (docs/properties.md, "The run's configuration").

Pure: no rclpy, no bag library.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
import json
from types import MappingProxyType

from ghost_core import bounded_json
from ghost_core.errors import ConfigError
from ghost_core.gate import MAX_TIMEOUT_S
from ghost_core.pipeline import PipelineConfig

__all__ = ['CHANGEABLE_SECTIONS', 'GATE_SECTION', 'ChangeInForce', 'ConfigurationRecord',
           'ConfigurationTimeline', 'ParametersInForce', 'change_in_force',
           'configuration_from_records', 'gate_timeouts']

#: The command gate's part of the configuration records: its timeout, which GATE-v1 judges
#: freshness with. Not part of the agent's PipelineConfig: kept apart (``gate_timeouts``).
GATE_SECTION = 'gate'

#: The keys of the run configuration a node may change while it runs, by the node that owns
#: each (the others are read-only parameters: a change would need a restart).
CHANGEABLE_SECTIONS: Mapping[str, str] = MappingProxyType({
    'loop': 'calibrator',
    'thresholds': 'self_assessor',
    'process_noise_q': 'forward_predictor',
})


@dataclass(frozen=True, slots=True)
class ChangeInForce:
    """One recorded change of a node's part of the run configuration.

    `node` set `section` (keys of the run configuration) in force for every cycle stamped
    after `in_force_after_stamp_ns` (-1: from the first cycle).
    """

    node: str
    in_force_after_stamp_ns: int
    section: dict[str, object]
    #: When the change was recorded (the bag's log time), for the report.
    log_time_ns: int = 0

    def describe(self) -> str:
        """One line: who changed what, from when."""
        after = ('the first cycle' if self.in_force_after_stamp_ns < 0
                 else f'cycles after {self.in_force_after_stamp_ns} ns')
        return f'{self.node} set {json.dumps(self.section, sort_keys=True)} for {after}'


def change_in_force(node: str, in_force_after_stamp_ns: int, configuration: str,
                               log_time_ns: int = 0) -> ChangeInForce:
    """A recorded ConfigurationChange message's fields as a change; ConfigError if not one.

    `configuration` must be a JSON object whose keys are changeable sections
    (``CHANGEABLE_SECTIONS``); their values are checked when the change is applied.
    """
    where = f'configuration change of {node or "(no node)"} at log time {log_time_ns}'
    try:
        section = bounded_json.loads(configuration)
    except ValueError as err:
        raise ConfigError(f'{where}: configuration is not JSON ({err})') from None
    if not isinstance(section, dict) or not section:
        raise ConfigError(f'{where}: configuration must be a non-empty JSON object')
    unknown = sorted(set(section) - set(CHANGEABLE_SECTIONS))
    if unknown:
        raise ConfigError(f'{where}: {", ".join(unknown)} cannot change while Ghost runs '
                          f'(changeable: {", ".join(sorted(CHANGEABLE_SECTIONS))})')
    if isinstance(in_force_after_stamp_ns, bool) or in_force_after_stamp_ns < -1:
        raise ConfigError(f'{where}: in_force_after_stamp_ns must be >= -1, got '
                          f'{in_force_after_stamp_ns!r}')
    return ChangeInForce(node, in_force_after_stamp_ns, section, log_time_ns)


@dataclass(frozen=True, slots=True)
class ConfigurationRecord:
    """One recorded ConfigurationChange message, as the bag holds it."""

    node: str
    in_force_after_stamp_ns: int
    configuration: str
    log_time_ns: int


def configuration_from_records(
    records: Sequence[ConfigurationRecord],
) -> tuple[dict[str, object] | None, list[ChangeInForce], str]:
    """The start configuration and the changes a bag's configuration records hold.

    Each agent node publishes its part of the start configuration as its first record
    (latched, so any recorder keeps it; SPEC 5, v1.3), and each change after it. A start part
    holds a section no node may change while it runs; a change only changeable sections. The
    start parts merge (``policies`` by id) into the ``PipelineConfig.to_dict`` document (None
    when there is none; with why, when they are not all there: a partial document).
    ConfigError for a record that cannot be read, and for a node that publishes a second start
    part (a read-only parameter changed).
    """
    parts: dict[str, dict[str, object]] = {}
    changes: list[ChangeInForce] = []
    for record in records:
        where = (f'configuration change of {record.node or "(no node)"} at log time '
                 f'{record.log_time_ns}')
        section = _section(record, where)
        if set(section) == {GATE_SECTION}:
            continue  # the gate's timeout (gate_timeouts)
        if set(section) <= set(CHANGEABLE_SECTIONS):
            changes.append(change_in_force(record.node, record.in_force_after_stamp_ns,
                                           record.configuration, record.log_time_ns))
            continue
        if record.node in parts:
            if parts[record.node] != section:
                raise ConfigError(f'{where}: a second start configuration, with other values: '
                                  f'a read-only parameter changed while the node ran')
            continue
        parts[record.node] = section
    if not parts:
        return None, changes, 'no start configuration is recorded in the bag'
    document: dict[str, object] = {}
    policies: dict[str, object] = {}
    for section in parts.values():
        for key, value in section.items():
            if key == 'policies' and isinstance(value, Mapping):
                policies.update(value)
            else:
                document[key] = value
    document['policies'] = policies
    missing = sorted({'evaluator', 'grace_cycles', 'idle_flush_ns', 'loop', 'period_ns',
                      'process_noise_q', 'thresholds'} - set(document))
    if missing:
        return document, changes, (f'the start configuration recorded in the bag lacks '
                                   f'{", ".join(missing)} (a node did not record its part)')
    return document, changes, ''


def _section(record: ConfigurationRecord, where: str) -> dict[str, object]:
    try:
        section = bounded_json.loads(record.configuration)
    except ValueError as err:
        raise ConfigError(f'{where}: configuration is not JSON ({err})') from None
    if not isinstance(section, dict) or not section:
        raise ConfigError(f'{where}: configuration must be a non-empty JSON object')
    return section


def gate_timeouts(records: Sequence[ConfigurationRecord]) -> tuple[tuple[int, int], ...]:
    """The command gate's timeout records: (log time, timeout in ns), in log-time order.

    Each is in force for the gate records logged after it (its start record, then each
    change). ConfigError for a timeout that is not a number in (0, MAX_TIMEOUT_S], its
    declared bound.
    """
    found = []
    for record in records:
        where = (f'configuration record of {record.node or "(no node)"} at log time '
                 f'{record.log_time_ns}')
        section = _section(record, where)
        if set(section) != {GATE_SECTION}:
            continue
        gate = section[GATE_SECTION]
        timeout = gate.get('timeout_s') if isinstance(gate, Mapping) else None
        if (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                or not 0.0 < timeout <= MAX_TIMEOUT_S):
            raise ConfigError(f'{where}: gate.timeout_s must be a number in (0, '
                              f'{MAX_TIMEOUT_S:g}] s (its declared bound), got {timeout!r}')
        found.append((record.log_time_ns, round(timeout * 1e9)))
    return tuple(sorted(found))


@dataclass(frozen=True, slots=True)
class ParametersInForce:
    """What a cycle's messages must carry under the configuration in force at its stamp."""

    min_outcomes: int
    downgrade_threshold: int
    window_size: int
    thresholds_sha256: str
    process_noise_q: float


class ConfigurationTimeline:
    """The configuration in force at each cycle stamp: the start one, then each change.

    Changes apply in the order of their `in_force_after_stamp_ns` (ties: the order given, the
    recording's). Each one replaces the sections it names; the result must be a valid
    ``PipelineConfig`` (ConfigError naming the change otherwise). Also a ``CycleParameters``
    (``loop_parameters``, ``process_noise_q``), so a re-run follows the recorded changes.
    """

    def __init__(self, start: PipelineConfig,
                 changes: Sequence[ChangeInForce] = ()) -> None:
        self.start = start
        self.changes = tuple(sorted(changes, key=lambda change: change.in_force_after_stamp_ns))
        self._after: list[int] = []
        self._configs: list[PipelineConfig] = [start]
        document = start.to_dict()
        for change in self.changes:
            document = {**document, **{key: _plain(value)
                                        for key, value in change.section.items()}}
            try:
                config = PipelineConfig.from_dict(document)
            except ConfigError as err:
                raise ConfigError(f'{change.describe()}: not a valid configuration: '
                                  f'{err}') from None
            self._after.append(change.in_force_after_stamp_ns)
            self._configs.append(config)
        self._in_force = [_parameters(config) for config in self._configs]

    def config_at(self, stamp_ns: int) -> PipelineConfig:
        """The configuration the cycle stamped `stamp_ns` was to be computed with."""
        return self._configs[bisect_left(self._after, stamp_ns)]

    def parameters_at(self, stamp_ns: int) -> ParametersInForce:
        """The M, K, W, thresholds address and Q in force at `stamp_ns`."""
        return self._in_force[bisect_left(self._after, stamp_ns)]

    def loop_parameters(self, stamp_ns: int) -> tuple[int, int]:
        """M and K in force at the cycle (a ``CycleParameters`` for the Pipeline)."""
        found = self.parameters_at(stamp_ns)
        return found.min_outcomes, found.downgrade_threshold

    def process_noise_q(self, stamp_ns: int) -> float:
        """Q in force at the cycle (a ``CycleParameters`` for the Pipeline)."""
        return self.parameters_at(stamp_ns).process_noise_q


def _parameters(config: PipelineConfig) -> ParametersInForce:
    return ParametersInForce(config.loop.min_outcomes, config.loop.downgrade_threshold,
                             config.loop.max_history, config.thresholds.sha256,
                             float(config.process_noise_q))


def _plain(value: object) -> object:
    """A JSON value with its mappings as dicts (PipelineConfig.from_dict reads plain JSON)."""
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value
