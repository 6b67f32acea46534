"""Make ghost_bag and ghost_core (the tests' scenarios) importable from the repository root."""

from __future__ import annotations

from pathlib import Path
import sys

HERE = Path(__file__).resolve().parent
# The package roots must come before the repository root, where ghost_bag/ and ghost_core/
# would otherwise be seen as empty namespace packages.
for _root in (HERE.parents[1] / 'ghost_core', HERE.parent):
    if _root.is_dir() and str(_root) not in sys.path:
        sys.path.insert(0, str(_root))
