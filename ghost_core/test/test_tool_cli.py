"""The shared command-line vocabulary: one-line errors, exit codes, no traceback."""

from __future__ import annotations

import io
from pathlib import Path
import sys

import pytest

from ghost_core.cli import EXIT_CODES_HELP, ExitCode, guarded, positive, ToolParser

pytestmark = pytest.mark.unit


def test_usage_errors_are_one_line_naming_the_tool(capsys: pytest.CaptureFixture[str]) -> None:
    parser = ToolParser('some_tool', 'Does a thing.', 'ghost_core')
    parser.add_argument('--count', type=positive(int), required=True)
    with pytest.raises(SystemExit) as stopped:
        parser.parse_args(['--count', '0'])
    assert stopped.value.code == ExitCode.USAGE
    err = capsys.readouterr().err
    assert err == ('some_tool: error: argument --count: must be a finite number > 0, got 0 '
                   '(see --help)\n')


def test_help_ends_with_the_exit_codes_and_version_is_there(
        capsys: pytest.CaptureFixture[str]) -> None:
    parser = ToolParser('some_tool', 'Does a thing.', 'ghost_core', epilog='More words.')
    words = ' '.join(parser.format_help().split())
    assert words.endswith(f'More words. {EXIT_CODES_HELP}')
    with pytest.raises(SystemExit) as stopped:
        parser.parse_args(['--version'])
    assert stopped.value.code == 0
    assert capsys.readouterr().out.startswith('some_tool ')


@pytest.mark.parametrize('text', ['nan', 'inf', '-1', '0', 'x'])
def test_positive_refuses_what_is_not_a_finite_positive_number(text: str) -> None:
    with pytest.raises(Exception, match='must be a finite number > 0|not a float'):
        positive(float)(text)


def test_a_closed_stdout_does_not_stop_the_work(monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path) -> None:
    class Closed(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError

        def fileno(self) -> int:
            return stream.fileno()

    stream = (tmp_path / 'out').open('w')
    monkeypatch.setattr(sys, 'stdout', Closed())
    done: list[str] = []

    def work() -> int:
        print('first line')          # the reader is gone
        print('second line')
        done.append('files written')
        return ExitCode.VIOLATED

    assert guarded('some_tool', work) == ExitCode.VIOLATED
    assert done == ['files written']
    stream.close()


def test_ctrl_c_and_faults_are_one_line(capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch,
                                        tmp_path: Path) -> None:
    def interrupted() -> int:
        raise KeyboardInterrupt

    def broken() -> int:
        raise ZeroDivisionError('division by zero')

    assert guarded('some_tool', interrupted) == ExitCode.INTERRUPTED
    assert capsys.readouterr().err == 'some_tool: error: interrupted\n'
    monkeypatch.delenv('GHOST_FAULT_LOG', raising=False)
    assert guarded('some_tool', broken) == ExitCode.FAULT
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'Traceback' not in err
    assert err.startswith('some_tool: error: internal fault (ZeroDivisionError: division by '
                          'zero); set GHOST_FAULT_LOG=PATH')
    log = tmp_path / 'fault.log'
    monkeypatch.setenv('GHOST_FAULT_LOG', str(log))
    assert guarded('some_tool', broken) == ExitCode.FAULT
    assert f'the traceback is in {log}' in capsys.readouterr().err
    assert 'Traceback' in log.read_text(encoding='utf-8')


@pytest.mark.parametrize('fault', [False, True])
def test_a_closed_stderr_never_changes_the_exit_code(monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path, fault: bool) -> None:
    """``tool 2>&1 | head -1``: the reader gone, both streams raise; the code is the work's."""
    class Closed(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError

        def flush(self) -> None:
            raise BrokenPipeError

        def fileno(self) -> int:
            return stream.fileno()

    stream = (tmp_path / 'out').open('w')
    monkeypatch.setattr(sys, 'stdout', Closed())
    monkeypatch.setattr(sys, 'stderr', Closed())

    def work() -> int:
        print('the report')
        print('the summary', file=sys.stderr)
        if fault:
            raise ZeroDivisionError('division by zero')  # its one line meets the closed pipe
        return ExitCode.OK

    assert guarded('some_tool', work) == (ExitCode.FAULT if fault else ExitCode.OK)
    stream.close()
