"""The workspace's Python modules import each other without a circle.

Every import counts, the ones inside functions too: an import moved into a function to dodge
a circle still makes one. A circle is reported as the modules on it, in order.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ('ghost', 'ghost_core', 'ghost_bag', 'ghost_verify', 'ghost_nodes', 'ghost_px4',
            'ghost_mavros', 'ghost_review')


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT / path.relative_to(ROOT).parts[0]).with_suffix('').parts)
    if parts[-1] == '__init__':
        parts.pop()
    return '.'.join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for package in PACKAGES
            for path in sorted((ROOT / package / package).rglob('*.py'))}


def _resolve(module: str, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ''
    base = module.split('.')
    package = base[:len(base) - node.level] if not module.endswith('__init__') else base
    return '.'.join([*package, *([node.module] if node.module else [])])


def import_graph() -> dict[str, set[str]]:
    """First-party module -> the first-party modules it imports (anywhere in its code)."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding='utf-8'), filename=str(path))
        is_package = path.name == '__init__.py'
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(name + ('.__init__' if is_package else ''), node)
                targets = [f'{base}.{alias.name}' for alias in node.names] + [base]
            for target in targets:
                # The longest first-party module the name is (or is in).
                while target and target not in modules:
                    target = target.rpartition('.')[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(graph[node]):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_scan_sees_imports_inside_functions() -> None:
    graph = import_graph()
    assert 'ghost_core.graph' in graph['ghost.bringup']
    assert 'ghost_bag.write' in graph['ghost_nodes.nodes.recorder']
    # ghost_run imports the ULog reader inside a function (--px4-ulog only).
    assert 'ghost_px4.ulog_topics' in graph['ghost.run']


def test_circles_are_found() -> None:
    assert circles({'a': {'b'}, 'b': {'c'}, 'c': {'a'}, 'd': {'a'}}) == [['a', 'b', 'c']]
    assert circles({'a': {'b'}, 'b': set()}) == []


def test_no_import_circle() -> None:
    found = circles(import_graph())
    assert found == [], 'import circles:\n' + '\n'.join(' <-> '.join(c) for c in found)
