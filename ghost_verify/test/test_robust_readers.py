"""Robust and bounded (issue 33 §4): every reader turns a hostile value into a verdict or exit 3.

JSON nested 1e5 deep in a ConfigurationChange or in manifest.json, metadata.yaml nested deep,
a truncated ConfigurationChange or input payload, a decoy ghost_interfaces schema on the
configuration or the vehicle status: each ends in exit 1 (a failing line that names the
reason) or exit 3 (one error line), never exit 4 (an internal fault) nor a traceback. In
multi-bag mode each bag gets its own line, whatever another bag does.
"""

from __future__ import annotations

from collections.abc import Sequence
import json
from pathlib import Path
import shutil

from ghost_verify_test.bags import MSG_DIR, shared_typestore
from ghost_verify_test.run_bags import (
    configuration_change,
    run_config,
    run_messages,
    scenario_inputs,
    STATE,
    Written,
)
import pytest
from rosbags.typesys.store import Typestore

from ghost_bag.errors import InputBagError
from ghost_bag.manifest import (
    bag_file_digests,
    MANIFEST_NAME,
    ManifestBuilder,
    write_manifest,
)
from ghost_bag.recorded_configuration import read_configuration_changes
from ghost_bag.recorded_inputs import read_inputs, STATUS_TYPE
from ghost_bag.write import ghost_typestore, GhostBagWriter
from ghost_core import bounded_json
from ghost_core.cli import ExitCode
from ghost_core.scenarios import generate_scenario
from ghost_core.wire import ns_to_stamp
from ghost_verify import cli, fleet
from ghost_verify.keygen import main as keygen

DEEP = 100_000
SMOKE = generate_scenario('smoke')
CONFIG = SMOKE.parameters.pipeline_config()


def nested(depth: int) -> str:
    return '[' * depth + ']' * depth


def run_written() -> list[Written]:
    written, _ = run_messages(scenario_inputs(SMOKE), CONFIG)
    return written


def record(path: Path, written: Sequence[Written], *,
           raw: Sequence[tuple[str, str, bytes, int]] = (),
           typestore: Typestore | None = None) -> Path:
    """A run bag with manifest.json, as the recorder writes it; `raw` messages as bytes."""
    builder = ManifestBuilder(run_config(CONFIG), {'ghost': 'test'})
    items: list[tuple[str, str, bytes | None, dict[str, object] | None, int]] = [
        (item.topic, item.type_name, None, item.msg, item.log_time_ns) for item in written]
    items += [(topic, type_name, data, None, log) for topic, type_name, data, log in raw]
    items.sort(key=lambda item: item[4])
    with GhostBagWriter(path, typestore=typestore or shared_typestore()) as writer:
        for topic, type_name, data, msg, log_time_ns in items:
            payload = data if data is not None else writer.serialize(type_name, msg or {})
            writer.write(topic, type_name, payload, log_time_ns)
            builder.add(topic, type_name, log_time_ns, payload)
    write_manifest(path, builder.document(bag_file_digests(path)))
    return path


def verify(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str], str]:
    capsys.readouterr()
    code = cli.verify_all_main(argv)
    captured = capsys.readouterr()
    assert 'Traceback' not in captured.err and 'internal fault' not in captured.err
    return code, captured.out.splitlines(), captured.err


def line_of(lines: list[str], prefix: str) -> str:
    (found,) = [line for line in lines if line.startswith(prefix)]
    return found


@pytest.fixture(scope='module')
def written() -> list[Written]:
    return run_written()


def _change(configuration: str, log_time_ns: int) -> Written:
    change = configuration_change('calibrator', -1, {'loop': {}}, log_time_ns)
    return Written(change.topic, change.type_name,
                   {**change.msg, 'configuration': configuration}, log_time_ns)


def test_a_configuration_change_nested_1e5_deep_fails_the_parameters_check(
    tmp_path: Path, written: list[Written], capsys: pytest.CaptureFixture[str],
) -> None:
    change = _change('{"loop": ' + nested(DEEP) + '}', 1_000_000)
    bag = record(tmp_path / 'bag', [*written, change])
    code, lines, _ = verify([str(bag)], capsys)
    assert code == ExitCode.VIOLATED
    assert line_of(lines, 'parameters:') == (
        'parameters: VIOLATED (the recorded configuration changes cannot be used: '
        'configuration change of calibrator at log time 1000000: configuration is not JSON '
        f'(nested {DEEP + 1} deep, more than the {bounded_json.MAX_JSON_DEPTH} levels read))')


def test_a_truncated_configuration_change_fails_the_parameters_check(
    tmp_path: Path, written: list[Written], capsys: pytest.CaptureFixture[str],
) -> None:
    change = configuration_change('calibrator', -1, {'loop': {'min_outcomes': 4}}, 1_000_000)
    data = GhostBagWriter(tmp_path / 'unused', typestore=shared_typestore()).serialize(
        change.type_name, change.msg)
    bag = record(tmp_path / 'bag', written,
                 raw=[(change.topic, change.type_name, data[:len(data) // 2], 1_000_000)])
    code, lines, _ = verify([str(bag)], capsys)
    assert code == ExitCode.VIOLATED
    found = line_of(lines, 'parameters:')
    assert found.startswith('parameters: VIOLATED (the recorded configuration changes cannot '
                            'be used: ') and 'the configuration changes cannot be read' in found


def test_a_decoy_configuration_change_schema_is_refused(
    tmp_path: Path, written: list[Written],
) -> None:
    """A ConfigurationChange whose embedded schema moves its fields is not read as one."""
    msg_dir = tmp_path / 'msg'
    shutil.copytree(MSG_DIR, msg_dir)
    path = msg_dir / 'ConfigurationChange.msg'
    path.write_text(path.read_text().replace('string node\n', 'string decoy\nstring node\n'))
    change = configuration_change('calibrator', -1, {'loop': {'min_outcomes': 4}}, 1_000_000)
    change = Written(change.topic, change.type_name, {**change.msg, 'decoy': ''}, 1_000_000)
    bag = record(tmp_path / 'bag', [*written, change], typestore=ghost_typestore(msg_dir))
    with pytest.raises(Exception, match='not the installed ghost_interfaces definition: '
                                        'ghost_interfaces/ConfigurationChange is'):
        read_configuration_changes(bag)


def test_a_manifest_nested_1e5_deep_is_a_failing_verdict_not_a_fault(
    tmp_path: Path, written: list[Written], capsys: pytest.CaptureFixture[str],
) -> None:
    bag = record(tmp_path / 'bag', written)
    text = (bag / MANIFEST_NAME).read_text(encoding='utf-8')
    assert text.count('"config": {') == 1
    (bag / MANIFEST_NAME).write_text(
        text.replace('"config": {', '"config": {"deep": ' + nested(DEEP) + ',', 1),
        encoding='utf-8')
    code, lines, _ = verify([str(bag)], capsys)
    assert code == ExitCode.VIOLATED
    assert line_of(lines, 'parameters:') == (
        f'parameters: VIOLATED ({MANIFEST_NAME} cannot be read as JSON (nested too deeply))')
    keys = tmp_path / 'keys'
    keys.mkdir()
    assert keygen(['--output', str(keys / 'k')]) == 0
    code, lines, _ = verify([str(bag), '--public-key', str(keys / 'k.pub')], capsys)
    assert code == ExitCode.VIOLATED
    assert line_of(lines, 'manifest:') == (
        # The document, its config, then the nesting.
        f'manifest: {MANIFEST_NAME} is not JSON (nested {DEEP + 2} deep, more than the '
        f'{bounded_json.MAX_JSON_DEPTH} levels read)')


def test_metadata_nested_deep_exits_3_with_one_line(
    tmp_path: Path, written: list[Written], capsys: pytest.CaptureFixture[str],
) -> None:
    bag = record(tmp_path / 'bag', written)
    (bag / 'metadata.yaml').write_text('rosbag2_bagfile_information: ' + nested(DEEP) + '\n')
    code, lines, err = verify([str(bag)], capsys)
    assert code == ExitCode.BAD_INPUT and not lines
    assert err == (f'verify_all: error: {bag / "metadata.yaml"}: cannot be read as YAML: '
                   'nested too deeply\n')


def test_a_truncated_input_payload_is_named_never_a_fault(
    tmp_path: Path, written: list[Written], capsys: pytest.CaptureFixture[str],
) -> None:
    """One /state/nav message cut short: the readers of the inputs say which, and where."""
    first = next(item for item in written if item.topic == STATE[0])
    data = GhostBagWriter(tmp_path / 'unused', typestore=shared_typestore()).serialize(
        first.type_name, first.msg)
    kept = [item for item in written if item is not first]
    bag = record(tmp_path / 'bag', kept,
                 raw=[(first.topic, first.type_name, data[:40], first.log_time_ns)])
    with pytest.raises(InputBagError, match=f'{STATE[0]} message at log time '
                                            f'{first.log_time_ns} cannot be decoded'):
        list(read_inputs(bag))
    code, lines, _ = verify([str(bag)], capsys)
    assert code in (ExitCode.OK, ExitCode.VIOLATED, ExitCode.BAD_INPUT)
    assert any('cannot be decoded' in line for line in lines)


def test_a_decoy_vehicle_status_schema_is_refused_by_the_input_reader(
    tmp_path: Path, written: list[Written],
) -> None:
    msg_dir = tmp_path / 'msg'
    shutil.copytree(MSG_DIR, msg_dir)
    path = msg_dir / 'VehicleStatus.msg'
    path.write_text(path.read_text().replace('uint8 flight_status\n',
                                             'uint8 decoy\nuint8 flight_status\n'))
    status = {'header': {'stamp': ns_to_stamp(1_000_000), 'frame_id': ''}, 'decoy': 0,
              'flight_status': 1, 'mission_status': 1, 'perception_mode': '',
              'source': 'test', 'schema_version': 1}
    bag = record(tmp_path / 'bag', [*written, Written('/vehicle_status', STATUS_TYPE, status,
                                                      1_000_000)],
                 typestore=ghost_typestore(msg_dir))
    with pytest.raises(InputBagError, match='/vehicle_status is not the installed '
                                            'ghost_interfaces definition: '
                                            'ghost_interfaces/VehicleStatus is'):
        list(read_inputs(bag))


def test_each_bag_of_a_fleet_gets_its_own_line_whatever_another_does(
    tmp_path: Path, written: list[Written], capsys: pytest.CaptureFixture[str],
) -> None:
    good = record(tmp_path / 'good', written)
    deep = record(tmp_path / 'deep', written)
    (deep / 'metadata.yaml').write_text('rosbag2_bagfile_information: ' + nested(DEEP) + '\n')
    code, lines, _ = verify([str(good), str(deep), str(good)], capsys)
    assert code == ExitCode.BAD_INPUT
    assert lines[0].startswith(f'{good}: holds (10 cycles')
    assert lines[1] == (f'{deep}: exit 3: {deep / "metadata.yaml"}: cannot be read as YAML: '
                        'nested too deeply')
    assert lines[2].startswith(f'{good}: holds (10 cycles')
    assert lines[3].startswith('total: 3 bags') and lines[3].endswith(f'{deep} (exit 3)')


def test_a_bag_that_trips_an_internal_fault_does_not_cost_the_others_their_verdict(
    tmp_path: Path, written: list[Written], capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    good = record(tmp_path / 'good', written)
    faulty = record(tmp_path / 'faulty', written)
    verify_bag = fleet.verify_bag

    def tripping(bag: str, options: fleet.VerifyOptions) -> fleet.BagVerdict:
        if Path(bag) == faulty:
            raise ZeroDivisionError('a bug')
        return verify_bag(bag, options)

    monkeypatch.setattr(fleet, 'verify_bag', tripping)
    capsys.readouterr()
    code = cli.verify_all_main([str(good), str(faulty), str(good)])
    out, err = capsys.readouterr()
    assert code == ExitCode.FAULT
    lines = out.splitlines()
    assert lines[0].startswith(f'{good}: holds') and lines[2].startswith(f'{good}: holds')
    assert lines[1] == f'{faulty}: exit 4: internal fault (ZeroDivisionError: a bug)'
    assert err == 'verify_all: error: internal fault (ZeroDivisionError: a bug)\n'


@pytest.mark.parametrize('text,depth', [
    ('{}', 1), ('[[1, {"a": [2]}]]', 4), ('"[[[[" ', 0), ('{"a": "]]][[[\\"[[["}', 1),
    ('3', 0), (nested(bounded_json.MAX_JSON_DEPTH), bounded_json.MAX_JSON_DEPTH),
])
def test_json_depth_counts_arrays_and_objects_not_brackets_in_strings(
    text: str, depth: int,
) -> None:
    assert bounded_json.json_depth(text) == depth
    assert bounded_json.loads(text) == json.loads(text)


def test_json_deeper_than_the_limit_is_a_value_error_before_parsing() -> None:
    with pytest.raises(ValueError, match=f'nested {bounded_json.MAX_JSON_DEPTH + 1} deep'):
        bounded_json.loads(nested(bounded_json.MAX_JSON_DEPTH + 1))
    with pytest.raises(ValueError):
        bounded_json.loads('{"a": ')
    assert bounded_json.loads(b'[1]') == [1]
