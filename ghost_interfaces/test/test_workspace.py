"""The workspace: six colcon packages; a second bootstrap redoes nothing that did not change."""

import os
from pathlib import Path
import subprocess

import pytest

# The workspace build (colcon, bootstrap): slow, with the ROS tooling tier.
pytestmark = pytest.mark.ros2_tools

ROOT = Path(__file__).resolve().parents[2]


def test_colcon_finds_every_package() -> None:
    out = subprocess.run(['colcon', 'list', '--names-only'], cwd=ROOT, text=True,
                         capture_output=True, check=True, timeout=60).stdout
    assert sorted(out.split()) == ['ghost', 'ghost_ardupilot', 'ghost_bag', 'ghost_core',
                                   'ghost_interfaces', 'ghost_mavros',
                                   'ghost_nodes', 'ghost_px4', 'ghost_review', 'ghost_verify']


def test_second_bootstrap_installs_and_builds_nothing() -> None:
    """Run after the test command's own bootstrap: nothing changed, so nothing is redone."""
    env = dict(os.environ)
    result = subprocess.run(['bash', str(ROOT / 'scripts' / 'bootstrap.sh')], cwd=ROOT, env=env,
                            text=True, capture_output=True, check=False, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert '[bootstrap] dependencies up to date' in result.stdout
    assert '[bootstrap] workspace up to date' in result.stdout
    assert 'colcon build' not in result.stdout.replace('[bootstrap] colcon build failed', '')
