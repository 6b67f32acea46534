"""Honest flights verify, whatever the order Ghost and its inputs start and stop in (issue 34 §1).

Each order is one real run (``startup_orders``): ``ros2 launch ghost closed_loop.launch.py
use_scenario:=false record:=true`` and a standalone ``input_player``, Ghost first or the inputs
first, then the inputs stop first or Ghost is stopped with Ctrl-C while they run; and
``ghost_run --input`` to its end, or interrupted with Ctrl-C. ``verify_all`` exits 0 on every
bag; the cycles the edges of the run leave unverifiable are counted, and the bag records
every agent node's readiness. ``make stress`` runs the same orders many times under load.
"""

from __future__ import annotations

import json
from pathlib import Path
import subprocess
import sys

import pytest
from startup_orders import ORDERS, run_order, write_inputs

pytestmark = pytest.mark.ros2_tools

AGENT_NODES = ('action_emitter', 'calibrator', 'decision_policy', 'forward_predictor',
               'outcome_evaluator', 'self_assessor')


@pytest.fixture(scope='module')
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One input bag for every order: 30 s of gnss_outage at 10 Hz (each run stops early)."""
    return write_inputs(tmp_path_factory.mktemp('inputs') / 'inputs')


@pytest.mark.parametrize('order', sorted(ORDERS))
def test_every_start_and_stop_order_verifies(order: str, inputs: Path, tmp_path: Path,
                                            ros2_env: dict[str, str]) -> None:
    """The bag of each order verifies (exit 0); its readiness and stop are recorded."""
    result = run_order(order, tmp_path / order, ros2_env, inputs)
    assert result.verified, f'{result.verdict}\n{result.logs}'
    report = tmp_path / 'report.json'
    subprocess.run([sys.executable, '-m', 'ghost_verify', str(tmp_path / order / 'bag'),  # noqa: S603
                    '--json', str(report)], env=ros2_env, capture_output=True, timeout=600,
                   check=True)
    edges = json.loads(report.read_text())['edges']
    assert edges['holds'] and edges['ready_ns'] is not None, edges
    assert edges['stop_ns'] is not None, edges  # every order ends with a recorded stop
    ready = {node.split(' ')[0].rsplit('/', 1)[-1]: node for node in edges['ready_nodes']}
    assert sorted(ready) == list(AGENT_NODES), edges
    assert all(node.endswith('(ready)') for node in ready.values()), edges
