"""ghost_replay leaves nothing half-written, and says what to do with a file that is no bag."""

import json
from pathlib import Path

from input_bags import write_input_bag
import pytest

from ghost.replay import main as replay_main
from ghost_bag.layout import ULOG_MAGIC
from ghost_core.scenarios import generate_scenario

pytestmark = pytest.mark.bag

CONFIG = Path(__file__).resolve().parents[2] / 'config'
PARAMS = ['--params-file', str(CONFIG / 'ghost.yaml'), '--no-report']


@pytest.mark.parametrize(('name', 'content', 'says'), [
    ('flight.ulg', ULOG_MAGIC + b'\x00' * 64,
     'this is a PX4 ULog, not a bag: run `ghost_import'),
    ('short.mcap', b'abc', 'not an MCAP file (3 bytes, shorter than its magic)'),
    ('text.mcap', b'hello, this is not a bag\n', 'not a readable MCAP file'),
])
def test_a_bad_input_leaves_nothing_and_the_rerun_works(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: bytes,
        says: str) -> None:
    bad = tmp_path / name
    bad.write_bytes(content)
    output = tmp_path / 'out'
    assert replay_main([str(bad), '--output', str(output), *PARAMS]) == 3
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and says in err and 'Traceback' not in err, err
    assert sorted(path.name for path in tmp_path.iterdir()) == [name]  # no stub, no staging
    good = write_input_bag(tmp_path / 'in', generate_scenario('smoke'))
    assert replay_main([str(good), '--output', str(output), *PARAMS]) == 0
    assert (output / 'metadata.yaml').is_file() and (output / 'manifest.json').is_file()
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(
        [name, 'in', 'out', 'out_reports.json'])


def test_a_signed_replay_verifies_with_its_key_and_writes_its_report(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ghost_replay --signing-key signs the manifest as ghost_run's recorder does.

    The verification checks it, and its report (the same JSON as ghost_run's) is written.
    """
    from ghost_verify.keygen import main as keygen

    assert keygen(['-o', str(tmp_path / 'keys' / 'ghost')]) == 0
    good = write_input_bag(tmp_path / 'in', generate_scenario('smoke'))
    output = tmp_path / 'out'
    assert replay_main([str(good), '--output', str(output), *PARAMS, '--signing-key',
                        str(tmp_path / 'keys' / 'ghost')]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == 'VERIFIED' and any(line.startswith('manifest: signed') for line in lines)
    report = json.loads((tmp_path / 'out_reports.json').read_text(encoding='utf-8'))
    assert report['holds'] is True and report['manifest']['status'] == 'signed'
    assert replay_main([str(good), '--output', str(tmp_path / 'other'), *PARAMS,
                        '--signing-key', str(tmp_path / 'missing')]) == 2


def test_the_recorded_judgement_is_the_replay_s(tmp_path: Path) -> None:
    """ghost_run's judgement lines (read back from the bag) equal ghost_replay's (in memory)."""
    from ghost.replay import replay_bag
    from ghost_bag.recorded_judgements import read_judgements
    from ghost_core.pipeline import PipelineConfig
    from ghost_core.summary import judgement_of, summarize_judgement

    source = write_input_bag(tmp_path / 'in', generate_scenario('drift_then_recovery'))
    result = replay_bag(source, tmp_path / 'out', PipelineConfig())
    recorded = read_judgements(tmp_path / 'out')
    assert recorded == tuple(judgement_of(trace) for trace in result.traces)
    assert summarize_judgement(recorded).lines() == result.summary.lines()


def test_a_truncated_input_bag_names_the_byte(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """A bag cut short says where, as the damage reader finds it, and points at verify_all."""
    good = write_input_bag(tmp_path / 'in', generate_scenario('smoke'))
    data = next(good.glob('*.mcap')).read_bytes()
    cut = tmp_path / 'cut.mcap'
    cut.write_bytes(data[:len(data) // 2])
    assert replay_main([str(cut), '--output', str(tmp_path / 'out'), *PARAMS]) == 3
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and f'the file ends at byte {len(data) // 2}' in err, err
    assert 'verify_all reads what a damaged Ghost bag still holds' in err
    assert not (tmp_path / 'out').exists()
