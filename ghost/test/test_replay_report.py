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


def test_the_review_verifies_once_and_both_paths_print_alike(tmp_path: Path, capsys) -> None:
    """With a report, the review's process verifies the bag: same lines, same JSON report.

    The run signed with --signing-key is verified with its public half; the lines are the
    ones --no-report prints (the verifier alone), VERIFIED last, and reports.json is the same
    report.
    """
    import json

    from ghost_verify.keygen import main as keygen

    assert keygen(['-o', str(tmp_path / 'key')]) == 0
    source = write_input_bag(tmp_path / 'in', generate_scenario('drift_then_recovery'))
    runs = {}
    for name, extra in (('reviewed', []), ('alone', ['--no-report'])):
        assert replay_main([str(source), '--output', str(tmp_path / name), *PARAMS,
                            '--signing-key', str(tmp_path / 'key'), *extra]) == 0
        out = capsys.readouterr().out.splitlines()
        runs[name] = (out[out.index(f'reports: {tmp_path / name}_reports.json') + 1:],
                      json.loads((tmp_path / f'{name}_reports.json').read_text('utf-8')))
    lines, document = runs['reviewed']
    assert lines[0] == f'report: {tmp_path}/reviewed_review/reviewed/report.html'
    assert lines[1:] == runs['alone'][0] and lines[-1] == 'VERIFIED'
    assert any(line.startswith('manifest: signed') for line in lines)
    assert document['lines'] == lines[1:] and document['exit_code'] == 0
    alone = runs['alone'][1]
    assert document['holds'] and alone['holds'] and document.keys() == alone.keys()


def test_ghost_replay_no_report_writes_none(tmp_path: Path, capsys) -> None:
    source = write_input_bag(tmp_path / 'in', generate_scenario('smoke'))
    assert replay_main([str(source), '--output', str(tmp_path / 'out'), '--no-report',
                        *PARAMS[:2]]) == 0
    assert 'report:' not in capsys.readouterr().out
    assert not (tmp_path / 'out_review').exists()
