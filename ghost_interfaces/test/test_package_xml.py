"""Every package.xml declares what its package imports, so rosdep can install it.

Each third-party top-level module imported by a package's Python files (its module folder, or
``launch/`` for ``ghost``, which installs it; its ``test/`` folder for test dependencies) must be
either declared in that package.xml, under its rosdep key or ROS package name, or be one of the
PyPI-only distributions (no rosdep key) that the package.xml documents in a comment with the
pin of requirements-ros.txt. A new import without either fails here.
"""

from __future__ import annotations

import ast
from pathlib import Path
import re
import sys
import xml.etree.ElementTree as ET

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ('ghost', 'ghost_interfaces', 'ghost_core', 'ghost_bag', 'ghost_nodes', 'ghost_px4',
            'ghost_ardupilot', 'ghost_mavros', 'ghost_verify', 'ghost_review')
#: Where each package's run-time Python lives (``ghost`` installs the root launch/ folder).
RUNTIME_SOURCES = {
    'ghost': (ROOT / 'launch', ROOT / 'ghost' / 'ghost'),
    'ghost_interfaces': (),
    'ghost_core': (ROOT / 'ghost_core' / 'ghost_core',),
    'ghost_bag': (ROOT / 'ghost_bag' / 'ghost_bag',),
    'ghost_nodes': (ROOT / 'ghost_nodes' / 'ghost_nodes',),
    'ghost_px4': (ROOT / 'ghost_px4' / 'ghost_px4',),
    'ghost_ardupilot': (ROOT / 'ghost_ardupilot' / 'ghost_ardupilot',),
    'ghost_mavros': (ROOT / 'ghost_mavros' / 'ghost_mavros',),
    'ghost_verify': (ROOT / 'ghost_verify' / 'ghost_verify',),
    'ghost_review': (ROOT / 'ghost_review' / 'ghost_review',),
}
#: Import name -> rosdep key, each checked in rosdistro's rosdep/python.yaml. An import that is
#: neither here nor PyPI-only is taken to be a ROS package of the same name (rclpy, launch,
#: std_msgs, ament_index_python, ...), which is its rosdep key.
ROSDEP_KEYS = {
    'cryptography': 'python3-cryptography',
    'hypothesis': 'python3-hypothesis',
    'numpy': 'python3-numpy',
    'pandas': 'python3-pandas',
    'pytest': 'python3-pytest',
    'tqdm': 'python3-tqdm',
    'yaml': 'python3-yaml',
}
#: Import name -> PyPI distribution, for the distributions rosdep has no key for (checked in
#: rosdistro's rosdep/python.yaml and base.yaml): installed from requirements-ros.txt.
PYPI_ONLY = {
    'dask': 'dask',
    'distributed': 'distributed',
    'mcap': 'mcap',
    'mcap_ros2': 'mcap-ros2-support',
    'pymavlink': 'pymavlink',
    'pyulog': 'pyulog',
    'rosbags': 'rosbags',
}
#: setup.py's setuptools comes with the ament_python build type.
IMPLIED = frozenset({'setuptools'})
#: (package, import) pairs that cannot be declared, with the reason (checked below).
UNDECLARABLE: dict[tuple[str, str], str] = {}
#: (package, import) pairs imported only in an optional mode, deliberately not declared so that
#: a user without PX4 installs none of PX4; the package.xml names the module in a comment.
OPTIONAL = {
    ('ghost_nodes', 'px4_msgs'): "the command gate's px4 mode (ghost_px4 declares px4_msgs)",
    ('ghost', 'ghost_px4'): 'ghost_run --px4-ulog reads the log with ghost_px4',
    ('ghost', 'ghost_mavros'): "a MAVROS graph records mavros_bridge's parameters",
    ('ghost_review', 'ghost_px4'): 'a PX4 ULog input is imported and read with ghost_px4',
    ('ghost_px4', 'ghost_ardupilot'): 'ghost_import reads a DataFlash log with ghost_ardupilot',
    ('ghost_review', 'ghost_ardupilot'): 'a DataFlash input is read with ghost_ardupilot',
}
#: What a user without PX4 must not be made to install with the agent.
PX4_ONLY = ('px4_msgs', 'pyulog')
#: ghost_bag's writer: the one module importing the writer-only libraries. They are run-time
#: dependencies of the packages that write (declared there), not of ghost_bag, so that an
#: auditor's install (ghost_verify, ghost_bag) needs none of them.
WRITER = ROOT / 'ghost_bag' / 'ghost_bag' / 'write.py'
WRITERS = ('ghost', 'ghost_nodes', 'ghost_px4', 'ghost_ardupilot')
RUN_TAGS = ('depend', 'exec_depend')
TEST_TAGS = ('depend', 'exec_depend', 'test_depend')


def _pins(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text(encoding='utf-8').splitlines():
        line = line.split('#')[0].strip()
        if line:
            requirement = line.split(';')[0].strip()
            name, _, version = requirement.partition('==')
            assert version, f'{path.name}: {line!r} is not pinned with =='
            pins[_normalize(name)] = version.strip()
    return pins


def _normalize(name: str) -> str:
    return re.sub(r'[-_.]+', '-', name).lower()


def _manifest(package: str) -> tuple[dict[str, set[str]], str]:
    """The declared dependencies by tag, and the text of the comments."""
    path = ROOT / package / 'package.xml'
    root = ET.parse(path).getroot()
    declared: dict[str, set[str]] = {}
    for element in root:
        if isinstance(element.tag, str) and element.tag.endswith('depend') and element.text:
            declared.setdefault(element.tag, set()).add(element.text.strip())
    comments = ' '.join(re.findall(r'<!--(.*?)-->', path.read_text(encoding='utf-8'), re.DOTALL))
    return declared, ' '.join(comments.split())


def _type_checking_only(tree: ast.Module) -> set[ast.AST]:
    """The nodes under ``if TYPE_CHECKING:``: read by type checkers, never imported."""
    nodes: set[ast.AST] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and (
                (isinstance(node.test, ast.Name) and node.test.id == 'TYPE_CHECKING')
                or (isinstance(node.test, ast.Attribute) and node.test.attr == 'TYPE_CHECKING')):
            for child in node.body:
                nodes |= set(ast.walk(child))
    return nodes


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding='utf-8'), filename=str(path))
    skipped = _type_checking_only(tree)
    names = set()
    for node in ast.walk(tree):
        if node in skipped:
            continue
        if isinstance(node, ast.Import):
            names |= {alias.name.partition('.')[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.partition('.')[0])
    return names


def third_party_imports(package: str, folders: tuple[Path, ...], *,
                        files: tuple[Path, ...] = ()) -> dict[str, set[str]]:
    """Top-level module -> the files importing it: neither stdlib nor local nor the package.

    The files of `folders` (but ghost_bag's writer, see WRITER), then the given `files`.
    """
    found: dict[str, set[str]] = {}
    paths = [path for folder in folders for path in sorted(folder.rglob('*.py'))
             if path != WRITER]
    for path in (*paths, *files):
        local = {p.stem for p in path.parent.iterdir() if p.suffix == '.py' or p.is_dir()}
        for name in _imports(path):
            if (name in sys.stdlib_module_names or name in local or name == package
                    or name == '__future__' or name.endswith('_test')):
                continue
            found.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    return found


def _problems(package: str, kind: str, folders: tuple[Path, ...],
              tags: tuple[str, ...], files: tuple[Path, ...] = ()) -> list[str]:
    declared, comments = _manifest(package)
    names = set().union(*(declared.get(tag, set()) for tag in tags))
    pins = _pins(ROOT / 'requirements-ros.txt')
    problems = []
    imports = third_party_imports(package, folders, files=files)
    for module, files in sorted(imports.items()):
        where = f'{package} ({kind}) imports {module!r} in {", ".join(sorted(files))}'
        if module in IMPLIED or (package, module) in UNDECLARABLE or (package, module) in OPTIONAL:
            continue
        if module in PYPI_ONLY:
            dist = PYPI_ONLY[module]
            pin = f'{dist}=={pins.get(_normalize(dist), "?")}'
            if _normalize(dist) not in pins:
                problems.append(f'{where}: {dist} is not pinned in requirements-ros.txt')
            elif pin not in comments:
                problems.append(f'{where}: {package}/package.xml must document the PyPI-only '
                                f'{pin} in a comment')
            continue
        key = ROSDEP_KEYS.get(module, module)
        if key not in names:
            problems.append(f'{where}: declare <{tags[-1]}>{key}</{tags[-1]}> in '
                            f'{package}/package.xml (if {key!r} is not its rosdep key, add the '
                            'import to ROSDEP_KEYS or PYPI_ONLY in this test)')
    return problems


@pytest.mark.parametrize('package', PACKAGES)
def test_every_runtime_import_is_declared_or_documented(package: str) -> None:
    """Run-time imports: <depend>/<exec_depend>, or a documented PyPI-only pin."""
    assert _problems(package, 'run time', RUNTIME_SOURCES[package], RUN_TAGS) == []


@pytest.mark.parametrize('package', PACKAGES)
def test_every_test_import_is_declared_or_documented(package: str) -> None:
    """Test imports: the run-time tags or <test_depend>, or a documented PyPI-only pin."""
    tests = ROOT / package / 'test'
    folders = (tests,) if tests.is_dir() else ()
    assert _problems(package, 'tests', folders, TEST_TAGS) == []


@pytest.mark.parametrize('package', WRITERS)
def test_the_writer_imports_are_declared_by_every_package_that_writes(package: str) -> None:
    """ghost_bag.write's imports (rosbags, numpy): run-time dependencies of each writer."""
    assert _problems(package, 'run time, with ghost_bag.write', (), RUN_TAGS, (WRITER,)) == []


def test_only_the_writer_imports_the_writer_only_libraries() -> None:
    """The rest of ghost_bag, and ghost_verify, import neither rosbags nor numpy."""
    writer_only = set(third_party_imports('ghost_bag', (), files=(WRITER,)))
    assert {'rosbags', 'numpy'} <= writer_only
    for package in ('ghost_bag', 'ghost_verify'):
        assert not writer_only & set(third_party_imports(package, RUNTIME_SOURCES[package]))
    _, comments = _manifest('ghost_bag')
    assert 'ghost_bag.write' in comments and 'ghost_nodes' in comments
    # Nor does ghost_verify import the writer module itself (in any spelling).
    for path in sorted((ROOT / 'ghost_verify' / 'ghost_verify').rglob('*.py')):
        for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                modules = [node.module, *(f'{node.module}.{a.name}' for a in node.names)]
            else:
                continue
            assert 'ghost_bag.write' not in modules, f'{path.relative_to(ROOT)} imports it'


def test_the_scan_sees_the_imports_it_must_see() -> None:
    """A sanity check of the scanner itself: known imports are found, stdlib ones are not."""
    imports = third_party_imports('ghost_nodes', RUNTIME_SOURCES['ghost_nodes'])
    assert {'rclpy', 'yaml', 'ghost_bag'} <= set(imports)
    # rosbags only through ghost_bag.write (test_bag_libraries.py).
    assert not {'os', 'json', 'ghost_nodes', 'ghost_verify', 'rosbags'} & set(imports)


def test_declared_python_keys_are_the_checked_ones() -> None:
    """No invented rosdep key: every python3-* key declared is one checked in ROSDEP_KEYS."""
    checked = set(ROSDEP_KEYS.values())
    for package in PACKAGES:
        declared, _ = _manifest(package)
        for tag, names in declared.items():
            for name in names:
                if name.startswith('python3-'):
                    assert name in checked, f'{package}/package.xml <{tag}>{name}: unchecked key'


def test_pypi_only_distributions_are_documented_in_the_readme() -> None:
    """The README names each PyPI-only distribution with its pin."""
    readme = ' '.join((ROOT / 'README.md').read_text(encoding='utf-8').split())
    pins = _pins(ROOT / 'requirements-ros.txt')
    for dist in PYPI_ONLY.values():
        assert f'{dist}=={pins[_normalize(dist)]}' in readme, dist


def test_requirements_ros_pins_are_those_of_requirements_txt() -> None:
    """requirements-ros.txt (ROS install) pins each distribution as requirements.txt does."""
    ros = _pins(ROOT / 'requirements-ros.txt')
    full = _pins(ROOT / 'requirements.txt')
    assert set(map(_normalize, PYPI_ONLY.values())) <= set(ros)
    assert {name: full.get(name) for name in ros} == ros


def test_undeclarable_dependencies_are_still_undeclarable() -> None:
    """A pair listed in UNDECLARABLE must still be a cycle (none is, since ghost_bag)."""
    for (package, module), reason in UNDECLARABLE.items():
        declared, comments = _manifest(module)
        assert package in set().union(*declared.values()), (
            f'{module} no longer depends on {package}: declare {module} in {package}/package.xml '
            f'and drop it from UNDECLARABLE ({reason})')
        assert module in _manifest(package)[1], f'{package}/package.xml must say why ({reason})'


def test_optional_imports_are_named_in_the_package_xml() -> None:
    """Each OPTIONAL import is still imported, and its package.xml says why it is undeclared."""
    for (package, module), reason in OPTIONAL.items():
        assert module in third_party_imports(package, RUNTIME_SOURCES[package]), (
            f'{package} no longer imports {module}: drop it from OPTIONAL')
        assert module in _manifest(package)[1], f'{package}/package.xml must say why ({reason})'


@pytest.mark.parametrize('package', ('ghost', 'ghost_core', 'ghost_bag', 'ghost_nodes',
                                     'ghost_verify'))
def test_only_ghost_px4_needs_px4(package: str) -> None:
    """The agent, the bag library and the auditor neither declare nor import PX4's packages."""
    declared, _ = _manifest(package)
    assert not set(PX4_ONLY) & set().union(*(declared.get(tag, set()) for tag in RUN_TAGS))
    imports = third_party_imports(package, RUNTIME_SOURCES[package])
    assert {module for module in PX4_ONLY if module in imports} <= {
        module for (owner, module) in OPTIONAL if owner == package}
    assert 'pyulog' not in imports


@pytest.mark.parametrize('package', [p for p in PACKAGES if p != 'ghost_ardupilot'])
def test_only_ghost_ardupilot_imports_pymavlink(package: str) -> None:
    """The DataFlash reader pymavlink is ghost_ardupilot's alone, and declared nowhere."""
    folders = RUNTIME_SOURCES[package]
    assert 'pymavlink' not in third_party_imports(package, folders)
    declared, _ = _manifest(package)
    assert 'pymavlink' not in set().union(*declared.values()) if declared else True
