"""ghost_review end to end: an input bag reviewed, decisions.csv for pandas.

Bad inputs and usage: test_review_usage.py.
"""

from pathlib import Path
import re
import shutil

from ghost_review_test.review_bags import (
    decisions_of,
    expected_episodes,
    SCENARIO_PARAMS,
    write_scenario_inputs,
)
import pandas
import pytest

from ghost_review.cli import main
from ghost_review.csv_out import COLUMNS
from ghost_review.svg import LABEL_HEIGHT

pytestmark = pytest.mark.bag


@pytest.fixture(scope='module')
def reviewed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """drift_then_recovery's inputs reviewed (replayed with the scenario's configuration)."""
    folder = tmp_path_factory.mktemp('review')
    source = write_scenario_inputs(folder / 'drift')
    params = [arg for path in SCENARIO_PARAMS for arg in ('--params-file', str(path))]
    assert main([str(source), '--output', str(folder / 'out'), *params]) == 0
    return folder / 'out'


def test_an_input_bag_is_replayed_and_reviewed(reviewed: Path) -> None:
    """The flight folder holds the report, the CSV and the replayed bag; the index links it."""
    flight = reviewed / 'drift'
    assert (flight / 'report.html').is_file() and (flight / 'bag' / 'metadata.yaml').is_file()
    index = (reviewed / 'index.html').read_text(encoding='utf-8')
    assert 'href="drift/report.html"' in index
    assert 'PROCEED 56.7 %, HOLD 43.3 %' in index


def test_decisions_csv_reads_in_pandas_one_row_per_cycle_time_first(reviewed: Path) -> None:
    """Pandas reads it; the first column is numeric time from 0; decisions equal the bag's."""
    frame = pandas.read_csv(reviewed / 'drift' / 'decisions.csv')
    assert tuple(frame.columns) == COLUMNS and frame.columns[0] == 'time_s'
    assert pandas.api.types.is_float_dtype(frame['time_s'])
    assert frame['time_s'].iloc[0] == 0.0 and frame['time_s'].is_monotonic_increasing
    decisions = decisions_of(reviewed / 'drift' / 'bag')
    assert list(zip(frame['stamp_ns'], frame['decision'], strict=True)) == decisions
    assert set(frame['decision_code']) == {0, 1}
    assert (frame['rationale_sha256'].str.len() == 64).all()
    assert frame['flight_status'].notna().all()


def test_the_report_lists_exactly_the_episodes_the_decisions_imply(reviewed: Path) -> None:
    """One episodes row per maximal run of a non-PROCEED decision, with its bounds."""
    html = (reviewed / 'drift' / 'report.html').read_text(encoding='utf-8')
    expected = expected_episodes(reviewed / 'drift' / 'bag')
    assert expected
    for kind, start, end in expected:
        assert (f'data-decision="{kind}" data-start-ns="{start}" data-end-ns="{end}"') in html
    assert html.count('<tr class="episode"') == len(expected)
    assert 'drift: ' in html  # the cause chain names the calibrated downgrade


def test_threshold_labels_of_each_sigma_plot_do_not_overlap(reviewed: Path) -> None:
    """KNOWN and UNKNOWN labels of a block (velocity: 0.5 and 0.7 m/s) stay apart."""
    html = (reviewed / 'drift' / 'report.html').read_text(encoding='utf-8')
    labels = [float(y) for y in re.findall(
        r'<text class="ref" x="[\d.]+" y="([\d.]+)" text-anchor="end">(?:UNKNOWN &gt;|KNOWN ≤)',
        html)]
    assert len(labels) == 6  # two per block
    for known, unknown in zip(labels[::2], labels[1::2], strict=True):
        assert abs(known - unknown) >= LABEL_HEIGHT, labels


def test_a_replayed_bag_has_its_configuration_and_a_bag_without_manifest_says_so(
        reviewed: Path, tmp_path: Path) -> None:
    """ghost_replay writes manifest.json: no self-reported warning; without one, said plainly."""
    html = (reviewed / 'drift' / 'report.html').read_text(encoding='utf-8')
    assert 'self-reported' not in html and '(source: manifest.json)' in html
    bare = shutil.copytree(reviewed / 'drift' / 'bag', tmp_path / 'bare')
    (bare / 'manifest.json').unlink()
    assert main([str(bare), '--output', str(tmp_path / 'out')]) == 0
    html = (tmp_path / 'out' / 'bare' / 'report.html').read_text(encoding='utf-8')
    assert 'no manifest.json: the run configuration is not recorded' in html
    assert 'manifest: none (unsigned bag)' in html
