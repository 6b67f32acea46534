"""The outcome sequencer and calibration joiner decide cycles the same way in any arrival order."""

import itertools
import random

from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

from ghost_core.sequencing import CalibrationJoiner, OutcomeSequencer, StampedOutcome

P = 100  # period, ns
LAG = 250  # fixes may arrive until a belief 2.5 periods later has


def _feed(events: list[tuple[str, int]], grace: int = 3, lag: int = LAG,
          flush: bool = False) -> list[tuple[int, object, object]]:
    seq: OutcomeSequencer[str, str] = OutcomeSequencer(grace_cycles=grace,
                                                       max_observation_lag_ns=lag)
    out = []
    for kind, stamp in events:
        if kind == 'belief':
            done = seq.on_belief(stamp)
        elif kind == 'prediction':
            done = seq.on_prediction(stamp, f'pred@{stamp}')
        else:
            done = seq.on_observation(stamp, f'obs@{stamp}')
        out += [(c.stamp_ns, c.prediction, c.observation) for c in done]
    if flush:
        out += [(c.stamp_ns, c.prediction, c.observation) for c in seq.flush()]
    return out


def _streams(cycles: int, observed: set[int]) -> dict[str, list[tuple[str, int]]]:
    """Per-topic FIFO streams of a run: beliefs 1..n, predictions made at 1..n, observations."""
    return {
        'belief': [('belief', t * P) for t in range(1, cycles + 1)],
        'prediction': [('prediction', t * P) for t in range(1, cycles + 1)],
        'observation': [('observation', t * P) for t in range(1, cycles + 1) if t in observed],
    }


def _interleave(streams: dict[str, list[tuple[str, int]]], rng: random.Random,
                grace: int = 3) -> list:
    """Merge the streams at random, keeping each topic's own order (what DDS guarantees).

    A cycle's prediction and observation come before the belief ``grace`` cycles later (the
    sequencer's documented assumption: inputs arrive within the lag).
    """
    queues = {k: list(v) for k, v in streams.items()}
    merged = []
    while any(queues.values()):
        choices = [k for k, v in queues.items() if v]
        if queues['belief']:
            next_belief = queues['belief'][0][1]
            late = any(q and q[0][1] <= next_belief - (grace - 1) * P
                       for k, q in queues.items() if k != 'belief')
            if late and len(choices) > 1:
                choices.remove('belief')
        k = rng.choice(choices)
        merged.append(queues[k].pop(0))
    return merged


def test_in_order_run_pairs_every_cycle() -> None:
    """Each cycle gets the prediction made at the previous cycle and its own fix."""
    streams = _streams(5, observed={1, 2, 3, 4, 5})
    events = list(itertools.chain.from_iterable(
        zip(streams['observation'], streams['belief'], streams['prediction'], strict=True)))
    out = _feed(events)
    assert [s for s, *_ in out] == [100, 200, 300, 400, 500]
    assert out[0] == (100, None, 'obs@100')  # the first cycle has no prediction
    assert out[1] == (200, 'pred@100', 'obs@200')


@settings(max_examples=200, deadline=None)
@given(cycles=st.integers(2, 12), seed=st.integers(0, 10_000),
       dropped=st.sets(st.integers(1, 11), max_size=4))
def test_any_fifo_interleaving_gives_the_same_cycles(cycles: int, seed: int,
                                                     dropped: set[int]) -> None:
    """Same streams, any cross-topic order: the same resolved cycles, in cycle order."""
    observed = set(range(1, cycles + 1)) - dropped | {cycles}
    streams = _streams(cycles, observed)
    reference = _feed(_interleave(streams, random.Random(0)), flush=True)
    shuffled = _feed(_interleave(streams, random.Random(seed)), flush=True)
    assert shuffled == reference
    assert [s for s, *_ in shuffled] == [t * P for t in range(1, cycles + 1)]
    for stamp, pred, obs in shuffled:
        t = stamp // P
        assert (obs is not None) == (t in observed)
        assert (pred is None) == (t == 1)


def test_missing_observation_is_resolved_by_the_next_one() -> None:
    """A fix stamped after the cycle closes its window: the cycle had none."""
    out = _feed([('belief', 100), ('belief', 200), ('prediction', 100), ('observation', 100),
                 ('observation', 300)])
    assert out == [(100, None, 'obs@100'), (200, 'pred@100', None)]


def test_grace_cycles_bound_the_wait_for_a_missing_input() -> None:
    """A missing prediction is given up after grace beliefs, a missing fix after the lag."""
    events = [('belief', 100), ('observation', 100)] + [('belief', t * P) for t in (2, 3, 4, 5)]
    out = _feed(events, grace=3)
    assert out == [(100, None, 'obs@100'), (200, None, None)]


def test_a_fix_between_beliefs_belongs_to_the_next_cycle() -> None:
    """A fix stamped in (t', t] is cycle t's, even when it arrives after belief t."""
    out = _feed([('belief', 100), ('prediction', 100), ('belief', 200), ('prediction', 200),
                 ('observation', 160), ('belief', 300), ('observation', 320)])
    assert out == [(100, None, None), (200, 'pred@100', 'obs@160'), (300, 'pred@200', None)]


def test_the_latest_fix_of_a_window_is_used() -> None:
    """Two fixes in one cycle's window: the later one counts, the earlier is superseded."""
    seq: OutcomeSequencer[str, str] = OutcomeSequencer(3, LAG)
    seq.on_belief(100)
    seq.on_prediction(100, 'p')
    # A fix stamped after cycle 100 closes its window: 100 had none.
    assert [(c.stamp_ns, c.observation) for c in seq.on_observation(130, 'a')] == [(100, None)]
    assert seq.on_observation(170, 'b') == []
    assert seq.on_belief(200) == []
    done = seq.on_observation(210, 'c')
    assert [(c.stamp_ns, c.prediction, c.observation) for c in done] == [(200, 'p', 'b')]
    assert seq.superseded == 1
    assert [(c.stamp_ns, c.observation) for c in seq.flush()] == []


def test_a_fix_later_than_the_lag_is_not_used() -> None:
    """Once a belief lag past the cycle arrived, the window is closed: a later fix is late."""
    out = _feed([('belief', 100), ('prediction', 100), ('belief', 200), ('prediction', 200),
                 ('belief', 300), ('prediction', 300), ('belief', 460), ('observation', 190)],
                lag=250)
    assert out[:2] == [(100, None, None), (200, 'pred@100', None)]
    seq: OutcomeSequencer[str, str] = OutcomeSequencer(3, 250)
    for stamp in (100, 200, 460):
        seq.on_belief(stamp)
        seq.on_prediction(stamp, 'p')
    assert seq.on_observation(150, 'late') == []
    assert (seq.late, seq.last_late_ns) == (1, 150)


def test_a_fix_within_the_lag_is_waited_for() -> None:
    """Belief t arrived, its fix not yet: the cycle waits until t + lag."""
    seq: OutcomeSequencer[str, str] = OutcomeSequencer(3, 250)
    seq.on_belief(100)
    seq.on_prediction(100, 'p')
    assert seq.on_belief(200) == []
    assert seq.pending_cycles == 2
    done = seq.on_observation(200, 'fix')
    assert [(c.stamp_ns, c.prediction, c.observation) for c in done] == [
        (100, None, None), (200, 'p', 'fix')]


def test_repeated_or_older_fixes_are_not_used() -> None:
    """As the nodes' stamp guard: the first fix of a stamp counts, a repeat or an older one not."""
    seq: OutcomeSequencer[str, str] = OutcomeSequencer(3, LAG)
    seq.on_belief(100)
    seq.on_prediction(100, 'p')
    seq.on_belief(200)
    seq.on_prediction(200, 'q')
    done = seq.on_observation(150, 'first')  # closes cycle 100's window
    assert seq.on_observation(150, 'repeat') == [] and seq.on_observation(120, 'older') == []
    assert seq.stale == 2
    done += seq.flush()
    assert [(c.stamp_ns, c.observation) for c in done] == [(100, None), (200, 'first')]


def test_repeated_or_old_beliefs_are_not_new_cycles() -> None:
    seq: OutcomeSequencer[str, str] = OutcomeSequencer(grace_cycles=3,
                                                       max_observation_lag_ns=50)
    seq.on_belief(200)
    assert seq.on_belief(200) == [] and seq.on_belief(100) == []
    assert seq.pending_cycles == 1


def test_sequencer_rejects_bad_configuration() -> None:
    with pytest.raises(ValueError, match='grace_cycles'):
        OutcomeSequencer(grace_cycles=0, max_observation_lag_ns=1)
    with pytest.raises(ValueError, match='max_observation_lag_ns'):
        OutcomeSequencer(grace_cycles=1, max_observation_lag_ns=-1)


def _outcome(t: int, observed: bool = True) -> StampedOutcome[str]:
    return StampedOutcome(t, observed, f'o{t}')


def test_joiner_waits_for_the_cycles_own_outcome() -> None:
    joiner: CalibrationJoiner[str, str] = CalibrationJoiner(max_history=3)
    assert joiner.on_assessment(1, 'r1') == []
    assert joiner.on_outcome(_outcome(1)) == [('r1', ['o1'])]
    assert joiner.on_outcome(_outcome(2)) == []
    assert joiner.on_outcome(_outcome(3)) == []
    # The outcome came before the assessment: released at once, with outcomes <= t only.
    assert joiner.on_assessment(2, 'r2') == [('r2', ['o1', 'o2'])]
    assert joiner.on_assessment(3, 'r3') == [('r3', ['o1', 'o2', 'o3'])]


def test_joiner_keeps_only_the_window_of_old_outcomes() -> None:
    joiner: CalibrationJoiner[str, str] = CalibrationJoiner(max_history=2)
    for t in range(1, 50):
        joiner.on_assessment(t, f'r{t}')
        (raw, outcomes), = joiner.on_outcome(_outcome(t, observed=t % 3 != 0))
        assert raw == f'r{t}'
        observed_before = [f'o{s}' for s in range(1, t) if s % 3 != 0]
        # What the window can still need: the last W observed outcomes before t, then t's.
        assert outcomes == observed_before[-2:] + [f'o{t}']


def test_joiner_drops_an_assessment_whose_outcome_can_no_longer_come() -> None:
    joiner: CalibrationJoiner[str, str] = CalibrationJoiner(max_history=4)
    joiner.on_outcome(_outcome(5))
    assert joiner.on_assessment(3, 'r3') == []
    assert joiner.dropped == [3]
