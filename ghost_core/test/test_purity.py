"""ghost_core is pure: standard library only, and importing it pulls in no ROS or bag library."""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path
import subprocess
import sys

PACKAGE_ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = ('rclpy', 'mcap', 'rosbags', 'ghost_interfaces', 'numpy')

IMPORT_EVERYTHING = f"""
import importlib, json, pkgutil, sys
import ghost_core
names = [m.name for m in pkgutil.walk_packages(ghost_core.__path__, 'ghost_core.')]
for name in names:
    importlib.import_module(name)
forbidden = {FORBIDDEN!r}
print(json.dumps({{
    'imported': sorted(names),
    'file': ghost_core.__file__,
    'leaked': sorted(m for m in sys.modules if m.split('.')[0] in forbidden),
}}))
"""


def test_import_leaves_ros_and_bag_libraries_out() -> None:
    """Importing ghost_core and every submodule in a fresh interpreter loads none of them."""
    env = {**os.environ, 'PYTHONPATH': str(PACKAGE_ROOT)}
    completed = subprocess.run(
        [sys.executable, '-c', IMPORT_EVERYTHING], cwd=PACKAGE_ROOT, env=env,
        capture_output=True, text=True, timeout=60, check=True,
    )
    report = json.loads(completed.stdout.strip().splitlines()[-1])
    assert Path(report['file']).resolve().parent == PACKAGE_ROOT / 'ghost_core'
    assert 'ghost_core.loop' in report['imported']
    assert 'ghost_core.wire' in report['imported']
    assert report['leaked'] == []


def test_sources_import_only_the_standard_library() -> None:
    """Every import statement in ghost_core names the standard library or ghost_core."""
    allowed = set(sys.stdlib_module_names) | {'ghost_core', '__future__'}
    offenders = []
    for path in sorted((PACKAGE_ROOT / 'ghost_core').glob('*.py')):
        for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            offenders += [f'{path.name}: {n}' for n in names if n.split('.')[0] not in allowed]
    assert offenders == []


def test_every_module_opens_with_a_docstring_and_packages_list_all() -> None:
    """Each module has a one-line docstring opening; __init__ lists __all__."""
    import ghost_core

    for path in sorted((PACKAGE_ROOT / 'ghost_core').glob('*.py')):
        docstring = ast.get_docstring(ast.parse(path.read_text(encoding='utf-8')))
        assert docstring, path.name
        assert '\n' not in docstring.split('\n\n')[0], path.name
    assert all(hasattr(ghost_core, name) for name in ghost_core.__all__)
