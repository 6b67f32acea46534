"""Every console tool speaks docs/cli.md: --help, --version, and one line for bad input.

The tools are found, not listed: every console script of Ghost's Python distributions that is
not a node (``*.nodes.*`` and the single-process agent are ROS nodes, run by launch), and the
bringup's two programs (``ros2 run ghost ghost_run`` / ``ghost_replay``). Each is run as a
user runs it, as its own process; a bad input must give one line naming the tool, the exit
code docs/cli.md gives (2 usage, 3 unusable input) and no traceback.
"""

from __future__ import annotations

import importlib.metadata
import os
from pathlib import Path
import shutil
import subprocess

import pytest

from ghost_core.cli import EXIT_CODES_HELP, ExitCode

REPO = Path(__file__).resolve().parents[2]
_DISTRIBUTIONS = {'ghost-verify', 'ghost-px4', 'ghost-review', 'ghost-nodes', 'ghost-bag',
                  'ghost-core'}


def _tools() -> dict[str, list[str]]:
    """Tool name -> the command that runs it."""
    tools: dict[str, list[str]] = {}
    for entry in importlib.metadata.entry_points(group='console_scripts'):
        dist = entry.dist.name if entry.dist is not None else ''
        if dist.replace('_', '-') not in _DISTRIBUTIONS:
            continue
        module = entry.value.split(':')[0]
        if '.nodes.' in module or module.endswith('agent_process'):
            continue  # a ROS node, not a console tool
        package = dist.replace('-', '_')
        path = REPO / 'install' / package / 'lib' / package / entry.name  # ros2 run's layout
        found = str(path) if path.is_file() else shutil.which(entry.name)
        assert found is not None, f'{entry.name} is not installed (scripts/bootstrap.sh)'
        tools[entry.name] = [found]
    for program in ('ghost_run', 'ghost_replay'):
        path = REPO / 'install' / 'ghost' / 'lib' / 'ghost' / program
        found = str(path) if path.is_file() else shutil.which(program)
        assert found is not None, f'{program} is not installed (scripts/bootstrap.sh)'
        tools[program] = [found]
    return tools


TOOLS = _tools()


def _run(command: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, 'COLUMNS': '100', 'ROS_DOMAIN_ID': '0'}
    env.pop('GHOST_FAULT_LOG', None)
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False,
                          env=env, cwd=cwd)


def test_the_tools_are_found() -> None:
    assert {'verify_all', 'verify_baud', 'verify_erur', 'trace_decisions', 'ghost_verify',
            'ghost_keygen', 'ghost_import', 'ghost_review', 'ghost_run',
            'ghost_replay'} <= set(TOOLS)


@pytest.mark.parametrize('tool', sorted(TOOLS))
def test_help_ends_with_the_exit_codes_and_version_names_the_tool(tool: str) -> None:
    done = _run([*TOOLS[tool], '--help'])
    assert done.returncode == 0 and done.stderr == '', done.stderr
    assert ' '.join(done.stdout.split()).endswith(' '.join(EXIT_CODES_HELP.split()))
    assert done.stdout.startswith(f'usage: {tool} ')
    done = _run([*TOOLS[tool], '--version'])
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f'{tool} ') and done.stdout.count('\n') == 1


def _inputs(root: Path) -> dict[str, Path]:
    """Bad inputs: missing, an empty folder, text, 3 bytes, a truncated bag, a PX4 ULog."""
    root.mkdir(parents=True, exist_ok=True)
    (root / 'empty').mkdir(exist_ok=True)
    (root / 'notes.txt').write_text('not a bag\n' * 20, encoding='utf-8')
    (root / 'tiny.mcap').write_bytes(b'\x89MC')
    fixture = next((REPO / 'ghost_verify' / 'test').glob('fixtures/**/*.mcap'), None)
    truncated = root / 'truncated.mcap'
    if fixture is not None:
        truncated.write_bytes(fixture.read_bytes()[:600])
    else:
        truncated.write_bytes(b'\x89MCAP0\r\n' + b'\x01' * 40)
    (root / 'flight.ulg').write_bytes(b'ULog\x01\x12\x35\x01' + b'\x00' * 64)
    # One DataFlash FMT message (89 bytes, defining FMT itself) and nothing else.
    fmt = (b'\xa3\x95\x80\x80\x59' + b'FMT\x00' + b'BBnNZ'.ljust(16, b'\x00')
           + b'Type,Length,Name,Format,Columns'.ljust(64, b'\x00'))
    (root / 'flight.bin').write_bytes(fmt)
    return {'missing': root / 'does_not_exist', 'empty folder': root / 'empty',
            'text file': root / 'notes.txt', 'three bytes': root / 'tiny.mcap',
            'truncated bag': truncated, 'PX4 ULog': root / 'flight.ulg',
            'DataFlash log': root / 'flight.bin'}


#: How each tool is given an input (INPUT) and an output (OUT, a fresh path).
_COMMANDS = {
    'verify_all': ['INPUT'], 'verify_baud': ['INPUT'], 'verify_erur': ['INPUT'],
    'ghost_verify': ['INPUT'], 'trace_decisions': ['INPUT'],
    'ghost_replay': ['INPUT', '--output', 'OUT'],
    'ghost_run': ['--input', 'INPUT', '--run-dir', 'OUT'],
    'ghost_review': ['INPUT', '--output', 'OUT'],
    'ghost_import': ['INPUT', '--output', 'OUT'],
}
_BAD = ('missing', 'empty folder', 'text file', 'three bytes', 'truncated bag', 'PX4 ULog',
        'DataFlash log')


@pytest.mark.parametrize('tool', sorted(_COMMANDS))
def test_a_bad_input_is_one_line_exit_3_and_no_traceback(tool: str, tmp_path: Path) -> None:
    inputs = _inputs(tmp_path / 'inputs')
    for name in _BAD:
        if tool == 'ghost_import' and name in ('PX4 ULog', 'DataFlash log'):
            continue  # its inputs; header-only logs are the next test's
        out = tmp_path / f'out_{name.replace(" ", "_")}'
        command = [str(inputs[name]) if arg == 'INPUT' else str(out) if arg == 'OUT' else arg
                   for arg in _COMMANDS[tool]]
        done = _run([*TOOLS[tool], *command], cwd=tmp_path)
        where = f'{tool} on {name}: exit {done.returncode}, stderr {done.stderr!r}'
        assert done.returncode == ExitCode.BAD_INPUT, where
        assert 'Traceback' not in done.stderr + done.stdout, where
        assert done.stderr.startswith(f'{tool}: error: ') and done.stderr.count('\n') == 1, where
        assert not out.exists(), f'{where}: left {out}'


@pytest.mark.parametrize('name', ['PX4 ULog', 'DataFlash log'])
def test_a_header_only_log_is_one_line_for_the_importer(name: str, tmp_path: Path) -> None:
    log = _inputs(tmp_path / 'inputs')[name]
    done = _run([*TOOLS['ghost_import'], str(log), '--output', str(tmp_path / 'bag')])
    assert done.returncode == ExitCode.BAD_INPUT and 'Traceback' not in done.stderr
    assert done.stderr.startswith('ghost_import: error: ')
    assert done.stderr.count('\n') == 1 and not (tmp_path / 'bag').exists()


@pytest.mark.parametrize(('tool', 'arguments'), [
    ('verify_all', ['BAG', '-k', '0']),
    ('verify_all', ['BAG', '--jobs', 'x']),
    ('verify_erur', ['BAG', '-m', '-1']),
    ('ghost_run', ['--timeout', '-1']),
    ('ghost_run', ['--speed', '2']),
    ('ghost_run', ['--state-topic', '/odom']),
    ('ghost_replay', ['BAG']),
    ('ghost_keygen', []),
    ('ghost_review', []),
    ('ghost_import', ['LOG', '--output', 'OUT', '--rate', '0']),
])
def test_a_bad_value_or_a_lone_flag_is_a_usage_error(tool: str, arguments: list[str],
                                                     tmp_path: Path) -> None:
    given = [str(tmp_path / 'bag') if arg == 'BAG' else str(tmp_path / 'x.ulg') if arg == 'LOG'
             else str(tmp_path / 'out') if arg == 'OUT' else arg for arg in arguments]
    done = _run([*TOOLS[tool], *given], cwd=tmp_path)
    where = f'{tool} {arguments}: exit {done.returncode}, stderr {done.stderr!r}'
    assert done.returncode == ExitCode.USAGE, where
    assert done.stderr.startswith(f'{tool}: error: ') and done.stderr.count('\n') == 1, where
    assert 'Traceback' not in done.stderr, where


def test_a_key_prefix_that_exists_is_refused(tmp_path: Path) -> None:
    prefix = tmp_path / 'keys' / 'ghost'
    assert _run([*TOOLS['ghost_keygen'], '-o', str(prefix)]).returncode == ExitCode.OK
    done = _run([*TOOLS['ghost_keygen'], '-o', str(prefix)])
    assert done.returncode == ExitCode.USAGE
    assert done.stderr == f'ghost_keygen: error: {prefix} exists; refusing to overwrite it\n'


#: How the reader goes away: before the tool writes anything (its stdout alone, or both streams
#: as with ``2>&1``: the pipe's read end is closed before the tool starts, so every write meets
#: a closed pipe, whatever the timing), or after reading one line (``2>&1 | head -1``).
_CLOSES = ('stdout before the first line', 'both before the first line',
           'both after the first line')


@pytest.mark.parametrize('close', _CLOSES)
@pytest.mark.parametrize('tool', ['verify_all', 'trace_decisions', 'ghost_replay'])
def test_a_closed_output_stops_the_output_not_the_work(tool: str, close: str,
                                                       tmp_path: Path) -> None:
    """A reader that goes away (``| head``): no traceback, the work's exit code, its files."""
    from input_bags import write_input_bag

    from ghost_core.scenarios import generate_scenario

    source = write_input_bag(tmp_path / 'in', generate_scenario('smoke'))
    bag = tmp_path / 'ghost'
    assert _run([*TOOLS['ghost_replay'], str(source), '-o', str(bag), '--no-report']
                ).returncode == 0
    # trace_decisions with its JSON on stdout and its summary on stderr: both streams written.
    command = {'verify_all': [str(bag), '--json', str(tmp_path / 'r.json')],
               'trace_decisions': [str(bag), '--json', '-'],
               'ghost_replay': [str(source), '-o', str(tmp_path / 'again'), '--no-report']}[tool]
    env = {**os.environ, 'ROS_DOMAIN_ID': '0'}
    read_end, write_end = os.pipe()
    if close.endswith('before the first line'):
        os.close(read_end)
    both = close.startswith('both')
    with subprocess.Popen([*TOOLS[tool], *command], stdout=write_end,
                          stderr=write_end if both else subprocess.PIPE, env=env) as proc:
        os.close(write_end)
        err = '' if both else proc.stderr.read().decode()  # type: ignore[union-attr]
        if close.endswith('after the first line'):
            with os.fdopen(read_end, 'rb') as reader:
                first = reader.readline()
            assert first, f'{tool} printed nothing'
        code = proc.wait(timeout=120)
    assert code == ExitCode.OK and 'Traceback' not in err, f'{tool}, {close}: exit {code}\n{err}'
    written = {'verify_all': tmp_path / 'r.json', 'trace_decisions': None,
               'ghost_replay': tmp_path / 'again' / 'metadata.yaml'}[tool]
    assert written is None or written.is_file()
