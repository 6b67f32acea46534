"""Reading and verifying a bag needs neither numpy nor rosbags (the writer's dependencies).

The writer is ghost_bag.write, the only module importing them, and ghost_verify never imports
it: an auditor installs ghost_verify and ghost_bag with mcap, mcap-ros2-support, PyYAML and
cryptography only. These tests run the verifier in a fresh interpreter where importing numpy
or rosbags raises ImportError, installed before anything else is imported; and in one where
they are importable, to see that nothing imports them anyway (nor ghost_bag.write).
"""

from __future__ import annotations

import json
from pathlib import Path
import subprocess
import sys

from ghost_verify_test.bags import FIXTURES, scenario_traces, trace_entries, write_bag
import pytest

HERE = Path(__file__).resolve().parent
ROOTS = [str(HERE.parents[1] / 'ghost_core'), str(HERE.parents[1] / 'ghost_bag'),
         str(HERE.parent)]
BLOCKED = ('numpy', 'rosbags')

# Installed first, before `import ghost_verify`: a finder that refuses the writer's modules.
_PRELUDE = f"""
import importlib.abc
import sys

BLOCKED = {BLOCKED!r}


class _Blocked(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition('.')[0] in BLOCKED:
            raise ImportError(f'{{name}} is blocked: reading a bag must not need it')
        return None


sys.meta_path.insert(0, _Blocked())
sys.path[:0] = {ROOTS!r}
"""

_READ = """
import contextlib
import io
import json

from ghost_verify import GhostBag, verify_all
from ghost_verify.cli import verify_all_main
from ghost_verify.cli import verify_erur_main

bag, real_bag = sys.argv[1], sys.argv[2]
cycles = sum(1 for _ in GhostBag(bag).cycles())
result = verify_all(bag)
with contextlib.redirect_stdout(io.StringIO()):
    main_code = verify_all_main([bag])
err = io.StringIO()
with contextlib.redirect_stderr(err):
    real_code = verify_erur_main([real_bag])
print(json.dumps({
    'cycles': cycles, 'holds': result.holds, 'main': main_code,
    'real_bag': [real_code, err.getvalue()],
    'imported': sorted(name for name in sys.modules if name.partition('.')[0] in BLOCKED),
    'ghost_verify': sys.modules['ghost_verify'].__file__,
}))
"""


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, '-c', _PRELUDE + _READ, *args], text=True,
                          capture_output=True, timeout=120, check=False)


def test_the_blocker_blocks() -> None:
    """The prelude really makes numpy and rosbags unimportable (else the test below is void)."""
    probe = subprocess.run(
        [sys.executable, '-c', _PRELUDE + 'import rosbags.rosbag2'], text=True,
        capture_output=True, timeout=60, check=False)
    assert probe.returncode != 0
    assert 'rosbags.rosbag2 is blocked' in probe.stderr or 'rosbags is blocked' in probe.stderr


@pytest.mark.skipif(not FIXTURES.is_dir(), reason=f'{FIXTURES} (the rosbag2 fixtures) is missing')
def test_a_bag_is_read_and_verified_without_numpy_or_rosbags(tmp_path: Path) -> None:
    """GhostBag, verify_all and the CLIs read a Ghost bag and a real rosbag2 bag without them."""
    bag = write_bag(tmp_path / 'bag', trace_entries(scenario_traces('smoke')))
    result = _run(str(bag), str(FIXTURES / 'talker'))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report['ghost_verify'] == str(HERE.parent / 'ghost_verify' / '__init__.py')
    assert report['imported'] == []
    assert report['cycles'] == len(scenario_traces('smoke'))
    assert report['holds'] is True
    assert report['main'] == 0
    # A bag written by the real `ros2 bag record` is read to the end: it holds no ghost topic.
    code, err = report['real_bag']
    assert code == 3, err
    assert 'no ghost topics' in err


_UNBLOCKED = f"""
import sys

sys.path[:0] = {ROOTS!r}
"""

_WHAT_WAS_IMPORTED = """
import contextlib
import io
import json

from ghost_verify.cli import verify_all_main

with contextlib.redirect_stdout(io.StringIO()):
    code = verify_all_main([sys.argv[1]])
print(json.dumps({
    'code': code,
    'writer': sorted(name for name in sys.modules
                     if name.partition('.')[0] in ('rosbags', 'numpy')
                     or name == 'ghost_bag.write'),
    'ghost_bag': sys.modules['ghost_bag'].__file__,
}))
"""


def test_verifying_a_bag_imports_no_writer_module_even_when_it_is_installed(
        tmp_path: Path) -> None:
    """With rosbags and numpy importable, verifying imports neither, nor ghost_bag.write.

    Not even an import that would fall back when they are missing (the test above cannot
    see one): they are not in sys.modules after verify_all's CLI ran.
    """
    import importlib.util

    assert importlib.util.find_spec('rosbags') is not None  # else the test is void
    bag = write_bag(tmp_path / 'bag', trace_entries(scenario_traces('smoke')))
    result = subprocess.run([sys.executable, '-c', _UNBLOCKED + _WHAT_WAS_IMPORTED, str(bag)],
                            text=True, capture_output=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report['ghost_bag'] == str(HERE.parents[1] / 'ghost_bag' / 'ghost_bag'
                                      / '__init__.py')
    assert report['code'] == 0
    assert report['writer'] == []
