"""Vacuity is said, and can fail (issue 23, part 4): 0 cycles is not plain HOLDS; M, K >= 1."""

from __future__ import annotations

from pathlib import Path

from ghost_verify_test.bags import cycle_entries, raw_assessment, write_bag
import pytest

from ghost_core.cli import ExitCode
from ghost_core.levels import SelfAssessmentLevel
from ghost_core.loop import closed_loop_step, LoopConfig
from ghost_verify import cli
from ghost_verify.cycle_properties import verify_baud, verify_erur
from ghost_verify.verify import verify_all


def _uncertain_bag(tmp_path: Path) -> Path:
    """Three drift-clean cycles whose raw level is UNCERTAIN: neither precondition holds."""
    entries = []
    for index in range(1, 4):
        raw = raw_assessment(index * 100_000_000, SelfAssessmentLevel.UNCERTAIN)
        entries += cycle_entries(raw.stamp_ns, raw=raw,
                                 result=closed_loop_step(raw, [], LoopConfig()))
    return write_bag(tmp_path / 'bag', entries)


def test_a_vacuous_verdict_says_so_in_its_line_and_its_json(tmp_path: Path, capsys) -> None:
    bag = _uncertain_bag(tmp_path)
    for report, version in ((verify_baud(bag), 'BAUD-v1'), (verify_erur(bag), 'ERUR-v1')):
        assert report.holds and report.vacuous
        assert report.summary() == f'{version}: HOLDS vacuously (0 cycles)'
        document = report.to_json()
        assert document['holds'] is True and document['vacuous'] is True
    assert cli.verify_baud_main([str(bag)]) == ExitCode.OK
    assert 'BAUD-v1: HOLDS vacuously (0 cycles)' in capsys.readouterr().out
    assert cli.verify_baud_main([str(bag), '--require-coverage']) == ExitCode.VIOLATED
    lines = verify_all(bag).summary_lines()
    assert 'BAUD-v1: HOLDS vacuously (0 cycles)' in lines
    assert verify_all(bag).to_json()['baud']['vacuous'] is True  # type: ignore[index]


def test_a_covered_verdict_is_not_vacuous(tmp_path: Path) -> None:
    entries = []
    for index in range(1, 4):
        raw = raw_assessment(index * 100_000_000, SelfAssessmentLevel.KNOWN)
        entries += cycle_entries(raw.stamp_ns, raw=raw,
                                 result=closed_loop_step(raw, [], LoopConfig()))
    report = verify_erur(write_bag(tmp_path / 'bag', entries))
    assert report.holds and not report.vacuous and report.to_json()['vacuous'] is False
    assert report.summary() == 'ERUR-v1: HOLDS (3 cycles evaluated)'


@pytest.mark.parametrize('main', [cli.verify_baud_main, cli.verify_erur_main,
                                  cli.verify_all_main])
@pytest.mark.parametrize('option', [['-m', '0'], ['-k', '0'], ['-m', '-1'], ['-k', '-2'],
                                    ['--min-outcomes', '0'], ['--downgrade-threshold', '0']])
def test_m_and_k_below_one_are_usage_errors(tmp_path: Path, capsys, main, option) -> None:
    bag = _uncertain_bag(tmp_path)
    with pytest.raises(SystemExit) as raised:
        main([str(bag), *option])
    assert raised.value.code == ExitCode.USAGE
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'error:' in err and 'Traceback' not in err
