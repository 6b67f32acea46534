"""README's "On a ROS 2 Jazzy install" works under PEP 668 (externally managed).

The fenced block after the ``ros-install`` marker in README.md is run by bash exactly as written,
in a scratch copy of the workspace, with only what this machine lacks stood in for:

- ``python3`` is an externally managed Python 3.11: Debian/Ubuntu's own (it carries PEP 668's
  EXTERNALLY-MANAGED marker), or else a copy of another 3.11 given that marker. On it,
  ``pip install --user`` (what the README used to say) is refused, which the test checks first.
- ``source /opt/ros/jazzy/setup.bash`` sources a stand-in that does for Python what ROS's does:
  PYTHONPATH onto ROS's Python packages (here the project venv's, where the ROS 2 Jazzy wheels
  and colcon are, minus every distribution of requirements-ros.txt, so that only the README's
  ``pip install`` can bring those) and AMENT_PREFIX_PATH / CMAKE_PREFIX_PATH onto that prefix.
- pip has no index: it installs from wheels of exactly requirements-ros.txt's pins, downloaded
  once from PyPI into ~/.cache/ghost (the test skips when that download is impossible).

ghost_interfaces is left out of the scratch copy: its C/C++ message generation takes most of a
minute and owes nothing to pip or PEP 668. Afterwards, in the same shell, the venv's Python
imports ghost_verify and ghost_bag.write from the new install space and the PyPI-only
packages from the venv and writes a smoke bag with them; the installed ``verify_erur`` (what
``ros2 run`` starts) then runs with the venv's Python and verifies that bag.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
import re
import shutil
import subprocess
import sys
import sysconfig

import pytest

# The README's ROS-install path: slow, with the ROS tooling tier.
pytestmark = pytest.mark.ros2_tools

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / 'README.md'
REQUIREMENTS_ROS = ROOT / 'requirements-ros.txt'
MARKER = '<!-- ros-install:'
ROS_SETUP = '/opt/ros/jazzy/setup.bash'
#: What the scratch workspace holds (ghost_interfaces left out, see the module docstring).
WORKSPACE = ('ghost', 'ghost_core', 'ghost_bag', 'ghost_nodes', 'ghost_px4', 'ghost_verify',
             'launch', 'config',
             'colcon.meta', 'requirements-ros.txt')
PYPI_ONLY_MODULES = ('mcap', 'mcap_ros2', 'rosbags', 'pyulog')

_PROBE = ('import json, os, sys, sysconfig; print(json.dumps([sys.version_info[:2] == (3, 11), '
          'sys.prefix != sys.base_prefix, os.path.isfile(os.path.join('
          'sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED"))]))')


def readme_ros_install_lines() -> list[str]:
    """The lines of the fenced bash block that follows the ros-install marker in README.md."""
    text = README.read_text(encoding='utf-8')
    start = text.index(MARKER)
    block = re.search(r'```bash\n(.*?)```', text[start:], re.DOTALL)
    assert block is not None, 'README.md: no ```bash block after the ros-install marker'
    return block.group(1).splitlines()


def _pins(path: Path) -> list[str]:
    return [line.strip() for line in path.read_text(encoding='utf-8').splitlines()
            if line.strip() and not line.lstrip().startswith('#')]


def _probe(python: str) -> list[bool] | None:
    try:
        out = subprocess.run([python, '-c', _PROBE], capture_output=True, text=True,
                             timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    result: list[bool] = json.loads(out)
    return result


def _externally_managed_python(work: Path) -> Path | None:
    """An externally managed Python 3.11 that is not a venv: the system's, or a marked copy."""
    candidates = ['/usr/bin/python3.11', shutil.which('python3.11'), sys._base_executable]
    unmarked = None
    for candidate in candidates:
        if not candidate or not os.path.exists(candidate):
            continue
        probe = _probe(candidate)
        if probe is None or not probe[0] or probe[1]:
            continue
        if probe[2]:
            return Path(candidate)
        unmarked = unmarked or candidate
    if unmarked is None:
        return None
    # A copy of that interpreter whose standard library (a farm of symlinks) carries the
    # marker, with an empty site-packages of its own: a stand-in for the distribution's Python.
    info = json.loads(subprocess.run(
        [unmarked, '-c', 'import json, sys, sysconfig; print(json.dumps([sys.executable, '
         'sysconfig.get_path("stdlib")]))'], capture_output=True, text=True, timeout=30,
        check=True).stdout)
    executable, stdlib = Path(info[0]).resolve(), Path(info[1])
    base = work / 'marked-python'
    (base / 'bin').mkdir(parents=True)
    shutil.copy2(executable, base / 'bin' / 'python3.11')
    lib = base / 'lib' / stdlib.name
    lib.mkdir(parents=True)
    for entry in stdlib.iterdir():
        if entry.name not in ('site-packages', 'EXTERNALLY-MANAGED'):
            (lib / entry.name).symlink_to(entry)
    (lib / 'site-packages').mkdir()
    (lib / 'EXTERNALLY-MANAGED').write_text(
        '[externally-managed]\nError=a stand-in for a distribution Python (ghost test)\n')
    python = base / 'bin' / 'python3.11'
    probe = _probe(str(python))
    return python if probe == [True, False, True] else None


def _wheels() -> Path:
    """Wheels of every pin of requirements-ros.txt for this interpreter (downloaded once)."""
    digest = hashlib.sha256(REQUIREMENTS_ROS.read_bytes()).hexdigest()[:16]
    cache = Path(os.environ.get('XDG_CACHE_HOME') or Path.home() / '.cache')
    wheels = cache / 'ghost' / 'wheels-ros' / f'cp311-{digest}'
    if wheels.is_dir():
        return wheels
    # Into a folder of this process first, renamed when complete: concurrent runs do not mix.
    partial = wheels.with_name(f'{wheels.name}.{os.getpid()}.partial')
    download = subprocess.run(
        [sys.executable, '-m', 'pip', 'download', '--quiet', '--disable-pip-version-check',
         '--no-deps', '--only-binary=:all:', '-r', str(REQUIREMENTS_ROS), '-d', str(partial)],
        capture_output=True, text=True, timeout=300, check=False)
    if download.returncode != 0:
        shutil.rmtree(partial, ignore_errors=True)
        last = (download.stderr.strip().splitlines() or ['no output'])[-1]
        pytest.skip(f'PyPI not reachable for the requirements-ros.txt wheels: {last}')
    try:
        partial.rename(wheels)
    except OSError:  # another run finished first
        shutil.rmtree(partial, ignore_errors=True)
    return wheels


def _ros_python_path(work: Path) -> Path:
    """The project venv's site-packages (ROS wheels, colcon) without requirements-ros.txt's."""
    from importlib import metadata

    site = Path(sysconfig.get_paths()['purelib'])
    excluded: set[str] = set()
    for pin in _pins(REQUIREMENTS_ROS):
        name = re.split(r'[=;<> ]', pin, maxsplit=1)[0]
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        excluded |= {Path(str(path)).parts[0] for path in dist.files or ()}
    view = work / 'ros-python'
    view.mkdir()
    for entry in site.iterdir():
        if entry.name not in excluded and not entry.name.endswith('.pth'):
            (view / entry.name).symlink_to(entry)
    for module in PYPI_ONLY_MODULES:
        assert not (view / module).exists(), f'{module} is still visible in {view}'
    return view


#: Run by the venv's Python once the README's lines are done: the install space's packages and
#: the PyPI-only ones import, and write a smoke bag for the installed verify_erur.
_REPORT = """
import json, os, sys
import ghost_bag.write, ghost_verify, mcap, mcap_ros2, pyulog, rosbags
from ghost_core.scenarios import generate_scenario, run_scenario
from ghost_core.wire import to_msg_dict
from ghost_bag.write import GhostBagWriter

TOPICS = [('/self_assessment', 'BeliefSelfAssessment', 'raw'),
          ('/prediction_outcomes', 'PredictionOutcome', 'outcome'),
          ('/self_assessment/calibrated', 'CalibratedSelfAssessment', 'calibrated'),
          ('/decisions', 'DecisionRationale', 'rationale'),
          ('/actuations', 'ActionEmission', 'emission'),
          ('/predictions', 'ForwardPrediction', 'prediction')]
with GhostBagWriter(os.environ['GHOST_TEST_BAG'], os.environ['GHOST_TEST_MSG_DIR']) as writer:
    for trace in run_scenario(generate_scenario('smoke', 0)):
        for index, (topic, kind, field) in enumerate(TOPICS):
            contract = getattr(trace, field)
            if contract is not None:
                writer.write(topic, f'ghost_interfaces/msg/{kind}', to_msg_dict(contract),
                             trace.stamp_ns + 1000 * index)
mods = (ghost_verify, ghost_bag.write, mcap, mcap_ros2, rosbags, pyulog)
print('CHECK ' + json.dumps({'prefix': sys.prefix, 'base_prefix': sys.base_prefix,
                             'modules': {m.__name__: m.__file__ or list(m.__path__)[0]
                                         for m in mods}}))
"""
_CHECK = """
python -c "$GHOST_TEST_REPORT"
tool=install/ghost_verify/lib/ghost_verify/verify_erur
echo "SHEBANG $(head -n 1 "$tool")"
"$tool" "$GHOST_TEST_BAG"
"""


def test_readme_block_is_the_venv_flow() -> None:
    """The tested block: ROS first, a --system-site-packages venv, the pins, colcon, install."""
    lines = [line.split('#')[0].strip() for line in readme_ros_install_lines()]
    assert lines == [
        f'source {ROS_SETUP}',
        'python3 -m venv --system-site-packages venv',
        'touch venv/COLCON_IGNORE',
        'source venv/bin/activate',
        'pip install -r requirements-ros.txt',
        'python -m colcon build',
        'source install/setup.bash',
    ]


def test_readme_ros_install_works_under_pep_668(tmp_path: Path) -> None:
    """The README's lines succeed on an externally managed Python; `pip install --user` fails."""
    if sys.prefix == sys.base_prefix:
        pytest.skip('run from the project venv (source scripts/env.sh): it stands in for ROS')
    python = _externally_managed_python(tmp_path)
    if python is None:
        pytest.skip('no Python 3.11 on this machine to stand in for the system Python')
    wheels = _wheels()

    env = {key: value for key, value in os.environ.items()
           if not key.startswith(('PYTHON', 'AMENT_', 'COLCON_', 'CMAKE_', 'ROS_', 'PYTEST_'))
           and key not in ('VIRTUAL_ENV', 'LD_LIBRARY_PATH')}
    project_bins = {str(Path(sys.prefix) / 'bin'), str(ROOT / 'install')}
    system_path = [part for part in env.get('PATH', '').split(os.pathsep)
                   if part and not any(part.startswith(b) for b in project_bins)]
    base_bin = tmp_path / 'system-bin'
    base_bin.mkdir()
    (base_bin / 'python3').symlink_to(python)
    env.update(PATH=os.pathsep.join([str(base_bin), *system_path]),
               PYTHONUSERBASE=str(tmp_path / 'user'), PIP_NO_INDEX='1',
               PIP_FIND_LINKS=str(wheels), PIP_DISABLE_PIP_VERSION_CHECK='1')

    # What the README used to say is refused on this interpreter.
    refused = subprocess.run(
        ['python3', '-m', 'pip', 'install', '--user', 'pyulog==1.3.0'], env=env, cwd=tmp_path,
        capture_output=True, text=True, timeout=60, check=False)
    if 'No module named pip' not in refused.stderr:
        assert refused.returncode != 0
        assert 'externally-managed-environment' in refused.stdout + refused.stderr

    workspace = tmp_path / 'ws'
    workspace.mkdir()
    for name in WORKSPACE:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, workspace / name, symlinks=True,
                            ignore=shutil.ignore_patterns('__pycache__', '.hypothesis'))
        else:
            shutil.copy2(source, workspace / name)
    ros_python = _ros_python_path(tmp_path)
    ros_setup = tmp_path / 'ros_setup.bash'
    ros_setup.write_text(
        "# Stand-in for /opt/ros/jazzy/setup.bash: ROS 2 Jazzy's Python packages and prefix.\n"
        'export ROS_DISTRO=jazzy\n'
        f'export PYTHONPATH="{ros_python}${{PYTHONPATH:+:$PYTHONPATH}}"\n'
        f'export AMENT_PREFIX_PATH="{sys.prefix}${{AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}}"\n'
        f'export CMAKE_PREFIX_PATH="{sys.prefix}${{CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}}"\n')
    env.update(GHOST_TEST_ROS_SETUP=str(ros_setup), GHOST_TEST_REPORT=_REPORT,
               GHOST_TEST_BAG=str(tmp_path / 'bag'),
               GHOST_TEST_MSG_DIR=str(ROOT / 'ghost_interfaces' / 'msg'))
    script = '\n'.join([
        'set -eo pipefail',
        # Only ROS's own setup script is stood in for; every README line runs as written.
        f'source() {{ if [ "$1" = {ROS_SETUP} ]; then builtin source "$GHOST_TEST_ROS_SETUP";'
        ' else builtin source "$@"; fi; }',
        *readme_ros_install_lines(),
        _CHECK,
    ])
    run = subprocess.run(['bash', '-c', script], cwd=workspace, env=env, capture_output=True,
                         text=True, timeout=600, check=False)
    output = run.stdout + run.stderr
    assert run.returncode == 0, output[-6000:]

    venv = workspace / 'venv'
    assert (venv / 'COLCON_IGNORE').is_file()
    assert 'include-system-site-packages = true' in (venv / 'pyvenv.cfg').read_text()
    check = json.loads(next(line for line in run.stdout.splitlines()
                            if line.startswith('CHECK '))[len('CHECK '):])
    assert Path(check['prefix']) == venv
    modules = {name: Path(path) for name, path in check['modules'].items()}
    for name in ('ghost_verify', 'ghost_bag.write'):
        assert (workspace / 'install') in modules[name].parents, (name, modules[name])
    for name in PYPI_ONLY_MODULES:
        assert venv in modules[name].parents, (name, modules[name])
    shebang = next(line for line in run.stdout.splitlines() if line.startswith('SHEBANG '))
    assert Path(shebang.removeprefix('SHEBANG #!').strip()).parent == venv / 'bin'
    assert 'ERUR-v1: HOLDS' in run.stdout
