"""Each agent parameter has one default, its declaration, wherever a configuration is built."""

from ghost_core.agent_parameters import ACCURACY_PROFILE_NAMES, AGENT_PARAMETERS, declared
from ghost_core.assessment import HysteresisConfig, ThresholdsConfig
from ghost_core.loop import LoopConfig
from ghost_core.pipeline import PipelineConfig
from ghost_core.prediction import EvaluatorConfig
from ghost_core.profiles import accuracy_profile, ACCURACY_PROFILES, DEFAULT_PROFILE
from ghost_nodes.agent_config import pipeline_config_from_files
from ghost_nodes.node_parameters import PARAMETERS


def test_the_nodes_declare_ghost_cores_tables() -> None:
    """ghost_nodes declares the agent's parameters from ghost_core's tables, not a copy."""
    for node, specs in AGENT_PARAMETERS.items():
        assert PARAMETERS[node] is specs


def test_core_dataclass_defaults_are_the_declared_defaults() -> None:
    """A node run with no parameter file builds exactly ghost_core's default configuration.

    So `ros2 run ghost_nodes calibrator` alone, ghost_replay and LoopConfig() agree on K, and
    a default restated differently anywhere in ghost_core fails here.
    """
    from_declarations = pipeline_config_from_files([])
    defaults = PipelineConfig()
    assert from_declarations.loop == LoopConfig() == defaults.loop
    assert LoopConfig().downgrade_threshold == declared('calibrator', 'downgrade_threshold')
    assert from_declarations.evaluator == EvaluatorConfig() == defaults.evaluator
    assert from_declarations.thresholds.hysteresis == HysteresisConfig()
    assert from_declarations.thresholds.no_covariance_level == (
        ThresholdsConfig().no_covariance_level)
    assert from_declarations.thresholds == accuracy_profile(DEFAULT_PROFILE).thresholds()
    for name in ('period_ns', 'process_noise_q', 'grace_cycles', 'idle_flush_ns'):
        assert getattr(from_declarations, name) == getattr(defaults, name), name


def test_the_profiles_are_the_declared_choices() -> None:
    """ghost_core.profiles defines exactly the profiles accuracy_profile may name."""
    assert tuple(ACCURACY_PROFILES) == ACCURACY_PROFILE_NAMES
    assert all(profile.thresholds().accuracy_profile == name
               for name, profile in ACCURACY_PROFILES.items())
