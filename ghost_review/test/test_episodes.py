"""Episodes and cause chains from cycle rows: bounds, causes from recorded reasons."""

import pytest

from ghost_core.profiles import ACCURACY_PROFILES
from ghost_review.episodes import drift_text, episodes, fix_ages, seconds_text
from ghost_review.flight import CycleRow

pytestmark = pytest.mark.bag

S = 1_000_000_000
THRESHOLDS = ACCURACY_PROFILES['gnss'].thresholds()


def _row(t: float, decision: str, raw: str = 'KNOWN', reason: str = 'within_known_threshold',
         sigma: float = 0.3, adjustment: str = 'calibration_within_tolerance',
         fix: float | None = None) -> CycleRow:
    known = ('KNOWN', 0.01, 'within_known_threshold')
    return CycleRow(round(t * S), raw_level=raw,
                    blocks={'position': (raw, sigma, reason), 'velocity': known,
                            'orientation': known},
                    adjusted_level=raw, adjustment_reason=adjustment, min_outcomes=4,
                    downgrade_threshold=2, window_size=32, beyond_3_std=3,
                    fix_stamp_ns=None if fix is None else round(fix * S), decision=decision,
                    rationale_sha256=f'{int(t * 10):064x}')


ROWS = [
    _row(1.0, 'PROCEED', fix=1.0),
    _row(2.0, 'ABSTAIN_UNCERTAIN', 'UNCERTAIN', 'within_uncertain_threshold', 1.71),
    _row(3.0, 'ABSTAIN_UNCERTAIN', 'UNCERTAIN', 'held_by_hysteresis', 0.9),
    _row(4.0, 'HOLD', 'UNCERTAIN', 'held_by_hysteresis', 0.9,
         adjustment='downgrade_from_calibration'),
    _row(5.0, 'PROCEED', fix=5.0),
    _row(6.0, 'HOLD', 'UNCERTAIN', 'unconfirmed_beyond_horizon'),
]


def test_episodes_are_runs_of_one_non_proceed_decision() -> None:
    """Bounds: from the first cycle to the next decision, or to the last cycle (open)."""
    found = episodes(ROWS, THRESHOLDS)
    assert [(e.decision, e.start_ns, e.end_ns, e.open_ended) for e in found] == [
        ('ABSTAIN_UNCERTAIN', 2 * S, 4 * S, False), ('HOLD', 4 * S, 5 * S, False),
        ('HOLD', 6 * S, 6 * S, True)]
    assert found[0].actuation_sha256 == f'{20:064x}' and found[0].actuation_stamp_ns == 2 * S


def test_the_cause_chain_quotes_the_recorded_reason_and_the_threshold() -> None:
    """σ against the KNOWN threshold, then the hold until the next cycle; the drift counts."""
    first, second, third = episodes(ROWS, THRESHOLDS)
    assert first.causes == ('raw UNCERTAIN: position σ 1.71 m > 1 m',
                            'held by hysteresis until 3.0 s')
    assert second.causes == ('raw UNCERTAIN: position held by hysteresis; drift: 3 of K=2 '
                             'beyond 3σ in W=32 (3 in 3-5σ)',)
    assert third.causes == ('raw UNCERTAIN: position unconfirmed: last fix 1.0 s old > '
                            'horizon 3.1 s',)


def test_without_a_known_configuration_no_threshold_is_quoted() -> None:
    """Unknown thresholds: the recorded reason is named instead of a bound."""
    assert episodes(ROWS, None)[0].causes[0] == (
        'raw UNCERTAIN: position σ 1.71 m (within_uncertain_threshold)')


def test_a_heading_beyond_the_bound_quotes_the_heading_and_the_unknown_bound() -> None:
    """The orientation block UNKNOWN by its heading: its σ against uncertain_max_std."""
    known = ('KNOWN', 0.01, 'within_known_threshold')
    row = CycleRow(2 * S, raw_level='UNKNOWN',
                   blocks={'position': known, 'velocity': known,
                           'orientation': ('UNKNOWN', 0.6, 'heading_beyond_uncertain_threshold')},
                   adjusted_level='UNKNOWN', adjustment_reason='calibration_within_tolerance',
                   min_outcomes=4, downgrade_threshold=2, window_size=32, beyond_3_std=0,
                   fix_stamp_ns=None, decision='ABSTAIN_UNCERTAIN', rationale_sha256='0' * 64)
    rows = [_row(1.0, 'PROCEED'), row]
    assert episodes(rows, THRESHOLDS)[0].causes == (
        'raw UNKNOWN: orientation heading σ 0.6 rad > 0.5 rad',)
    assert episodes(rows, None)[0].causes == (
        'raw UNKNOWN: orientation heading σ 0.6 rad (heading_beyond_uncertain_threshold)',)


def test_fix_age_carries_the_last_fix_forward() -> None:
    assert fix_ages(ROWS) == [0.0, 1.0, 2.0, 3.0, 0.0, 1.0]


def test_times_never_read_minus_zero() -> None:
    """An event a hair before the first cycle is at 0.0 s, and a lead that rounds to 0 is 0."""
    assert seconds_text(-0.0001) == '0.0' and seconds_text(-0.04, 2) == '-0.04'
    assert seconds_text(-0.004, 2) == '0.00' and seconds_text(1.25, 1) == '1.2'
    assert seconds_text(0.001, 2, sign=True) == '0.00'


@pytest.mark.parametrize(('within', 'beyond', 'text'), [
    (0, 4, 'drift: 4 of K=3 beyond 3σ in W=32 (4 beyond 5σ)'),
    (3, 0, 'drift: 3 of K=3 beyond 3σ in W=32 (3 in 3-5σ)'),
    (1, 2, 'drift: 3 of K=3 beyond 3σ in W=32 (1 in 3-5σ, 2 beyond 5σ)'),
])
def test_the_drift_text_counts_both_bins_as_the_drift_condition(
        within: int, beyond: int, text: str) -> None:
    """SPEC §6: count_beyond_3_std + count_beyond_5_std against K, each bin named."""
    row = CycleRow(S, downgrade_threshold=3, window_size=32, beyond_3_std=within,
                   beyond_5_std=beyond, adjustment_reason='downgrade_from_calibration')
    assert drift_text(row) == text
