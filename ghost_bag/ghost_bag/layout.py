"""The rosbag2 directory layout: which .mcap files a bag is, in which order, and metadata.yaml.

A bag is a rosbag2 directory (metadata.yaml and its .mcap files), its metadata.yaml, or one
.mcap file. Storage options this package cannot read (another storage plugin, rosbag2
compression) are refused by name rather than read as garbage.
"""

from __future__ import annotations

from dataclasses import dataclass
import os
from pathlib import Path
import re

import yaml  # type: ignore[import-untyped, unused-ignore]

from .errors import BagFormatError, BagNotFoundError

__all__ = ['BagLayout', 'display_name', 'MAX_CHUNK_SIZE', 'MAX_METADATA_BYTES', 'name_in_bag',
           'one_line', 'resolve_bag']

#: rosbags (0.11) closes an MCAP chunk once it holds more than 1 MiB; a writer can only ask
#: for smaller chunks (a smaller chunk loses less data if the writing process dies).
MAX_CHUNK_SIZE = 1 << 20
#: The largest metadata.yaml read (rosbag2 writes a few kilobytes; one per file and topic).
MAX_METADATA_BYTES = 16 << 20


@dataclass(frozen=True, slots=True)
class BagLayout:
    """Where a bag's files are: metadata.yaml (if any) and the .mcap files in reading order.

    `missing` names the files metadata.yaml lists that do not exist; `metadata_missing` is
    True for a bag directory without metadata.yaml (what a recorder that never closed the bag
    leaves); `message_count` is the total metadata.yaml records, when it records one.
    """

    root: Path
    metadata: Path | None
    files: tuple[Path, ...]
    missing: tuple[str, ...] = ()
    metadata_missing: bool = False
    message_count: int | None = None


def resolve_bag(path: str | os.PathLike[str]) -> BagLayout:
    """Resolve a bag path: a rosbag2 directory, its metadata.yaml, or one .mcap file.

    A directory's .mcap files are read in the order metadata.yaml lists them under
    ``rosbag2_bagfile_information.relative_file_paths``; listed files that do not exist are
    reported in `missing` (BagNotFoundError when none exists). A directory without
    metadata.yaml is read from its .mcap file (several only when named ``<name>_<N>.mcap``,
    read in N order), with `metadata_missing` set.
    """
    bag = Path(path)
    if not bag.exists():
        raise BagNotFoundError(f'{bag}: no such file or directory')
    if bag.is_file() and bag.name == 'metadata.yaml':
        bag = bag.parent
    if bag.is_file():
        _refuse_a_ulog(bag)
        return BagLayout(root=bag.parent, metadata=None, files=(bag,))
    if not bag.is_dir():
        raise BagFormatError(f'{bag}: neither a regular file nor a directory')
    metadata = bag / 'metadata.yaml'
    if not metadata.is_file():
        return BagLayout(root=bag, metadata=None, files=_files_without_metadata(bag),
                         metadata_missing=True)
    files, missing, count = _files_from_metadata(bag, metadata)
    return BagLayout(root=bag, metadata=metadata, files=files, missing=missing,
                     message_count=count)


#: The first bytes of a PX4 ULog file ('ULog' then 0x01 0x12 0x35).
ULOG_MAGIC = b'ULog\x01\x12\x35'
#: The first bytes of an ArduPilot DataFlash log (the header 0xA3 0x95 of its FMT message).
DATAFLASH_MAGIC = b'\xa3\x95\x80'


def _refuse_a_ulog(path: Path) -> None:
    """BagFormatError saying what to do when `path` is a flight log (PX4, ArduPilot), not a bag."""
    try:
        with path.open('rb') as stream:
            head = stream.read(len(ULOG_MAGIC))
    except OSError as err:
        raise BagFormatError(f'{path}: cannot be read: {err.strerror}') from err
    kind = ('a PX4 ULog' if head == ULOG_MAGIC else
            'an ArduPilot DataFlash log' if head.startswith(DATAFLASH_MAGIC) else None)
    if kind is not None:
        raise BagFormatError(
            f'{path}: this is {kind}, not a bag: run `ghost_import {path} --output '
            'BAG` first and give BAG (or review it at once: `ghost_review '
            f'{path} --output DIR`)')


def _files_without_metadata(bag: Path) -> tuple[Path, ...]:
    try:
        mcaps = sorted(item for item in bag.iterdir() if item.suffix == '.mcap'
                       and item.is_file())
    except OSError as err:
        raise BagFormatError(f'{bag}: cannot list the directory: {err.strerror}') from err
    if not mcaps:
        raise BagFormatError(
            f'{bag}: a directory without metadata.yaml and without .mcap files is not a '
            'rosbag2 bag'
        )
    if len(mcaps) == 1:
        return (mcaps[0],)
    # rosbag2 names the files of a split bag <name>_<N>.mcap: without metadata.yaml, that
    # index is the only trustworthy reading order.
    indexed = [(re.fullmatch(r'(.*)_(\d+)\.mcap', item.name), item) for item in mcaps]
    prefixes = {match.group(1) for match, _ in indexed if match is not None}
    if any(match is None for match, _ in indexed) or len(prefixes) != 1:
        raise BagFormatError(
            f'{bag}: a directory without metadata.yaml holding {len(mcaps)} .mcap files not '
            'all named <name>_<N>.mcap: their reading order is unknown (give one .mcap file)'
        )
    return tuple(item for _, item in sorted(
        indexed, key=lambda pair: int(pair[0].group(2)) if pair[0] is not None else 0))


#: rosbag2 compression modes (metadata.yaml `compression_mode`, any case) read as
#: uncompressed. MCAP's own chunk compression (lz4, zstd, inside the .mcap file) is another
#: thing, and is read.
_UNCOMPRESSED_MODES = frozenset({'', 'none'})


def _refuse_unhandled_storage_options(metadata: Path, info: dict[object, object]) -> None:
    """Raise BagFormatError naming any rosbag2 storage option the reader does not handle.

    Handled: the ``mcap`` storage plugin without rosbag2 compression. Refused, by name:
    another storage plugin (``sqlite3``, ...); rosbag2 per-file compression (the .mcap files
    are themselves compressed, e.g. ``.mcap.zstd``); rosbag2 per-message compression (each
    message's CDR bytes compressed inside the MCAP file, which otherwise decode as garbage);
    an unknown compression mode; a compression format without a mode.
    """
    storage = info.get('storage_identifier', 'mcap')
    if storage != 'mcap':
        raise BagFormatError(
            f'{metadata}: storage {storage!r} is not supported; the verifier reads rosbag2 '
            'mcap storage only (record with -s mcap)'
        )
    mode_value = info.get('compression_mode') or ''
    format_value = info.get('compression_format') or ''
    mode = mode_value.strip().lower() if isinstance(mode_value, str) else mode_value
    fmt = format_value.strip() if isinstance(format_value, str) else format_value
    named = f' (compression_format {fmt!r})' if fmt else ''
    if mode == 'message':
        raise BagFormatError(
            f'{metadata}: compression_mode {mode_value!r}{named}: rosbag2 per-message '
            'compression is not supported (every message payload is compressed, so it cannot '
            'be decoded); record without --compression-mode, or decompress the bag first '
            '(ros2 bag convert)'
        )
    if mode == 'file':
        raise BagFormatError(
            f'{metadata}: compression_mode {mode_value!r}{named}: rosbag2 per-file '
            'compression (file-compressed bags) is not supported; decompress the files first '
            '(ros2 bag convert)'
        )
    if mode not in _UNCOMPRESSED_MODES:
        raise BagFormatError(
            f'{metadata}: compression_mode {mode_value!r}{named} is not a rosbag2 '
            "compression mode the verifier handles (only none or '' is read)"
        )
    if fmt:
        raise BagFormatError(
            f'{metadata}: compression_format {fmt!r} without a compression_mode is not '
            'supported: the verifier cannot tell how the bag is compressed'
        )


def _files_from_metadata(
    bag: Path, metadata: Path
) -> tuple[tuple[Path, ...], tuple[str, ...], int | None]:
    try:
        size = metadata.stat().st_size
        if size > MAX_METADATA_BYTES:
            raise BagFormatError(f'{metadata}: {size} bytes, more than the '
                                 f'{MAX_METADATA_BYTES} a rosbag2 metadata.yaml is read up to')
        text = metadata.read_text(encoding='utf-8')
        document = yaml.safe_load(text)
    except RecursionError as err:
        raise BagFormatError(f'{metadata}: cannot be read as YAML: nested too deeply') from err
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise BagFormatError(f'{metadata}: cannot be read as YAML: {one_line(err)}') from err
    info = document.get('rosbag2_bagfile_information') if isinstance(document, dict) else None
    if not isinstance(info, dict):
        raise BagFormatError(f'{metadata}: no rosbag2_bagfile_information mapping')
    _refuse_unhandled_storage_options(metadata, info)
    relative = info.get('relative_file_paths')
    if (
        not isinstance(relative, list)
        or not relative
        or not all(isinstance(item, str) and item for item in relative)
    ):
        raise BagFormatError(f'{metadata}: relative_file_paths is not a list of file names')
    files = []
    missing = []
    for item in relative:
        candidate = bag / item
        if not candidate.is_file() and (bag.parent / item).is_file():
            # Bags written by early rosbag2 releases list paths relative to the bag's parent.
            candidate = bag.parent / item
        if candidate.is_file():
            files.append(candidate)
        else:
            missing.append(item)
    if not files:
        listed = ', '.join(repr(item) for item in missing)
        which = 'which does not exist' if len(missing) == 1 else 'none of which exists'
        raise BagNotFoundError(f'{metadata}: lists {listed}, {which}')
    count = info.get('message_count')
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        count = None
    return tuple(files), tuple(missing), count


def name_in_bag(layout: BagLayout, path: Path) -> str:
    """The name of one of the bag's files inside the bag (its path relative to the root)."""
    try:
        return path.relative_to(layout.root).as_posix()
    except ValueError:
        return path.name


def display_name(layout: BagLayout) -> str:
    """How a bag is named in messages: the .mcap file given alone, else the bag directory."""
    if layout.metadata is None and len(layout.files) == 1 and not layout.metadata_missing:
        return str(layout.files[0])
    return str(layout.root)


def one_line(err: BaseException) -> str:
    """An exception as one line: its type, and its message with the whitespace collapsed."""
    text = ' '.join(str(err).split())
    return f'{type(err).__name__}: {text}' if text else type(err).__name__
