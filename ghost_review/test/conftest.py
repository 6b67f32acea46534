"""Register this folder's helpers as ghost_review_test.<name> (test file names stay unique)."""

from pathlib import Path
import sys
import types

HERE = Path(__file__).resolve().parent

if 'ghost_review_test' not in sys.modules:
    _package = types.ModuleType('ghost_review_test')
    _package.__path__ = [str(HERE)]
    sys.modules['ghost_review_test'] = _package
