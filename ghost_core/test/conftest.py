"""Make ghost_core importable from the repository root and register this folder's helpers."""

from __future__ import annotations

from pathlib import Path
import sys
import types

HERE = Path(__file__).resolve().parent
# The package root (holding ghost_core/__init__.py) must come before the repository root,
# where the directory ghost_core/ would otherwise be seen as an empty namespace package.
PACKAGE_ROOT = str(HERE.parent)
if PACKAGE_ROOT not in sys.path:
    sys.path.insert(0, PACKAGE_ROOT)

# Every package's test/ folder has a strategies.py; under pytest's default import mode they
# would all be one module called 'strategies'. This folder's helpers are therefore imported
# as ghost_core_test.<name> (e.g. ghost_core_test.strategies), a package-unique name.
if 'ghost_core_test' not in sys.modules:
    _package = types.ModuleType('ghost_core_test')
    _package.__path__ = [str(HERE)]
    sys.modules['ghost_core_test'] = _package
