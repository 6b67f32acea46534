"""Command-line tools: exit codes 0/1/2/3, one-line errors, never a traceback."""

from __future__ import annotations

from collections.abc import Callable, Sequence
import json
import os
from pathlib import Path
import subprocess
import sys

from ghost_verify_test.bags import (
    cycle_entries,
    edit,
    FIXTURES,
    RAW,
    raw_assessment,
    scenario_traces,
    trace_entries,
    with_policy,
    write_bag,
)
import pytest

from ghost_core.cli import ExitCode
from ghost_core.levels import DecisionKind, SelfAssessmentLevel
from ghost_core.loop import closed_loop_step, LoopConfig
from ghost_verify import cli

HERE = Path(__file__).resolve().parent
Main = Callable[[Sequence[str] | None], int]


@pytest.fixture(scope='module')
def bags(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The bags the CLI tests run on, written once."""
    root = tmp_path_factory.mktemp('cli')
    smoke = scenario_traces('smoke')
    uncertain = []
    for index in range(1, 4):
        raw = raw_assessment(index * 100_000_000, SelfAssessmentLevel.UNCERTAIN)
        uncertain += cycle_entries(raw.stamp_ns, raw=raw,
                                   result=closed_loop_step(raw, [], LoopConfig()))
    (root / 'notes.txt').write_text('not a bag\n')
    (root / 'empty.mcap').write_bytes(b'')
    return {
        'smoke': write_bag(root / 'smoke', trace_entries(smoke)),
        'always_hold': write_bag(root / 'always_hold', trace_entries(
            with_policy(smoke, DecisionKind.HOLD, 'always_hold_v1'))),
        'tampered': write_bag(root / 'tampered', edit(
            trace_entries(smoke), RAW[0], smoke[2].stamp_ns,
            lambda m: {**m, 'assessor_id': 'forged'})),
        'uncertain': write_bag(root / 'uncertain', uncertain),
        'text': root / 'notes.txt',
        'empty': root / 'empty.mcap',
        'missing': root / 'no_such_bag',
    }


#: verify_all's RECOVERY-v1 line on a bag with no manifest.json (the test bags).
NO_CONFIGURATION = ('no start configuration is recorded in the bag, and no manifest.json: the '
                    'run configuration is not recorded')
NO_RECOVERY = f'RECOVERY-v1: not applicable ({NO_CONFIGURATION})'
#: Its replay lines on such a bag.
NO_REPLAY = (f'replay: not possible ({NO_CONFIGURATION})',
             'note: replay: what the recording cannot show is a limit, not a failure (--strict '
             'makes it one)')
#: Its warning line on such a bag.
SELF_REPORTED = (
    f"warning: self-reported parameters: {NO_CONFIGURATION} (Ghost's recorder writes it: "
    "ghost_run, ros2 launch ghost); -m, -k, -w not "
    "given, so those parameters are the ones the agent's own messages claim (give them to "
    'judge with yours)')


def run(main: Main, argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_verify_all_prints_one_line_per_check_and_exits_0(
    bags: dict[str, Path], capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(cli.verify_all_main, [str(bags['smoke'])], capsys)
    assert code == ExitCode.OK and err == ''
    lines = out.splitlines()
    assert lines.pop(7).startswith('evidence: HOLDS (')
    assert '\n'.join(lines) + '\n' == (
        'BAUD-v1: HOLDS (6 cycles evaluated)\nERUR-v1: HOLDS (4 cycles evaluated)\n'
        'chain: 10/10 verified\ncycles: 10/10 complete\n'
        'history: 10/10 consistent\nconformance: 10/10 conform\n'
        + '\n'.join((NO_RECOVERY, *NO_REPLAY, SELF_REPORTED))
        + '\nmanifest: none (unsigned bag)\n'
        f'VERIFIED WITH LIMITS: not re-derived ({NO_CONFIGURATION})\n')


def test_a_violated_property_or_a_broken_chain_exits_1(
    bags: dict[str, Path], capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(cli.verify_all_main, [str(bags['always_hold'])], capsys)
    assert code == ExitCode.VIOLATED
    assert 'ERUR-v1: VIOLATED (4 cycles evaluated; 4 q2_decision_not_proceed)' in out
    assert out.splitlines()[-1] == ('NOT VERIFIED: ERUR-v1: VIOLATED (4 cycles evaluated; 4 '
                                    'q2_decision_not_proceed)')
    assert run(cli.verify_baud_main, [str(bags['always_hold'])], capsys)[0] == ExitCode.OK
    assert run(cli.verify_erur_main, [str(bags['always_hold'])], capsys)[0] == ExitCode.VIOLATED
    code, out, _ = run(cli.verify_all_main, [str(bags['tampered'])], capsys)
    assert code == ExitCode.VIOLATED
    assert out.splitlines()[2] == 'chain: VIOLATED (9/10 verified; links: 2 broken)'


def test_json_reports_are_canonical_and_complete(
    bags: dict[str, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    target = tmp_path / 'all.json'
    code, _, _ = run(cli.verify_all_main, [str(bags['smoke']), '--json', str(target)], capsys)
    assert code == 0
    text = target.read_text(encoding='utf-8')
    document = json.loads(text)
    assert text == json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False) + '\n'
    assert document['holds'] is True
    assert document['baud']['property_version'] == 'BAUD-v1'
    assert document['erur']['property_version'] == 'ERUR-v1'
    assert document['trace']['chain_intact'] is True
    code, out, err = run(cli.verify_erur_main, [str(bags['smoke']), '--json', '-'], capsys)
    assert code == 0 and json.loads(out)['cycles_precondition_held'] == 4
    assert err.splitlines()[0] == 'ERUR-v1: HOLDS (4 cycles evaluated)'
    assert err.splitlines()[1].startswith('note: self-reported parameters: ')


def test_trace_decisions_prints_one_line_or_the_json_it_is_asked_for(
    bags: dict[str, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    code, out, err = run(cli.trace_decisions_main, [str(bags['smoke'])], capsys)
    assert (code, out, err) == (0, 'chain: 10/10 verified\n', '')
    code, out, err = run(cli.trace_decisions_main, [str(bags['smoke']), '--json', '-'], capsys)
    assert code == 0 and json.loads(out)['verified_count'] == 10
    assert err == 'chain: 10/10 verified\n'
    target = tmp_path / 'trace.json'
    code, out, _ = run(cli.trace_decisions_main,
                       ['--mcap', str(bags['tampered']), '--json', str(target)], capsys)
    assert code == ExitCode.VIOLATED
    assert json.loads(target.read_text())['broken_count'] == 1
    assert out == 'chain: VIOLATED (9/10 verified; links: 2 broken)\n'


def test_overrides_are_noted_and_coverage_can_be_required(
    bags: dict[str, Path], capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(cli.verify_baud_main, [str(bags['smoke']), '--min-outcomes', '5'], capsys)
    assert code == 0
    assert out.splitlines()[:2] == [
        'BAUD-v1: HOLDS (5 cycles evaluated)',
        'note: min_outcomes: used 5 (from the command line) but the bag recorded 4',
    ]
    assert out.splitlines()[2].startswith('note: self-reported parameters: ')
    assert len(out.splitlines()) == 3
    uncertain = str(bags['uncertain'])
    assert run(cli.verify_all_main, [uncertain], capsys)[0] == 0
    code, out, _ = run(cli.verify_all_main, [uncertain, '--require-coverage'], capsys)
    assert code == ExitCode.VIOLATED
    assert out.splitlines()[-2:] == [
        'precondition never held: BAUD-v1, ERUR-v1 (--require-coverage)',
        'NOT VERIFIED: precondition never held: BAUD-v1, ERUR-v1 (--require-coverage)']
    assert run(cli.verify_erur_main, [uncertain, '--require-coverage'], capsys)[0] == 1
    assert run(cli.verify_erur_main, [str(bags['smoke']), '--require-coverage'], capsys)[0] == 0


@pytest.mark.parametrize('argv', [
    [],
    ['a', 'b'],
    ['bag', '--min-outcomes', '-1'],
    ['bag', '--downgrade-threshold', 'two'],
    ['bag', '--cycle-window', '0'],
    ['bag', '--bogus'],
])
def test_usage_errors_exit_2_with_one_line(
    argv: list[str], capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as caught:
        cli.verify_baud_main(argv)
    assert caught.value.code == ExitCode.USAGE
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and err.startswith('verify_baud: error: ')


def test_trace_decisions_needs_exactly_one_bag(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in ([], ['a', '--mcap', 'b']):
        with pytest.raises(SystemExit) as caught:
            cli.trace_decisions_main(argv)
        assert caught.value.code == ExitCode.USAGE
    assert 'either as an argument or with --mcap' in capsys.readouterr().err


def test_an_output_that_cannot_be_written_exits_2(
    bags: dict[str, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    target = str(tmp_path / 'no' / 'such' / 'dir.json')
    code, _, err = run(cli.verify_all_main, [str(bags['smoke']), '--json', target], capsys)
    assert code == ExitCode.USAGE and err.startswith('verify_all: error: cannot write')


@pytest.mark.parametrize(('name', 'match'), [
    ('missing', 'no such file or directory'),
    ('text', 'not an MCAP file'),
    ('empty', 'empty or truncated'),
])
@pytest.mark.parametrize('main', [cli.verify_baud_main, cli.verify_erur_main,
                                  cli.trace_decisions_main, cli.verify_all_main])
def test_unreadable_inputs_exit_3_with_one_line(
    bags: dict[str, Path], capsys: pytest.CaptureFixture[str], main: Main, name: str,
    match: str,
) -> None:
    code, out, err = run(main, [str(bags[name])], capsys)
    assert code == ExitCode.BAD_INPUT and out == ''
    assert err.count('\n') == 1 and match in err and 'Traceback' not in err


@pytest.mark.parametrize('name', ['talker', 'cdr_test', 'wbag',
                                  'bag_with_topics_and_service_events'])
def test_real_rosbag2_bags_exit_3_for_lack_of_ghost_topics(
    capsys: pytest.CaptureFixture[str], name: str,
) -> None:
    code, out, err = run(cli.verify_erur_main, [str(FIXTURES / name)], capsys)
    assert code == ExitCode.BAD_INPUT and out == ''
    assert err.startswith(f'verify_erur: error: {FIXTURES / name}: no ghost topics')
    assert err.count('\n') == 1


def test_help_documents_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    for main in (cli.verify_baud_main, cli.verify_erur_main, cli.trace_decisions_main,
                 cli.verify_all_main):
        with pytest.raises(SystemExit) as caught:
            main(['--help'])
        assert caught.value.code == 0
        out = capsys.readouterr().out
        assert 'exit codes: 0 holds / done; 1 a verdict does not hold' in out
        assert '3  the input is not a Ghost bag' in out
        assert '--version' in out


def _subprocess(args: list[str]) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    roots = [str(HERE.parent), str(HERE.parents[1] / 'ghost_bag'),
             str(HERE.parents[1] / 'ghost_core')]
    env['PYTHONPATH'] = os.pathsep.join(roots + [env.get('PYTHONPATH', '')])
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env,
                          timeout=60, check=False)


@pytest.mark.parametrize(('tool', 'bag', 'code'), [
    ('verify_all', 'smoke', 0),
    ('verify_erur', 'always_hold', 1),
    ('verify_baud', None, 2),
    ('trace_decisions', 'missing', 3),
    ('verify_baud', 'text', 3),
    ('verify_erur', 'empty', 3),
])
def test_console_entry_points_end_to_end_without_traceback(
    bags: dict[str, Path], tool: str, bag: str | None, code: int,
) -> None:
    """Each tool as a real process, as its console script runs it: exit code, no traceback."""
    argv = [] if bag is None else [str(bags[bag])]
    done = _subprocess(['-c', f'import sys; from ghost_verify.cli import {tool}_main; '
                              f'sys.exit({tool}_main())', *argv])
    assert done.returncode == code, done.stderr
    assert 'Traceback' not in done.stderr
    if code >= 2:
        assert done.stderr.count('\n') == 1


def test_python_dash_m_runs_the_combined_check(bags: dict[str, Path]) -> None:
    done = _subprocess(['-m', 'ghost_verify', str(bags['smoke'])])
    assert done.returncode == 0, done.stderr
    assert [line for line in done.stdout.splitlines()[2:] if not line.startswith(
        'evidence: HOLDS')] == ['chain: 10/10 verified', 'cycles: 10/10 complete',
                                            'history: 10/10 consistent',
                                            'conformance: 10/10 conform', NO_RECOVERY,
                                            *NO_REPLAY, SELF_REPORTED,
                                            'manifest: none (unsigned bag)',
                                            'VERIFIED WITH LIMITS: not re-derived '
                                            f'({NO_CONFIGURATION})']
