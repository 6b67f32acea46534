"""Rewrite requirements.txt from the venv: every installed PyPI distribution, pinned.

Run with the venv's Python after installing or upgrading a dependency:
    .venv/bin/python scripts/freeze_requirements.py
ROS 2 wheels embed metadata for their own Python packages (rclpy, std_msgs, ...); those are
not PyPI distributions (they have no INSTALLER record) and are left out.
"""

import importlib.metadata as md
from pathlib import Path

HEADER = """\
# Every Python dependency of Ghost's no-ROS set-up, pinned (installed by scripts/bootstrap.sh).
# Regenerate with scripts/freeze_requirements.py (drops the metadata that ROS wheels embed for
# their own Python packages, e.g. 'rclpy==7.1.5': those are not PyPI distributions).
# ROS 2 Jazzy comes from its PyPI wheels; colcon from PyPI.
"""


def main() -> None:
    """Write requirements.txt next to the scripts folder."""
    pins = sorted(
        (d.metadata['Name'], d.version) for d in md.distributions()
        if d.read_text('INSTALLER') is not None)
    lines = [f'{name}=={version}' for name, version in pins]
    path = Path(__file__).resolve().parent.parent / 'requirements.txt'
    path.write_text(HEADER + '\n'.join(lines) + '\n')
    print(f'{path}: {len(lines)} pins')


if __name__ == '__main__':
    main()
