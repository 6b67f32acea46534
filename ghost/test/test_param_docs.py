"""docs/parameters.md and config/ghost.yaml hold exactly what the nodes declare, once."""

from pathlib import Path

import pytest
import yaml

from ghost.param_docs import declarations, render, render_config, SHARED

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / 'docs' / 'parameters.md'
CONFIG = ROOT / 'config'


def test_parameter_page_is_current() -> None:
    hint = 'run: python -m ghost.param_docs > docs/parameters.md'
    assert DOC.read_text() == render(), hint


def test_shipped_parameter_file_is_generated_from_the_declarations() -> None:
    """config/ghost.yaml restates no default by hand: it is the declarations, rendered."""
    hint = ('change the declaration, then run: '
            'python -m ghost.param_docs --config > config/ghost.yaml')
    assert (CONFIG / 'ghost.yaml').read_text() == render_config(), hint


def test_shipped_parameter_file_reads_back_as_the_declared_defaults() -> None:
    """Every value of config/ghost.yaml, as YAML reads it, is its node's declared default."""
    document = yaml.safe_load((CONFIG / 'ghost.yaml').read_text())
    shared = document.pop('/**')['ros__parameters']
    for node, specs in declarations()[1:]:
        section = document.pop(f'/**/{node}', {'ros__parameters': {}})['ros__parameters']
        for spec in specs:
            value = shared[spec.name] if spec.name in SHARED else section.pop(spec.name)
            assert value == spec.default and type(value) is type(spec.default), (node, spec.name)
        assert section == {}, f'{node}: {sorted(section)} are not declared'
    assert document == {}


def test_every_config_value_is_a_declared_parameter() -> None:
    """config/*.yaml sets nothing a node does not declare (a typo would be silently ignored)."""
    declared = {node: {spec.name for spec in specs} for node, specs in declarations()}
    every = set().union(*declared.values())
    for path in [CONFIG / 'ghost.yaml', *sorted((CONFIG / 'scenarios').glob('*.yaml'))]:
        for node, section in yaml.safe_load(path.read_text()).items():
            names = set(section['ros__parameters'])
            allowed = every if node == '/**' else declared.get(node.removeprefix('/**/'), set())
            assert names <= allowed, f'{path.name}: {node} sets undeclared {names - allowed}'


@pytest.mark.parametrize('name', sorted(p.stem for p in (CONFIG / 'scenarios').glob('*.yaml')))
def test_a_scenario_file_sets_the_values_the_scenario_is_stated_with(name: str) -> None:
    """config/scenarios/<name>.yaml and ghost_core.scenarios state the same period, M, K, W."""
    from ghost_core.scenarios import generate_scenario

    document = yaml.safe_load((CONFIG / 'scenarios' / f'{name}.yaml').read_text())
    calibrator = document['/**/calibrator']['ros__parameters']
    stated = generate_scenario(name).parameters
    assert document['/**/scenario']['ros__parameters']['scenario'] == name
    assert round(document['/**']['ros__parameters']['period_s'] * 1e9) == stated.period_ns
    assert (calibrator['min_outcomes'], calibrator['downgrade_threshold'],
            calibrator['max_history']) == (stated.min_outcomes, stated.downgrade_threshold,
                                           stated.max_history)
