"""Where verify_all's time goes: the reading pass, each checker alone, the re-derivation.

Reads the bag once into its events (GhostBag.events: decode, hash, group; timed), then feeds
every event to each checker of verify_all (``ghost_verify.single_pass.Checks``) one checker at a
time, timing each. Then, on the same events:

- the re-derivation from the inputs as verify_all's single pass runs it
  (``ghost_verify.single_pass.verify_single_pass``): a ``Rederivation`` fed every cycle, whose
  read of the inputs RECOVERY-v1 follows (``RecoveryChecker.follow``, ``tap_inputs``): its
  own read of the inputs, the agent's re-run, the comparison and RECOVERY-v1's judging;
- for reference: the re-derivation alone (no RECOVERY-v1 on its read), RECOVERY-v1 alone (its
  own read of the inputs, as with ``--no-replay``), and the re-derivation's read of the inputs
  alone (``ghost_bag.recorded_inputs.read_file_inputs`` as it reads them: the statuses
  first, then the beliefs and fixes), so the re-run and comparison cost the rest.

CPU seconds (process time). Prints one JSON line.

    python bench/verify_parts.py BAG
"""

from __future__ import annotations

import argparse
from dataclasses import fields
import json
from pathlib import Path
import sys
import time
from typing import Any

__all__ = ['main', 'parts']

#: The input topics when the recorded configuration does not name them (the recorder's).
_INPUT_TOPICS = {'state': '/state/nav', 'observations': '/observations'}
_STATUS_TOPIC = '/vehicle_status'


def _read_inputs(bag: Path, topics: dict[str, str]) -> int:
    """Read and convert the bag's inputs as the re-derivation does; return how many."""
    from ghost_bag.layout import resolve_bag
    from ghost_bag.recorded_inputs import read_file_inputs

    files = resolve_bag(bag).files
    count = 0
    for state, observations, status in (('', '', _STATUS_TOPIC),
                                        (topics['state'], topics['observations'], '')):
        for path in files:
            for _ in read_file_inputs(path, state, observations, log_time_order=False,
                                      status_topic=status):
                count += 1
    return count


def parts(bag: Path) -> dict[str, Any]:
    """Return the CPU seconds of each part of verify_all on `bag`, and the re-derivation's verdict.

    Keys: cycles, read_s, checkers {name: s}, rederive_with_recovery_s (verify_all's
    re-derivation, RECOVERY-v1 following its read), recovery_follows (whether it did),
    rederive_s, recovery_alone_s, rederive_inputs_s, inputs_read, rederive {replayed, holds,
    cycles_compared, messages_compared, summary}.
    """
    from ghost_verify.bag import GhostBag
    from ghost_verify.events import CycleEvent, GateRecord
    from ghost_verify.recovery import RecoveryChecker
    from ghost_verify.rederive import Rederivation
    from ghost_verify.run_parameters import load_run_parameters
    from ghost_verify.single_pass import Checks

    start = time.process_time()
    for _ in GhostBag(bag).events():
        pass
    read_s = time.process_time() - start
    ghost_bag = GhostBag(bag)
    events = list(ghost_bag.events())
    info = ghost_bag.info
    cycle_events = [event for event in events if isinstance(event, CycleEvent)]
    parameters = load_run_parameters(bag)
    checks = Checks.new(parameters)
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

    # As verify_single_pass: RECOVERY-v1 follows the re-run's read of the inputs.
    start = time.process_time()
    rederivation = Rederivation(bag, parameters)
    recovery = RecoveryChecker()
    take = recovery.follow(parameters)
    topics = recovery.input_topics(parameters)
    follows = take is not None and rederivation.tap_inputs(take, topics['state'],
                                                          topics['observations'])
    for cycle in cycle_events:
        recovery.update(cycle)
        rederivation.update(cycle)
    report = rederivation.result(info)
    recovery.result(bag, parameters, info,
                    followed_every_input=follows and rederivation.read_every_input())
    rederive_with_recovery_s = time.process_time() - start

    start = time.process_time()
    alone = Rederivation(bag, parameters)
    for cycle in cycle_events:
        alone.update(cycle)
    alone.result(info)
    rederive_s = time.process_time() - start

    start = time.process_time()
    recovery = RecoveryChecker()
    for cycle in cycle_events:
        recovery.update(cycle)
    recovery.result(bag, parameters, info)
    recovery_alone_s = time.process_time() - start

    inputs_read = 0
    start = time.process_time()
    if report.replayed:
        inputs_read = _read_inputs(bag, {**_INPUT_TOPICS, **parameters.input_topics})
    rederive_inputs_s = time.process_time() - start

    return {'cycles': len(cycle_events), 'read_s': read_s, 'checkers': costs,
            'rederive_with_recovery_s': rederive_with_recovery_s, 'recovery_follows': follows,
            'rederive_s': rederive_s, 'recovery_alone_s': recovery_alone_s,
            'rederive_inputs_s': rederive_inputs_s, 'inputs_read': inputs_read,
            'rederive': {'replayed': report.replayed, 'holds': report.holds,
                         'cycles_compared': report.cycles_compared,
                         'messages_compared': report.messages_compared,
                         'summary': report.summary()}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('bag', type=Path)
    args = parser.parse_args(argv)
    print(json.dumps(parts(args.bag)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
