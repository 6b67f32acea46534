"""Write ghost_core/msg_fields.py, the field table of every ghost message, from the .msg files.

    python -m ghost_core.msg_codegen ghost_interfaces/msg ghost_core/ghost_core/msg_fields.py

The .msg files are the one source of the messages' shape; this generator turns them into a
table that ghost_core (which must not import ghost_interfaces) and ghost_verify read. A test
regenerates the table and fails when it differs from the file. Pure: reads text, returns text.

What it generates is data, written ahead of time into a checked-in file (no function, nothing
executed from a string at run time, so a debugger reads it like any module). bench/codegen.py
measures it anyway, against parsing the .msg texts when needed: it is read once per process
(import), 30x faster than parsing them, and parsing them would have ghost_core read
ghost_interfaces' files at run time (docs/performance.md, "Generated code").
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
import sys

__all__ = ['FOREIGN_FIELDS', 'parse_msg', 'render', 'main']

#: The fields of the non-ghost types the ghost messages use (ROS 2 Jazzy's definitions).
FOREIGN_FIELDS: Mapping[str, tuple[tuple[str, str], ...]] = {
    'builtin_interfaces/Time': (('sec', 'int32'), ('nanosec', 'uint32')),
    'std_msgs/Header': (('stamp', 'builtin_interfaces/Time'), ('frame_id', 'string')),
    'geometry_msgs/Point': (('x', 'float64'), ('y', 'float64'), ('z', 'float64')),
    'geometry_msgs/Vector3': (('x', 'float64'), ('y', 'float64'), ('z', 'float64')),
    'geometry_msgs/Twist': (('linear', 'geometry_msgs/Vector3'),
                            ('angular', 'geometry_msgs/Vector3')),
}


def parse_msg(text: str, where: str) -> tuple[tuple[tuple[str, str], ...],
                                                tuple[tuple[str, str, int], ...]]:
    """Return the (name, type) fields and the (name, type, value) constants of a .msg text.

    Constants are returned so that a line is never mistaken for a field; the table holds
    fields only.
    """
    fields: list[tuple[str, str]] = []
    constants: list[tuple[str, str, int]] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split('#', 1)[0].strip()
        if not line:
            continue
        parts = line.split(None, 1)
        if len(parts) != 2:
            raise ValueError(f'{where}:{number}: expected "<type> <name>", got {raw!r}')
        field_type, rest = parts
        if '=' in rest:
            name, value = (part.strip() for part in rest.split('=', 1))
            constants.append((name, field_type, int(value)))
            continue
        name = rest.split()[0]
        fields.append((name, field_type))
    return tuple(fields), tuple(constants)


def render(msg_texts: Mapping[str, str]) -> str:
    """Return the source of msg_fields.py for the .msg texts given by message name."""
    parsed = {name: parse_msg(msg_texts[name], f'{name}.msg') for name in sorted(msg_texts)}
    lines = [
        '"""The field table of every ghost message: GENERATED from ghost_interfaces/msg/*.msg.',
        '',
        'Do not edit: run `python -m ghost_core.msg_codegen ghost_interfaces/msg',
        'ghost_core/ghost_core/msg_fields.py` (ghost_core/test/test_msg_fields.py checks it).',
        'Ghost messages are keyed by their short name, the types they use from other packages',
        "by 'package/Name'. A field is (name, type) with the type as the .msg spells it.",
        '"""',
        '',
        'from collections.abc import Mapping',
        'from types import MappingProxyType',
        '',
        "__all__ = ['MESSAGE_FIELDS']",
        '',
        '#: Per message, its fields in .msg order: (name, type).',
        'MESSAGE_FIELDS: Mapping[str, tuple[tuple[str, str], ...]] = MappingProxyType({',
    ]
    for name, (fields, _) in parsed.items():
        lines.append(f'    {name!r}: (')
        lines.extend(f'        ({field!r}, {field_type!r}),' for field, field_type in fields)
        lines.append('    ),')
    lines.append("    # Other packages' types, as ROS 2 Jazzy defines them.")
    for name, fields in FOREIGN_FIELDS.items():
        line = f'    {name!r}: {fields!r},'
        if len(line) <= 99:
            lines.append(line)
        else:
            lines.append(f'    {name!r}: (')
            lines.extend(f'        {field!r},' for field in fields)
            lines.append('    ),')
    lines.append('})')
    return '\n'.join(lines) + '\n'


def render_dir(msg_dir: Path) -> str:
    """Return the source of msg_fields.py for every .msg file in `msg_dir`."""
    return render({path.stem: path.read_text(encoding='utf-8')
                   for path in sorted(msg_dir.glob('*.msg'))})


def main(argv: list[str] | None = None) -> int:
    """Write the table: ``msg_codegen MSG_DIR OUTPUT``."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print('usage: python -m ghost_core.msg_codegen MSG_DIR OUTPUT', file=sys.stderr)
        return 2
    Path(args[1]).write_text(render_dir(Path(args[0])), encoding='utf-8')
    return 0


if __name__ == '__main__':
    sys.exit(main())
