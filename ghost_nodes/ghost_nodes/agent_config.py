"""Node parameters -> core configuration, once: the nodes and the offline replay both use it.

The nodes build their ghost_core configuration from their ROS parameters with these functions,
and ``pipeline_config_from_files`` builds the whole-agent PipelineConfig from the same
parameter files the nodes load. That is what makes ``ghost_replay`` (the pure pipeline) and
the node graph over DDS judge with exactly the same configuration. No rclpy here.
"""

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from ghost_core.assessment import BlockThresholds, HysteresisConfig, ThresholdsConfig
from ghost_core.errors import ConfigError
from ghost_core.levels import SelfAssessmentLevel
from ghost_core.loop import LoopConfig
from ghost_core.pipeline import PipelineConfig
from ghost_core.prediction import EvaluatorConfig
from ghost_core.profiles import accuracy_profile
from ghost_nodes.node_parameters import NO_COVARIANCE_CHOICES, PARAMETERS

__all__ = ['NO_COVARIANCE_LEVELS', 'evaluator_config', 'loop_config', 'node_name_matches',
           'node_parameters', 'pipeline_config', 'pipeline_config_from_files',
           'thresholds_config']

#: Values of the self_assessor's no_covariance_level parameter.
NO_COVARIANCE_LEVELS: Mapping[str, SelfAssessmentLevel] = {
    choice: SelfAssessmentLevel[choice.upper()] for choice in NO_COVARIANCE_CHOICES}

Lookup = Callable[[str], Any]
_BLOCKS = ('position', 'velocity', 'orientation')


def thresholds_config(value: Lookup) -> ThresholdsConfig:
    """The self-assessor's configuration from its parameters (``value(name)``).

    ``accuracy_profile`` gives every threshold and the unconfirmed horizon, and is recorded by
    name; a threshold parameter > 0, or an unconfirmed_horizon_s >= 0, replaces the profile's
    value.
    """
    hysteresis = HysteresisConfig(
        recovery_margin=float(value('recovery_margin')),
        recovery_dwell_ns=round(float(value('recovery_dwell_s')) * 1e9),
        min_level_interval_ns=round(float(value('min_level_interval_s')) * 1e9),
        recovery_bound_ns=round(float(value('recovery_bound_s')) * 1e9))
    level = str(value('no_covariance_level'))
    if level not in NO_COVARIANCE_LEVELS:
        raise ConfigError(f'no_covariance_level must be one of {sorted(NO_COVARIANCE_LEVELS)}, '
                          f'got {level!r}')
    profile = accuracy_profile(str(value('accuracy_profile')))

    def block(name: str) -> BlockThresholds:
        default: BlockThresholds = getattr(profile, name)
        known = float(value(f'{name}_known_max_std')) or default.known_max_std
        uncertain = float(value(f'{name}_uncertain_max_std')) or default.uncertain_max_std
        return BlockThresholds(known, uncertain)

    horizon_s = float(value('unconfirmed_horizon_s'))
    horizon = profile.unconfirmed_horizon_s if horizon_s < 0 else horizon_s
    return ThresholdsConfig(
        **{name: block(name) for name in _BLOCKS},
        no_covariance_level=NO_COVARIANCE_LEVELS[level], hysteresis=hysteresis,
        unconfirmed_horizon_ns=round(horizon * 1e9), accuracy_profile=profile.name)


def evaluator_config(value: Lookup) -> EvaluatorConfig:
    """The outcome evaluator's configuration from its parameters."""
    return EvaluatorConfig(
        unmeasured_variance_m2=float(value('unmeasured_variance_m2')),
        max_observation_lag_ns=round(float(value('max_observation_lag_s')) * 1e9))


def loop_config(value: Lookup) -> LoopConfig:
    """The calibrator's M, K and W from its parameters."""
    return LoopConfig(min_outcomes=int(value('min_outcomes')),
                      downgrade_threshold=int(value('downgrade_threshold')),
                      max_history=int(value('max_history')))


def _parameter_documents(files: Sequence[Path | str]) -> list[tuple[str, dict[str, Any]]]:
    documents = []
    for path in files:
        try:
            document = yaml.safe_load(Path(path).read_text(encoding='utf-8')) or {}
        except (OSError, yaml.YAMLError) as err:
            raise ConfigError(f'{path}: cannot be read as a parameter file: {err}') from err
        if not isinstance(document, dict):
            raise ConfigError(f'{path}: a parameter file must be a mapping of node names')
        documents.append((str(path), document))
    return documents


def node_name_matches(pattern: str, fully_qualified_name: str) -> bool:
    """Whether a parameter-file key selects a node, as rcl matches it.

    A key without the leading '/' is taken from the root (``calibrator`` is ``/calibrator``);
    ``*`` stands for one name token and ``**`` for any number of them (``/**``,
    ``/**/calibrator``).
    """
    pattern_tokens = [t for t in ('/' + pattern.lstrip('/')).split('/') if t]
    name_tokens = [t for t in fully_qualified_name.split('/') if t]

    def match(i: int, j: int) -> bool:
        if i == len(pattern_tokens):
            return j == len(name_tokens)
        token = pattern_tokens[i]
        if token == '**':
            return any(match(i + 1, k) for k in range(j, len(name_tokens) + 1))
        if j == len(name_tokens):
            return False
        return (token == '*' or token == name_tokens[j]) and match(i + 1, j + 1)

    return match(0, 0)


def node_parameters(files: Sequence[Path | str], node: str,
                    defaults: Mapping[str, Any], namespace: str = '') -> dict[str, Any]:
    """The parameters ``node`` (in ``namespace``) gets from ``files`` over its ``defaults``.

    As rcl and rclpy apply them: the files are merged into one table of sections, a section
    keeping the place where its key first appeared and a later file's values replacing an
    earlier one's; then every section whose key matches the node (``node_name_matches``) is
    applied in that order. So a ``/**`` section of a later file does not beat the node's own
    section of an earlier one.
    """
    fully_qualified = f'{namespace.rstrip("/")}/{node}'
    sections: dict[str, dict[str, Any]] = {}
    for path, document in _parameter_documents(files):
        for key, entry in document.items():
            values = entry.get('ros__parameters', {}) if isinstance(entry, dict) else None
            if not isinstance(values, dict):
                raise ConfigError(f'{path}: {key}.ros__parameters must be a mapping')
            sections.setdefault(str(key), {}).update(values)
    params = dict(defaults)
    for key, values in sections.items():
        if node_name_matches(key, fully_qualified):
            params.update({k: v for k, v in values.items() if k in defaults})
    return params


def pipeline_config_from_files(files: Sequence[Path | str],
                               namespace: str = '') -> PipelineConfig:
    """The whole agent's configuration from the nodes' parameter files (ghost.yaml, ...)."""
    return pipeline_config(lambda _node: list(files), namespace)


def pipeline_config(files_of: Callable[[str], Sequence[Path | str]],
                    namespace: str) -> PipelineConfig:
    """The whole agent's configuration, each node's parameters read from ``files_of(node)``."""

    def of(node: str) -> Lookup:
        params = node_parameters(files_of(node), node, {spec.name: spec.default
                                                         for spec in PARAMETERS[node]},
                                 namespace)
        return params.__getitem__

    predictor = of('forward_predictor')
    evaluator = of('outcome_evaluator')
    return PipelineConfig(
        period_ns=round(float(predictor('period_s')) * 1e9),
        process_noise_q=float(predictor('process_noise')),
        loop=loop_config(of('calibrator')),
        thresholds=thresholds_config(of('self_assessor')),
        evaluator=evaluator_config(evaluator),
        grace_cycles=int(evaluator('grace_cycles')),
        idle_flush_ns=round(float(evaluator('idle_flush_s')) * 1e9),
    )
