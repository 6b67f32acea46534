"""Source modules stay readable: functions of at most 60 lines, modules of at most 400.

A module may be longer when it is one cohesive job, and then its docstring says which
("One cohesive job ..."). Tests and benchmarks are not counted.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ('ghost', 'ghost_core', 'ghost_bag', 'ghost_verify', 'ghost_nodes', 'ghost_px4',
            'ghost_review')
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 400


def _sources() -> list[Path]:
    return [path for package in PACKAGES
            for path in sorted((ROOT / package / package).rglob('*.py'))]


def test_no_function_is_longer_than_60_lines() -> None:
    long = []
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1  # type: ignore[operator]
                if lines > MAX_FUNCTION_LINES:
                    long.append(f'{path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines})')
    assert long == [], 'functions over 60 lines:\n' + '\n'.join(long)


def test_a_long_module_says_it_is_one_cohesive_job() -> None:
    unexplained = []
    for path in _sources():
        text = path.read_text(encoding='utf-8')
        lines = text.count('\n')
        docstring = ast.get_docstring(ast.parse(text)) or ''
        if lines > MAX_MODULE_LINES and 'cohesive job' not in ' '.join(docstring.split()):
            unexplained.append(f'{path.relative_to(ROOT)} ({lines} lines)')
    assert unexplained == [], ('modules over 400 lines whose docstring does not say which '
                               'cohesive job they are:\n' + '\n'.join(unexplained))
