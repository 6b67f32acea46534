"""ghost_run refuses a command line it cannot run before it starts anything: one line, exit 2."""

import importlib.util
from pathlib import Path

import pytest

from ghost.run import main as run_main

pytestmark = pytest.mark.bag


@pytest.mark.parametrize(('argv', 'says'), [
    (['--timeout', '-1'], 'argument --timeout: must be a finite number > 0, got -1'),
    (['--timeout', 'nan'], 'argument --timeout: must be a finite number > 0, got nan'),
    (['--speed', '2'], '--speed needs --input, --px4-ulog or --ardupilot-log'),
    (['--state-topic', '/odom'], '--state-topic needs --input'),
    (['--observations-topic', '/fix', '--px4'], '--observations-topic needs --input'),
    (['--input', 'a', '--px4'], 'argument --px4: not allowed with argument --input'),
])
def test_a_command_line_that_cannot_run_starts_nothing(
        argv: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / 'run'
    with pytest.raises(SystemExit) as stopped:
        code = run_main([*argv, '--run-dir', str(run_dir)])
        raise SystemExit(code)
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith('ghost_run: error: ') and says in err and err.count('\n') == 1, err
    assert not run_dir.exists()


def test_an_unreadable_input_is_exit_3(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / 'short.mcap'
    bad.write_bytes(b'abc')
    assert run_main(['--input', str(bad), '--run-dir', str(tmp_path / 'run')]) == 3
    assert capsys.readouterr().err == ('ghost_run: error: ' + str(bad) + ': not an MCAP file '
                                       '(3 bytes, shorter than its magic)\n')
    assert not (tmp_path / 'run').exists()


def test_px4_ulog_without_px4_msgs_says_how_to_get_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, 'find_spec',
                        lambda name, *rest: None if name == 'px4_msgs' else real(name, *rest))
    log = tmp_path / 'flight.ulg'
    log.write_bytes(b'ULog\x01\x12\x35')
    assert run_main(['--px4-ulog', str(log), '--run-dir', str(tmp_path / 'run')]) == 2
    err = capsys.readouterr().err
    assert '--px4-ulog needs px4_msgs' in err and '`make demo-px4`' in err
