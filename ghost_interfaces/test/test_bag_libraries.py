"""ghost_bag is the only package that imports the bag libraries (mcap, mcap_ros2, rosbags).

Every import counts, the ones inside functions too. What another package needs of a bag goes
through ghost_bag's public API (``ghost_bag.mcap_read``, ``ghost_bag.cdr``,
``ghost_bag.manifest``, ``ghost_bag.write``). Product code only: tests may read a bag with an
independent reader to cross-check ghost_bag, and bench/ measures those libraries themselves
(the decode floor).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ('ghost', 'ghost_core', 'ghost_verify', 'ghost_nodes', 'ghost_px4', 'ghost_review')
BAG_LIBRARIES = frozenset({'mcap', 'mcap_ros2', 'rosbags'})

#: Temporary: the one-bag re-derivation and its --jobs split, which the lead is rewriting or
#: deleting (issue 33 §1, §5: one pass that reads the bag once, through ghost_bag). Remove a
#: line when its module goes (the test fails on a line naming no module).
BEING_REWRITTEN = frozenset({
    'ghost_verify/ghost_verify/rederive.py',
    'ghost_verify/ghost_verify/bridge_rederive.py',
    'ghost_verify/ghost_verify/single_pass.py',
})


def bag_library_imports(source: str) -> list[str]:
    """'line: module' for each import of a bag library in the module ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found += [f'{node.lineno}: {name}' for name in names
                  if name.split('.')[0] in BAG_LIBRARIES]
    return found


def test_only_ghost_bag_imports_the_bag_libraries() -> None:
    importers = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package / package).rglob('*.py')):
            imports = bag_library_imports(path.read_text(encoding='utf-8'))
            if imports:
                importers[path.relative_to(ROOT).as_posix()] = imports
    outside = {name: lines for name, lines in importers.items() if name not in BEING_REWRITTEN}
    assert outside == {}, ('import a bag library through ghost_bag: '
                           + '; '.join(f'{n} ({", ".join(v)})' for n, v in outside.items()))
    stale = sorted(name for name in BEING_REWRITTEN if not (ROOT / name).is_file())
    assert stale == [], 'BEING_REWRITTEN names modules that are gone: ' + ', '.join(stale)


def test_the_scan_sees_every_form_of_import() -> None:
    """Plain, dotted, from-imports and imports inside functions count; relative ones do not."""
    source = ('import json\nimport mcap\nfrom rosbags.typesys import Stores\n'
              'def f():\n    import mcap_ros2.decoder\n    from . import rosbags\n')
    assert bag_library_imports(source) == ['2: mcap', '3: rosbags.typesys',
                                           '5: mcap_ros2.decoder']
