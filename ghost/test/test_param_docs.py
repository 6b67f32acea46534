"""docs/parameters.md lists exactly what the nodes declare."""

from pathlib import Path

from ghost.param_docs import render

DOC = Path(__file__).resolve().parents[2] / 'docs' / 'parameters.md'


def test_parameter_page_is_current() -> None:
    hint = 'run: python -m ghost.param_docs > docs/parameters.md'
    assert DOC.read_text() == render(), hint


def test_every_config_value_is_a_declared_parameter() -> None:
    """config/*.yaml sets nothing a node does not declare (a typo would be silently ignored)."""
    import yaml
    declared: dict[str, set[str]] = {}
    for line in render().splitlines():
        if line.startswith('| `'):
            node, name = (cell.strip(' `') for cell in line.split('|')[1:3])
            declared.setdefault(node, set()).add(name)
    every = set().union(*declared.values())
    config = DOC.parents[1] / 'config'
    for path in [config / 'ghost.yaml', *sorted((config / 'scenarios').glob('*.yaml'))]:
        for node, section in yaml.safe_load(path.read_text()).items():
            names = set(section['ros__parameters'])
            allowed = every if node == '/**' else declared.get(node.removeprefix('/**/'), set())
            assert names <= allowed, f'{path.name}: {node} sets undeclared {names - allowed}'
