"""Where verify_all's time goes: the reading pass, then each of its checkers alone.

Reads the bag once into its events (GhostBag.events: decode, hash, group; timed), then feeds
every event to each checker of verify_all (``ghost_verify.single_pass.Checks``) one checker at a
time, timing each. CPU seconds (process time). Prints one JSON line.

    python bench/verify_parts.py BAG
"""

from __future__ import annotations

import argparse
from dataclasses import fields
import json
from pathlib import Path
import sys
import time

__all__ = ['main', 'parts']


def parts(bag: Path) -> dict[str, object]:
    """Return {'cycles', 'read_s', 'checkers': {name: s}} for `bag`."""
    from ghost_verify.bag import GhostBag
    from ghost_verify.events import GateRecord
    from ghost_verify.run_parameters import load_run_parameters
    from ghost_verify.single_pass import Checks

    start = time.process_time()
    for _ in GhostBag(bag).events():
        pass
    read_s = time.process_time() - start
    events = list(GhostBag(bag).events())
    checks = Checks.new(load_run_parameters(bag))
    costs: dict[str, float] = {}
    for item in fields(Checks):
        checker = getattr(checks, item.name)
        if not hasattr(checker, 'update'):
            continue
        start = time.process_time()
        for event in events:
            if isinstance(event, GateRecord):
                record = getattr(checker, 'record', None)
                if record is not None:
                    record(event)
            else:
                checker.update(event)
        costs[item.name] = time.process_time() - start
    cycles = sum(1 for event in events if not isinstance(event, GateRecord))
    return {'cycles': cycles, 'read_s': read_s, 'checkers': costs}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('bag', type=Path)
    args = parser.parse_args(argv)
    print(json.dumps(parts(args.bag)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
