"""Hypothesis strategies for ghost_verify's tests (the one place tests draw inputs from)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ghost_verify_test.bags import GateRecordView
from hypothesis import strategies as st

from ghost_core.assessment import BlockThresholds, HysteresisConfig, ThresholdsConfig
from ghost_core.contracts import ActionEmission, CalibrationHistory, PredictionOutcome
from ghost_core.levels import SelfAssessmentLevel
from ghost_core.loop import LoopConfig
from ghost_core.pipeline import PipelineConfig
from ghost_core.prediction import EvaluatorConfig
from ghost_core.samples import BeliefSample, Observation

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
    """W in [1, 16], M and K in [1, min(8, W)] (LoopConfig's bound: at most W)."""
    window = draw(st.integers(1, 16))
    return LoopConfig(
        min_outcomes=draw(st.integers(1, min(8, window))),
        downgrade_threshold=draw(st.integers(1, min(8, window))),
        max_history=window,
    )


def _bounded_loop(m: int, k: int, w: int) -> LoopConfig:
    """M, K and W as drawn, W raised to them (M and K are at most W)."""
    return LoopConfig(m, k, max(w, m, k))


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
    window = max(considered, m, k, 1)  # M and K are at most W
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


#: Gate records' actions: the three of the catalogue and one outside it.
GATE_ACTIONS = (0, 1, 2, 7)
#: Vehicle commands a gate record may carry: none, RTL, LAND, flight termination.
GATE_VEHICLE_COMMANDS = (0, 20, 21, 185)


@st.composite
def gate_record_runs(
    draw: st.DrawFn, cycles: Sequence[ActionEmission], gates: Sequence[str], max_size: int = 12
) -> list[GateRecordView]:
    """Gate records, right or faulty in every field GATE-v1 reads, in the order they were sent.

    Each cites one of `cycles`' actuations (or a stamp with none), quotes its kinds and
    rationale or others, was received fresh or long ago, carries a hold, a NaN hold or a
    moving output, and is sent from just before its cycle's actuation to several cycles after.
    """
    records = []
    for _ in range(draw(st.integers(0, max_size))):
        index = draw(st.integers(0, len(cycles)))
        emission = cycles[min(index, len(cycles) - 1)]
        stamp = emission.stamp_ns + (1 if index == len(cycles) else 0)
        sent = stamp + draw(st.integers(-5_000, 400_000_000))
        has_actuation = draw(st.booleans()) or draw(st.booleans())
        decision, command = emission.decision.kind, emission.command.kind
        if draw(st.integers(0, 3)) == 0:
            decision, command = draw(st.integers(0, 6)), draw(st.integers(0, 6))
        records.append(GateRecordView(
            gate=draw(st.sampled_from(gates)),
            stamp_ns=sent,
            action=draw(st.sampled_from(GATE_ACTIONS)),
            reason='drawn',
            has_actuation=has_actuation,
            actuation_stamp_ns=stamp if has_actuation else 0,
            rationale_sha256=(emission.rationale_sha256 if draw(st.integers(0, 3)) else
                              'f' * 64) if has_actuation else '',
            decision_kind=decision,
            command_kind=command,
            actuation_received_ns=sent - draw(st.sampled_from([0, 400_000_000, 600_000_000])),
            timeout_s=draw(st.sampled_from([0.5, 0.5, 0.5, 0.0])),
            velocity=draw(st.sampled_from([(0.0, 0.0, 0.0), (float('nan'), 0.0, 0.0),
                                           (1.0, 0.0, 0.0)])),
            twist_angular=draw(st.sampled_from([(0.0, 0.0, 0.0), (0.0, 0.0, 0.2)])),
            vehicle_command=draw(st.sampled_from(GATE_VEHICLE_COMMANDS)),
        ))
    return sorted(records, key=lambda record: record.stamp_ns)


# --- agent runs (test_rederive.py) -----------------------------------------------------------


@dataclass(frozen=True)
class AgentRun:
    """A random run of the agent: its configuration, its inputs as received, a mid-run change.

    `inputs` are (log time, belief or fix) in the order received; `change` is None or (cycle
    index, M, K, Q) of a ``ros2 param set`` from that cycle on.
    """

    config: PipelineConfig
    inputs: tuple[tuple[int, BeliefSample | Observation], ...]
    change: tuple[int, int, int, float] | None


def _diagonal(stds: Sequence[float], size: int) -> tuple[float, ...]:
    values = [0.0] * (size * size)
    for i, std in enumerate(stds):
        values[i * size + i] = std * std
    return tuple(values)


_STDS = st.sampled_from([0.05, 0.2, 0.6, 1.5, 4.0, 0.0])


@st.composite
def agent_configs(draw: st.DrawFn) -> PipelineConfig:
    """Any configuration the nodes accept, over the ranges that change what they publish."""
    known = draw(st.sampled_from([0.1, 0.3, 0.5, 1.0]))
    blocks = BlockThresholds(known, known * draw(st.sampled_from([1.0, 2.0, 4.0])))
    return PipelineConfig(
        period_ns=draw(st.sampled_from([50_000_000, 100_000_000, 200_000_000])),
        process_noise_q=draw(st.sampled_from([0.0, 0.05, 0.5])),
        loop=_bounded_loop(draw(st.integers(1, 6)), draw(st.integers(1, 6)),
                           draw(st.integers(1, 12))),
        thresholds=ThresholdsConfig(
            position=blocks, velocity=blocks, orientation=BlockThresholds(0.1, 0.35),
            no_covariance_level=draw(st.sampled_from([SelfAssessmentLevel.UNKNOWN,
                                                      SelfAssessmentLevel.UNCERTAIN])),
            hysteresis=HysteresisConfig(
                recovery_margin=draw(st.sampled_from([0.0, 0.2, 0.5])),
                recovery_dwell_ns=draw(st.sampled_from([0, 200_000_000, 500_000_000])),
                min_level_interval_ns=draw(st.sampled_from([0, 300_000_000, 1_000_000_000])))),
        evaluator=EvaluatorConfig(
            max_observation_lag_ns=draw(st.sampled_from([0, 100_000_000, 250_000_000]))),
        grace_cycles=draw(st.integers(1, 4)),
    )


@st.composite
def agent_runs(draw: st.DrawFn, max_cycles: int = 24) -> AgentRun:
    """A run of up to `max_cycles` beliefs and their fixes, as a recorder received them.

    Beliefs every period (drifting, of any declared quality, sometimes not finite); fixes at
    any stamp of their cycle, received up to past the lag (some late, some missing).
    """
    config = draw(agent_configs())
    period = config.period_ns
    cycles = draw(st.integers(2, max_cycles))
    timed: list[tuple[int, int, BeliefSample | Observation]] = []
    drift = draw(st.sampled_from([0.0, 0.5, 5.0]))
    for index in range(cycles):
        stamp = 1_000_000_000 + index * period
        truth = (index * period / 1e9, 0.0, 10.0)
        offset = (drift * index * period / 1e9, 0.0, 0.0)
        position = tuple(t + o for t, o in zip(truth, offset, strict=True))
        if draw(st.integers(0, 15)) == 0:
            position = (float('nan'), position[1], position[2])
        std = draw(_STDS)
        belief = BeliefSample(
            stamp_ns=stamp, frame_id='map', position=position, velocity=(1.0, 0.0, 0.0),
            pose_covariance=_diagonal([std, std, std, 0.02, 0.02, 0.02], 6),
            twist_covariance=_diagonal([draw(_STDS)] * 3 + [0.01] * 3, 6),
            orientation_xyzw=draw(st.sampled_from([(0.0, 0.0, 0.0, 1.0),
                                                   (0.0, 0.0, 0.3826834, 0.9238795)])))
        timed.append((stamp, 1, belief))
        if draw(st.integers(0, 4)):
            fix_stamp = stamp - draw(st.integers(0, period - 1))
            noise = draw(st.sampled_from([0.0, 0.1, 2.0]))
            fix = Observation(fix_stamp, draw(st.sampled_from(['map', 'map', 'map', 'odom'])),
                              (truth[0] + noise, truth[1] - noise, truth[2]),
                              _diagonal([draw(st.sampled_from([0.1, 0.5, 200.0]))] * 3, 3))
            delay = draw(st.integers(0, config.evaluator.max_observation_lag_ns + 2 * period))
            timed.append((fix_stamp + delay, 0, fix))
    timed.sort(key=lambda item: (item[0], item[1]))
    change = None
    if draw(st.booleans()):
        window = config.loop.max_history  # a change keeps M and K within W (its bound)
        change = (draw(st.integers(0, cycles - 1)), draw(st.integers(1, min(6, window))),
                  draw(st.integers(1, min(6, window))), draw(st.sampled_from([0.0, 0.05, 0.5])))
    return AgentRun(config, tuple((log, sample) for log, _, sample in timed), change)
