"""Make ghost_verify importable from the repository root and register this folder's helpers."""

from __future__ import annotations

from pathlib import Path
import sys
import types
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:  # the writer's type; the tests get rosbags through ghost_bag.write
    from rosbags.typesys.store import Typestore

HERE = Path(__file__).resolve().parent
# This package and its workspace dependencies, ghost_core and ghost_bag (whose writer,
# ghost_bag.write, only the tests use: they craft bags with it), importable without
# installing: the package roots must come before the repository root, where ghost_verify/,
# ghost_core/ and ghost_bag/ would otherwise be seen as empty namespace packages.
for _root in (HERE.parents[1] / 'ghost_bag', HERE.parents[1] / 'ghost_core', HERE.parent):
    if _root.is_dir() and str(_root) not in sys.path:
        sys.path.insert(0, str(_root))

# Every package's test/ folder has a strategies.py; under pytest's default import mode they
# would all be one module called 'strategies'. This folder's helpers are therefore imported
# as ghost_verify_test.<name> (e.g. ghost_verify_test.strategies), a package-unique name.
if 'ghost_verify_test' not in sys.modules:
    _package = types.ModuleType('ghost_verify_test')
    _package.__path__ = [str(HERE)]
    sys.modules['ghost_verify_test'] = _package

from ghost_verify_test.bags import MSG_DIR, shared_typestore  # noqa: E402


@pytest.fixture(scope='session')
def msg_dir() -> Path:
    """The ghost_interfaces/msg directory of this repository."""
    return MSG_DIR


@pytest.fixture(scope='session')
def typestore() -> Typestore:
    """ROS 2 Jazzy types plus the ghost_interfaces types (built once)."""
    return shared_typestore()
