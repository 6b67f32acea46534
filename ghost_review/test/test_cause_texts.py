"""Cause texts count what the drift condition counts (SPEC §6: 3-5σ plus beyond 5σ, against K).

Two flights with a biased fix source (every fix of the nominal scenario moved east): 1.0 m
puts every outcome beyond 5σ, 0.3 m between 3σ and 5σ. Every cause text of decisions.csv and
every episode's drift cause are checked against the calibrated history the bag records, read
here with mcap_ros2 (not with ghost_review).
"""

from pathlib import Path
import re

from ghost_review_test.review_bags import CONFIG, histories_of, write_scenario_inputs
import pandas
import pytest

from ghost_review.cli import main

pytestmark = pytest.mark.bag

DRIFT = re.compile(r'drift: (\d+) of K=(\d+) beyond 3σ in W=(\d+)(?: \(([^)]*)\))?')


def _split(counts: str | None) -> tuple[int, int]:
    """(3-5σ, beyond 5σ) as the text names them."""
    within = re.search(r'(\d+) in 3-5σ', counts or '')
    beyond = re.search(r'(\d+) beyond 5σ', counts or '')
    return int(within.group(1)) if within else 0, int(beyond.group(1)) if beyond else 0


@pytest.fixture(scope='module', params=[(1.0, 'beyond 5σ'), (0.3, 'between 3σ and 5σ')],
                ids=['beyond-5-sigma', 'between-3-and-5-sigma'])
def reviewed(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
             ) -> tuple[Path, str]:
    """The nominal scenario with its fixes moved east, replayed and reviewed."""
    offset, case = request.param
    folder = tmp_path_factory.mktemp('causes')
    source = write_scenario_inputs(folder / 'biased', 'nominal', fix_offset_m=offset)
    assert main([str(source), '--output', str(folder / 'out'), '--params-file',
                 str(CONFIG / 'ghost.yaml')]) == 0
    return folder / 'out' / 'biased', case


def test_every_cause_text_counts_the_recorded_history(reviewed: tuple[Path, str]) -> None:
    """Each drift text: N = count_beyond_3_std + count_beyond_5_std, each bin as recorded."""
    flight, case = reviewed
    history = histories_of(flight / 'bag')
    frame = pandas.read_csv(flight / 'decisions.csv', keep_default_na=False)
    checked = 0
    for stamp, cause in zip(frame['stamp_ns'], frame['cause'], strict=True):
        reason, within, beyond, k, window = history[int(stamp)]
        found = DRIFT.search(cause)
        assert (found is not None) == (reason == 'downgrade_from_calibration'), (stamp, cause)
        if found is None:
            continue
        assert (int(found.group(1)), int(found.group(2)), int(found.group(3))) == (
            within + beyond, k, window), (stamp, cause)
        assert within + beyond >= k
        assert _split(found.group(4)) == (within, beyond), (stamp, cause)
        checked += 1
    assert checked > 0
    drifting = [history[int(stamp)] for stamp in frame['stamp_ns']
                if history[int(stamp)][0] == 'downgrade_from_calibration']
    if case == 'beyond 5σ':
        # The bin the old text ignored carries the drift: the 3-5σ bin alone never reaches K.
        assert all(within < k <= beyond for _, within, beyond, k, _ in drifting)
    else:
        assert all(beyond == 0 and within >= k for _, within, beyond, k, _ in drifting)


def test_every_episode_drift_cause_counts_its_first_cycle(reviewed: tuple[Path, str]) -> None:
    """The report's cause chains: a drift cause names the history of the cycle it starts at."""
    flight, _ = reviewed
    history = histories_of(flight / 'bag')
    html = (flight / 'report.html').read_text(encoding='utf-8')
    episodes = re.findall(r'<tr class="episode"[^>]*data-start-ns="(\d+)"[^>]*>(.*?)</tr>', html)
    assert episodes
    for start, row in episodes:
        first = re.search(r'<span class="cause">(.*?)</span>', row)
        assert first is not None
        found = DRIFT.search(first.group(1))
        if found is None:
            continue
        _, within, beyond, _, _ = history[int(start)]
        assert int(found.group(1)) == within + beyond
        assert _split(found.group(4)) == (within, beyond)
    assert any(DRIFT.search(row) for _, row in episodes)


def test_a_flight_that_exercises_every_property_is_plainly_verified(
        reviewed: tuple[Path, str]) -> None:
    """Drift found, recovery owed, fixes independent of the belief: VERIFIED, green, no limit."""
    flight, _ = reviewed
    body = (flight / 'report.html').read_text(encoding='utf-8').split('<body>', 1)[1]
    assert body.startswith('<header id="glance"><p class="glance"><span id="verdict" '
                           'class="verdict pass">VERIFIED</span></p>'), body[:300]
    assert 'vacuous' not in body.split('</header>', 1)[0]
