"""RECOVERY-v1 on the real flights of ../shared/realdata: the reference agent comes back.

Each log is imported (ghost_import), run through the pure agent with config/ghost.yaml
(ghost.replay.replay_bag) and given the manifest.json Ghost's recorder writes (the run
configuration and the input topics), so that verify_all judges RECOVERY-v1 from the recorded
inputs, as it does by default on a recorded run.
"""

import json
from pathlib import Path
import subprocess

import pytest

from ghost.replay import replay_bag
from ghost_bag.manifest import bag_file_digests, ManifestBuilder, write_manifest
from ghost_nodes.agent_config import pipeline_config_from_files
from ghost_verify.verify import verify_all

ROOT = Path(__file__).resolve().parents[2]
REALDATA = ROOT.parent / 'shared' / 'realdata'
pytestmark = pytest.mark.skipif(not REALDATA.is_dir(),
                                reason='../shared/realdata is not beside this clone')


def _installed(package: str, name: str) -> str:
    from ament_index_python.packages import get_package_prefix

    return str(Path(get_package_prefix(package)) / 'lib' / package / name)


@pytest.mark.parametrize('log, judged', [
    ('esc_status_log.ulg', True), ('14_19_29.ulg', True),
    ('log_123_2024-3-1-14-47-02.ulg', True),
    ('quadrotor_local.ulg', False),  # no GNSS fix: never KNOWN, nothing to come back to
])
def test_real_flights_hold_recovery_v1(tmp_path: Path, log: str, judged: bool) -> None:
    """Every verdict holds; the flights with a valid position are judged, not vacuously."""
    source, bag = tmp_path / 'in', tmp_path / 'ghost'
    imported = subprocess.run([_installed('ghost_px4', 'ghost_import'), str(REALDATA / log),
                               '--output', str(source)], capture_output=True, text=True,
                              timeout=120, check=False)
    assert imported.returncode == 0, imported.stderr
    config = pipeline_config_from_files([ROOT / 'config' / 'ghost.yaml'])
    replay_bag(source, bag, config)
    run_config = {**json.loads(json.dumps(config.to_dict())),
                  'input_topics': {'state': '/state/nav', 'observations': '/observations'}}
    write_manifest(bag, ManifestBuilder(run_config, {'ghost': 'test'}).document(
        bag_file_digests(bag)))
    result = verify_all(bag)
    recovery = result.recovery
    assert recovery is not None and recovery.applicable and recovery.holds, (
        result.summary_lines())
    assert recovery.vacuous is not judged, recovery.summary()
    assert result.baud.holds and result.erur.holds and result.conformance.holds
