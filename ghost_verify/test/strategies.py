"""Hypothesis strategies for ghost_verify's tests (the one place tests draw inputs from)."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

from ghost_core.contracts import CalibrationHistory, PredictionOutcome
from ghost_core.levels import SelfAssessmentLevel
from ghost_core.loop import LoopConfig

#: One representative distance per exclusive bin (within_1, beyond_1, beyond_3, beyond_5).
BIN_DISTANCES = (0.5, 2.0, 4.0, 6.0)
STAMP_NS = 5_000_000_000
PERIOD_NS = 100_000_000

levels = st.sampled_from(list(SelfAssessmentLevel))


@dataclass(frozen=True)
class CycleCase:
    """One generated cycle: M, K, W, the history it sees and its raw level."""

    config: LoopConfig
    history: CalibrationHistory
    raw_level: SelfAssessmentLevel
    stamp_ns: int


def history_from_bins(bins: tuple[int, int, int, int], window: int,
                      stamp_ns: int, infinite: bool = False) -> CalibrationHistory:
    """Return the history whose four exclusive bins hold `bins` outcomes."""
    total = sum(bins)
    if total == 0:
        return CalibrationHistory.empty(window)
    worst = max(distance for count, distance in zip(bins, BIN_DISTANCES, strict=True) if count)
    if infinite and bins[3]:
        worst = float('inf')
    return CalibrationHistory(
        outcomes_considered=total,
        count_within_1_std=bins[0],
        count_beyond_1_std=bins[1],
        count_beyond_3_std=bins[2],
        count_beyond_5_std=bins[3],
        worst_position_mahalanobis=worst,
        worst_orientation_mahalanobis=0.0,
        most_recent_observed_stamp_ns=stamp_ns,
        window_size=window,
    )


@st.composite
def loop_configs(draw: st.DrawFn) -> LoopConfig:
    """M, K in [1, 8] and W in [1, 16]."""
    return LoopConfig(
        min_outcomes=draw(st.integers(1, 8)),
        downgrade_threshold=draw(st.integers(1, 8)),
        max_history=draw(st.integers(1, 16)),
    )


@st.composite
def cycle_cases(draw: st.DrawFn) -> CycleCase:
    """A cycle anywhere in the (drift?, raw KNOWN?) plane, boundaries included."""
    config = draw(loop_configs())
    window = config.max_history
    total = draw(st.integers(0, window))
    beyond_5 = draw(st.integers(0, total))
    beyond_3 = draw(st.integers(0, total - beyond_5))
    beyond_1 = draw(st.integers(0, total - beyond_5 - beyond_3))
    within_1 = total - beyond_5 - beyond_3 - beyond_1
    history = history_from_bins((within_1, beyond_1, beyond_3, beyond_5), window, STAMP_NS,
                                infinite=draw(st.booleans()))
    return CycleCase(config, history, draw(levels), STAMP_NS)


@st.composite
def boundary_cases(draw: st.DrawFn) -> CycleCase:
    """A cycle right at the M or K boundary of the drift condition (ADR-0032 section 4.3)."""
    m = draw(st.integers(1, 8))
    k = draw(st.integers(1, 8))
    beyond = draw(st.sampled_from([k - 1, k]))
    beyond_5 = draw(st.integers(0, beyond))
    considered = max(beyond, draw(st.sampled_from([m - 1, m])))
    window = max(considered, 1)
    bins = (considered - beyond, 0, beyond - beyond_5, beyond_5)
    history = history_from_bins(bins, window, STAMP_NS)
    return CycleCase(LoopConfig(m, k, window), history, draw(levels), STAMP_NS)


def outcome(index: int, distance: float | None) -> PredictionOutcome:
    """The outcome of cycle `index` (1-based); None is a cycle without observation."""
    stamp_ns = STAMP_NS + index * PERIOD_NS
    if distance is None:
        return PredictionOutcome(stamp_ns, 'map', stamp_ns - PERIOD_NS, False, 'no_observation',
                                 (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), 0.0, 0.0)
    return PredictionOutcome(stamp_ns, 'map', stamp_ns - PERIOD_NS, True, 'paired',
                             (1.0, 2.0, 3.0), (1.0, 2.0, 3.0), distance, 0.0,
                             observation_stamp_ns=stamp_ns, position_axes_compared=1,
                             position_normalised_distance=distance)


@st.composite
def recovery_runs(draw: st.DrawFn) -> tuple[LoopConfig, list[float | None]]:
    """A burst of bad outcomes, then good ones for longer than the window: drift, recovery."""
    config = draw(loop_configs())
    bad = draw(st.lists(st.sampled_from([4.0, 6.0, float('inf')]),
                        min_size=config.downgrade_threshold,
                        max_size=config.downgrade_threshold + 3))
    lead = draw(st.lists(st.sampled_from([0.5, 2.0]), max_size=config.min_outcomes))
    good: list[float | None] = draw(st.lists(st.sampled_from([0.5, 2.0, None]),
                                             min_size=config.max_history + 1,
                                             max_size=config.max_history + 4))
    good.extend([0.5] * config.max_history)  # enough observed good outcomes to flush W
    distances: list[float | None] = [*lead, *bad, *good]
    return config, distances


# --- damaged bags (test_fuzz.py) --------------------------------------------------------------

MCAP_MAGIC = b'\x89MCAP0\r\n'


class BaseBag:
    """A small valid bag to damage: its .mcap bytes, metadata.yaml and chunk layout.

    Each span is (record start, content start, record end) of one chunk; `crc` says whether
    the chunks carry CRCs (GhostBagWriter's default) or 0 (rosbags' own writer). A plain
    class, so that Hypothesis prints its repr rather than its 50 kB of bytes.
    """

    def __init__(self, data: bytes, metadata: str, spans: tuple[tuple[int, int, int], ...],
                 crc: bool) -> None:
        self.data, self.metadata, self.spans, self.crc = data, metadata, spans, crc

    def __repr__(self) -> str:
        """Name the bag, not its bytes."""
        return f'BaseBag({len(self.data)} bytes, {len(self.spans)} chunks, crc={self.crc})'


class Damage:
    """A damaged .mcap, what was done, and what the verifier must make of it.

    `must_fail`: the file was damaged where the reader must notice (any byte of a CRC-checked
    chunk record flipped, the file truncated, a chunk removed, duplicated or zeroed), so exit
    0 is forbidden. `must_be_unreadable`: random bytes, exit 3 expected.
    """

    def __init__(self, description: str, data: bytes, with_metadata: bool, *,
                 must_fail: bool = False, must_be_unreadable: bool = False) -> None:
        self.description, self.data, self.with_metadata = description, data, with_metadata
        self.must_fail, self.must_be_unreadable = must_fail, must_be_unreadable

    def __repr__(self) -> str:
        """Name the damage, not its bytes."""
        return (f'Damage({self.description!r}, {len(self.data)} bytes, metadata='
                f'{self.with_metadata}, must_fail={self.must_fail})')


def _flips(base: BaseBag, draw: st.DrawFn) -> Damage:
    count = draw(st.integers(1, 4))
    anywhere = st.integers(0, len(base.data) - 1)
    # Half of the flips land inside a chunk's content, where they matter most.
    in_chunk = st.sampled_from(base.spans).flatmap(
        lambda span: st.integers(span[1], span[2] - 1))
    offsets = draw(st.lists(st.one_of(anywhere, in_chunk), min_size=count, max_size=count,
                            unique=True))
    masks = draw(st.lists(st.integers(1, 255), min_size=count, max_size=count))
    data = bytearray(base.data)
    for offset, mask in zip(offsets, masks, strict=True):
        data[offset] ^= mask
    # A flip anywhere in a checked chunk record is caught (its content by the CRC, its header
    # by the framing and the declared times and sizes), unless the same damage also rewrote
    # that chunk's CRC field (which could zero it: "not computed"). CRCs catch accidents.
    checked = [span for span in base.spans
               if not any(span[0] + 33 <= offset < span[0] + 37 for offset in offsets)]
    must_fail = base.crc and any(span[0] <= offset < span[2]
                                 for span in checked for offset in offsets)
    return Damage(f'flip {list(zip(offsets, masks, strict=True))}', bytes(data),
                  draw(st.booleans()), must_fail=must_fail)


def _truncation(base: BaseBag, draw: st.DrawFn) -> Damage:
    size = draw(st.one_of(st.integers(0, len(base.data) - 1),
                          st.sampled_from(base.spans).flatmap(
                              lambda span: st.integers(span[0], span[2]))))
    return Damage(f'truncate to {size}', base.data[:size], draw(st.booleans()), must_fail=True)


def _chunk_damage(base: BaseBag, draw: st.DrawFn) -> Damage:
    index = draw(st.integers(0, len(base.spans) - 1))
    start, content, end = base.spans[index]
    data = base.data
    action = draw(st.sampled_from(['delete', 'duplicate', 'zero', 'swap']))
    if action == 'delete':
        damaged, must_fail = data[:start] + data[end:], True
    elif action == 'duplicate':
        damaged, must_fail = data[:end] + data[start:end] + data[end:], True
    elif action == 'zero':
        # With a CRC, the content fails it; without, the records vanish and the summary's
        # counts no longer match.
        damaged, must_fail = data[:content] + bytes(end - content) + data[end:], True
    else:
        other = draw(st.integers(0, len(base.spans) - 1))
        first, second = sorted((index, other))
        a, b = base.spans[first], base.spans[second]
        if first == second:
            damaged = data
        else:
            damaged = (data[:a[0]] + data[b[0]:b[2]] + data[a[2]:b[0]] + data[a[0]:a[2]]
                       + data[b[2]:])
        must_fail = False  # same messages in another order: not damage to the content
    return Damage(f'{action} chunk {index}', damaged, draw(st.booleans()), must_fail=must_fail)


@st.composite
def damaged_bags(draw: st.DrawFn, bases: tuple[BaseBag, ...]) -> Damage:
    """Random bytes, or one of `bases` with bytes flipped, truncated or chunks damaged."""
    base = draw(st.sampled_from(bases))
    kind = draw(st.sampled_from(['random', 'magic_random', 'flips', 'flips', 'truncate',
                                 'chunk']))
    if kind == 'random':
        return Damage('random bytes', draw(st.binary(max_size=512)), False,
                      must_be_unreadable=True)
    if kind == 'magic_random':
        data = MCAP_MAGIC + draw(st.binary(max_size=512))
        return Damage('magic and random bytes', data, False, must_be_unreadable=True)
    if kind == 'flips':
        return _flips(base, draw)
    if kind == 'truncate':
        return _truncation(base, draw)
    return _chunk_damage(base, draw)
