"""ghost_replay writes the flight review beside its bag and prints where, unless --no-report."""

from pathlib import Path

from input_bags import write_input_bag
import pytest

from ghost.replay import main as replay_main
from ghost_core.scenarios import generate_scenario

pytestmark = pytest.mark.bag

CONFIG = Path(__file__).resolve().parents[2] / 'config'
PARAMS = ['--params-file', str(CONFIG / 'ghost.yaml'),
          '--params-file', str(CONFIG / 'scenarios' / 'drift_then_recovery.yaml')]


def test_ghost_replay_prints_where_its_report_is(tmp_path: Path, capsys) -> None:
    source = write_input_bag(tmp_path / 'in', generate_scenario('drift_then_recovery'))
    assert replay_main([str(source), '--output', str(tmp_path / 'out'), *PARAMS]) == 0
    report = tmp_path / 'out_review' / 'out' / 'report.html'
    assert f'report: {report}' in capsys.readouterr().out.splitlines()
    html = report.read_text(encoding='utf-8')
    assert 'id="timeline"' in html and 'class="episode"' in html
    # The configuration the replay ran with (recorded in its manifest.json, thresholds matched)
    # is the one the report shows.
    assert '(source: manifest.json)' in html


def test_ghost_replay_no_report_writes_none(tmp_path: Path, capsys) -> None:
    source = write_input_bag(tmp_path / 'in', generate_scenario('smoke'))
    assert replay_main([str(source), '--output', str(tmp_path / 'out'), '--no-report',
                        *PARAMS[:2]]) == 0
    assert 'report:' not in capsys.readouterr().out
    assert not (tmp_path / 'out_review').exists()
