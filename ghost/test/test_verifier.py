"""The runtime verifies what it wrote through the auditor's command, and says when it cannot."""

from pathlib import Path
import sys

from input_bags import write_input_bag

from ghost import verifier
from ghost.replay import main as replay_main
from ghost.reporter import ReviewedRun
from ghost_core.scenarios import generate_scenario

CONFIG = Path(__file__).resolve().parents[2] / 'config'


def test_the_verifier_is_the_auditors_command_in_a_child_process() -> None:
    """``python -m ghost_verify BAG OPTIONS`` with this Python: what an auditor runs."""
    assert verifier.verifier_command('/b', '--json', 'r.json') == [
        sys.executable, '-m', 'ghost_verify', '/b', '--json', 'r.json']
    assert verifier.verifier_missing('/b') is None  # this workspace has it


def test_replay_without_the_verifier_says_so_and_how_to_verify_later(
        tmp_path, capsys, monkeypatch) -> None:
    """No ghost_verify installed: the bag is written, exit 1, one line naming the command."""
    monkeypatch.setattr(verifier, 'VERIFIER', 'ghost_verify_not_installed')
    source = write_input_bag(tmp_path / 'in', generate_scenario('smoke'))
    code = replay_main([str(source), '--output', str(tmp_path / 'out'),
                        '--params-file', str(CONFIG / 'ghost.yaml')])
    captured = capsys.readouterr()
    assert code == 1
    assert (tmp_path / 'out' / 'metadata.yaml').is_file()
    assert (f'error: {tmp_path / "out"}: not verified: ghost_verify_not_installed (the auditor) '
            'is not installed') in captured.err
    assert f'run `ghost_verify_not_installed {tmp_path / "out"}`' in captured.err
    assert 'judgement:' in captured.out


def test_ghost_run_requires_coverage_for_the_scenarios_built_for_it(tmp_path, monkeypatch) -> None:
    """The scenarios built to cover both properties make ghost_run require coverage."""
    from ghost import run

    for name in ('smoke', 'drift_then_recovery', 'nominal', 'dropout', 'gnss_outage'):
        plan = run._plan(run._parser().parse_args(['--scenario', name]), '')
        assert plan.require_coverage == generate_scenario(name).parameters.covers_both_properties
    assert run._plan(run._parser().parse_args([]), '').require_coverage  # make demo's default
    seen: list[tuple[str, ...]] = []
    reviewed: list[list[str]] = []
    monkeypatch.setattr(run, 'verify_bag', lambda bag, *options: seen.append(options) or 0)
    monkeypatch.setattr(run, 'review_and_verify', lambda bag, output, reports, options:
                        reviewed.append(options) or ReviewedRun(0, ('VERIFIED',), None))
    (tmp_path / 'bag').mkdir()
    (tmp_path / 'bag' / 'metadata.yaml').write_text('x', encoding='utf-8')
    # With the review (the default), its process verifies; without it, the verifier alone.
    assert run._verify(tmp_path, None, 1, 1, require_coverage=True) == 0
    assert run._verify(tmp_path, None, 1, 1, report=False) == 0
    assert reviewed == [['--require-coverage']] and '--require-coverage' not in seen[0]
