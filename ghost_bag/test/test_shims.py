"""The shims of the bag libraries' private APIs still fit the installed libraries.

Ghost uses two private APIs, each through one documented shim (its module docstring names
what it relies on): rosbags' MCAP storage plugin in ``ghost_bag.write`` and mcap_ros2's schema
parser in ``ghost_bag.mcap_ros2_shim``. mcap itself is used through its public API only. These
tests fail, saying what to do, when an installed library is not the version the shim was
checked against (requirements-ros.txt's pin), or when a private name it relies on is gone or
has another signature; and no other module may import a private name of these libraries.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
import importlib.metadata
import inspect
import io
from pathlib import Path
import re
import struct
from types import ModuleType

from mcap.records import Chunk, Header
from mcap.stream_reader import StreamReader
import pytest
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.rosbag2.storage_mcap import McapWriter
from rosbags.typesys import get_typestore, Stores

from ghost_bag import mcap_ros2_shim, write

ROOT = Path(__file__).resolve().parents[2]
REQUIREMENTS = ROOT / 'requirements-ros.txt'
#: Where the run-time Python of Ghost lives (what must not use a private name but in a shim).
SOURCES = ('ghost_bag/ghost_bag', 'ghost_verify/ghost_verify', 'ghost_nodes/ghost_nodes',
           'ghost_px4/ghost_px4', 'ghost_core/ghost_core', 'launch')
#: Library (import name) -> the one module allowed to import its private names.
SHIMS = {'rosbags': 'ghost_bag/ghost_bag/write.py',
         'mcap_ros2': 'ghost_bag/ghost_bag/mcap_ros2_shim.py',
         'mcap': None}


def _pin(distribution: str) -> str:
    for line in REQUIREMENTS.read_text(encoding='utf-8').splitlines():
        name, _, version = line.split('#')[0].split(';')[0].strip().partition('==')
        if re.sub(r'[-_.]+', '-', name).lower() == distribution:
            return version.strip()
    raise AssertionError(f'{distribution} is not pinned in {REQUIREMENTS.name}')


def _check_version(distribution: str, shim: ModuleType, checked: str) -> None:
    pin = _pin(distribution)
    installed = importlib.metadata.version(distribution)
    where = f'{shim.__name__} (its docstring names the private API it relies on)'
    assert installed == pin, (
        f'{distribution} {installed} is installed but requirements-ros.txt pins {pin}: '
        f'install the pin, or re-check the shim in {where} against {installed} before '
        'moving the pin')
    assert checked == pin, (
        f'requirements-ros.txt pins {distribution} {pin}, but the shim in {where} was checked '
        f'against {checked}: re-check it against {pin}, then update its version constant')
    assert pin in (shim.__doc__ or ''), (
        f"{shim.__name__}'s docstring must name the version it was checked against ({pin})")


def _parameters(function: Callable[..., object]) -> list[str]:
    return list(inspect.signature(function).parameters)


def test_rosbags_is_the_version_the_writer_shim_was_checked_against() -> None:
    _check_version('rosbags', write, write.ROSBAGS_CHECKED_VERSION)


def test_rosbags_mcap_storage_still_has_what_the_writer_shim_relies_on(tmp_path: Path) -> None:
    """McapWriter's methods and attributes, and the chunk record it writes (CRC 0 at 33)."""
    hint = ('ghost_bag.write subclasses rosbags.rosbag2.storage_mcap.McapWriter (see its '
            'docstring); rosbags changed it: adapt _ChunkedMcapWriter')
    assert Writer.STORAGE_PLUGINS[StoragePlugin.MCAP] is McapWriter, hint
    assert _parameters(McapWriter.__init__) == ['self', 'path', 'compression'], hint
    assert _parameters(McapWriter.write) == ['self', 'connection', 'timestamp', 'data'], hint
    assert _parameters(McapWriter.close_chunk) == ['self'], hint
    assert _parameters(McapWriter.close) == ['self', 'version', 'metadata'], hint
    # rosbags' own storage, through its public Writer: the attributes the shim uses, and the
    # chunk record whose uncompressed_crc (0: "not computed") the shim fills in at byte 33.
    typestore = get_typestore(Stores.ROS2_JAZZY)
    data = typestore.serialize_cdr(typestore.types['std_msgs/msg/String'](data='x'),
                                   'std_msgs/msg/String')
    writer = Writer(tmp_path / 'bag', version=9, storage_plugin=StoragePlugin.MCAP)
    writer.open()
    storage = writer.storage
    assert isinstance(storage, McapWriter), hint
    assert isinstance(storage.chunk.bio, io.BytesIO), hint
    assert all(hasattr(storage.bio, name) for name in ('tell', 'seek', 'write', 'flush',
                                                       'fileno')), hint
    connection = writer.add_connection('/a', 'std_msgs/msg/String', typestore=typestore)
    writer.write(connection, 1000, data)
    assert storage.chunk.bio.tell() > 0, hint
    writer.close()
    mcap = (tmp_path / 'bag' / 'bag.mcap').read_bytes()
    with (tmp_path / 'bag' / 'bag.mcap').open('rb') as handle:
        records = list(StreamReader(handle, emit_chunks=True).records)
    assert isinstance(records[0], Header) and isinstance(records[1], Chunk), hint
    chunk = records[1]
    start = 8 + 9 + struct.unpack_from('<Q', mcap, 9)[0]  # after the magic and the header
    assert mcap[start] == 0x06, hint
    assert struct.unpack_from('<QI', mcap, start + 25) == (chunk.uncompressed_size, 0), hint
    assert write._CHUNK_CRC_OFFSET == 33


def test_mcap_ros2_is_the_version_the_parser_shim_was_checked_against() -> None:
    _check_version('mcap-ros2-support', mcap_ros2_shim, mcap_ros2_shim.CHECKED_VERSION)


def test_mcap_ros2_still_has_the_parser_the_shim_relies_on() -> None:
    """_for_each_msgdef(schema_name, schema_text, fn) and TimeDefinition, as documented."""
    from mcap_ros2 import _dynamic

    hint = ('ghost_bag.mcap_ros2_shim uses mcap_ros2._dynamic._for_each_msgdef and '
            'TimeDefinition (see its docstring); mcap_ros2 changed them: adapt the shim')
    assert callable(getattr(_dynamic, '_for_each_msgdef', None)), hint
    assert _parameters(_dynamic._for_each_msgdef) == ['schema_name', 'schema_text', 'fn'], hint
    time = getattr(_dynamic, 'TimeDefinition', None)
    assert time is not None, hint
    assert str(time.base_type) == 'builtin_interfaces/Time', hint
    assert [(field.type.type, field.name) for field in time.fields] == [
        ('uint32', 'sec'), ('uint32', 'nanosec')], hint
    # generate_dynamic (behind mcap_ros2's public DecoderFactory) still builds its
    # definitions from these two, which is what makes the shim's definitions the decoder's.
    source = inspect.getsource(_dynamic.generate_dynamic)
    assert '_for_each_msgdef(' in source and 'TimeDefinition' in source, hint
    definitions = mcap_ros2_shim.message_definitions(
        'std_msgs/msg/Header', 'builtin_interfaces/Time stamp\nstring frame_id\n')
    assert set(definitions) == {'builtin_interfaces/Time', 'builtin_interfaces/Duration',
                                'std_msgs/msg/Header', 'std_msgs/Header'}, hint
    assert [field.name for field in definitions['std_msgs/msg/Header'].fields] == [
        'stamp', 'frame_id'], hint


def _private_imports(path: Path) -> list[tuple[str, str]]:
    """(library, private name) for each private name of SHIMS' libraries `path` imports."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
            names: list[str] = []
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules = [node.module]
            names = [alias.name for alias in node.names]
        else:
            continue
        for module in modules:
            library, *parts = module.split('.')
            if library not in SHIMS:
                continue
            if any(part.startswith('_') for part in parts):
                found.append((library, module))
            found += [(library, f'{module}.{name}') for name in names if name.startswith('_')]
    return found


def test_no_module_but_a_shim_imports_a_private_name_of_the_bag_libraries() -> None:
    offenders = {}
    for folder in SOURCES:
        for path in sorted((ROOT / folder).rglob('*.py')):
            relative = str(path.relative_to(ROOT))
            private = [name for library, name in _private_imports(path)
                       if SHIMS[library] != relative]
            if private:
                offenders[relative] = private
    shims = ', '.join(f'{library}: {path or "none, public API only"}'
                      for library, path in SHIMS.items())
    assert offenders == {}, (
        f'private names of mcap, mcap_ros2 or rosbags are imported outside their shim '
        f'({shims}): {offenders}')


@pytest.mark.parametrize('library', sorted(SHIMS))
def test_the_scan_sees_a_private_import(library: str, tmp_path: Path) -> None:
    """A sanity check of the scanner: both spellings of a private import are found."""
    path = tmp_path / 'probe.py'
    path.write_text(f'from {library}._x import y\nfrom {library} import _z\n',
                    encoding='utf-8')
    assert _private_imports(path) == [(library, f'{library}._x'), (library, f'{library}._z')]
