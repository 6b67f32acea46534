"""Every "SPEC §N" and "ADR-NNNN" reference in the repository resolves to a document in it.

"SPEC §N" (also "SPEC section N", "SPEC §5.4", "SPEC §5 v1.1") must name a heading of
docs/spec.md that carries that section number, and that amendment version when one is given.
"ADR-NNNN" (also "ADR-0021/0027") must name exactly one record docs/decisions/NNNN-*.md, and
"ADR-NNNN §N" (or "section N.M", or "ADR-NNNN N.M") a heading of that record carrying the number.
Scanned: every file git lists (tracked, or new and not ignored) whose name ends in one of
SCANNED_SUFFIXES, outside build/, install/ and log/.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
import os
from pathlib import Path
import re
import subprocess

REPO = Path(__file__).resolve().parents[2]
SPEC_DOC = Path('docs', 'spec.md')
DECISIONS_DIR = Path('docs', 'decisions')
SCANNED_SUFFIXES = frozenset({'.py', '.md', '.msg', '.yaml', '.txt', '.sh'})
SKIPPED_DIRS = frozenset({'build', 'install', 'log'})

# Between two words of a reference: spaces, or a line break and a comment leader.
_GAP = r'(?:[ \t]*\n[ \t]*(?:#:?|//|\*)?[ \t]*|[ \t]+)'
_SECTION_WORD = rf'(?:§[ \t]*|sections?{_GAP})'
_NUMBER = r'\d+(?:\.\d+)*'
SPEC_REFERENCE = re.compile(
    rf'\bSPEC{_GAP}{_SECTION_WORD}?(?P<section>{_NUMBER})(?:{_GAP}(?P<version>v\d+\.\d+))?')
ADR_REFERENCE = re.compile(
    rf'\bADR-(?P<number>\d{{4}})(?P<more>(?:/\d{{4}})*)'
    rf'(?:{_GAP}(?:{_SECTION_WORD}(?P<section>{_NUMBER})|(?P<dotted>\d+(?:\.\d+)+)))?')
_HEADING = re.compile(r'^#{1,6}[ \t]+(?P<title>.+)$')
_FENCE = re.compile(r'^[ \t]*(```|~~~)')


@dataclass(frozen=True)
class Reference:
    """One reference found in a file: where, as written, and what it names."""

    path: str
    line: int
    text: str
    kind: str  # 'SPEC' or 'ADR'
    numbers: tuple[str, ...]  # the ADR numbers ('0021', '0027'); () for SPEC
    section: str | None
    version: str | None

    def where(self) -> str:
        """Return ``path:line: text``."""
        return f'{self.path}:{self.line}: {self.text!r}'


def find_references(path: str, text: str) -> Iterator[Reference]:
    """Yield every SPEC and ADR reference of `text` (the contents of `path`), in order."""
    def line_of(offset: int) -> int:
        return text.count('\n', 0, offset) + 1

    found: list[tuple[int, Reference]] = []
    for match in SPEC_REFERENCE.finditer(text):
        found.append((match.start(), Reference(
            path, line_of(match.start()), ' '.join(match.group(0).split()), 'SPEC', (),
            match.group('section'), match.group('version'))))
    for match in ADR_REFERENCE.finditer(text):
        numbers = (match.group('number'), *re.findall(r'\d{4}', match.group('more')))
        found.append((match.start(), Reference(
            path, line_of(match.start()), ' '.join(match.group(0).split()), 'ADR', numbers,
            match.group('section') or match.group('dotted'), None)))
    for _, reference in sorted(found, key=lambda item: item[0]):
        yield reference


def headings(text: str) -> list[str]:
    """Return the titles of the markdown headings of `text` (fenced code blocks skipped)."""
    titles: list[str] = []
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else _HEADING.match(line)
        if match:
            titles.append(match.group('title'))
    return titles


def carries(title: str, section: str, version: str | None = None) -> bool:
    """Whether a heading carries §`section` exactly (§5 is not §5.1) and `version` if given."""
    if not re.search(rf'§{re.escape(section)}(?!\d|\.\d)', title):
        return False
    return version is None or re.search(
        rf'(?<![\w.]){re.escape(version)}(?!\w|\.\d)', title) is not None


def problem(reference: Reference, root: Path) -> str | None:
    """Return why `reference` does not resolve under `root`, or None when it does."""
    if reference.kind == 'SPEC':
        spec = root / SPEC_DOC
        if not spec.is_file():
            return f'{SPEC_DOC} does not exist'
        assert reference.section is not None
        if any(carries(title, reference.section, reference.version)
               for title in headings(spec.read_text(encoding='utf-8'))):
            return None
        wanted = f'§{reference.section}' + (f' {reference.version}' if reference.version else '')
        return f'no heading of {SPEC_DOC} carries {wanted}'
    reasons = []
    for index, number in enumerate(reference.numbers):
        records = sorted((root / DECISIONS_DIR).glob(f'{number}-*.md'))
        if len(records) != 1:
            reasons.append(f'{len(records)} records {DECISIONS_DIR}/{number}-*.md, not one')
            continue
        if index == 0 and reference.section is not None and not any(
                carries(title, reference.section)
                for title in headings(records[0].read_text(encoding='utf-8'))):
            reasons.append(f'no heading of {DECISIONS_DIR}/{records[0].name} carries '
                           f'§{reference.section}')
    return '; '.join(reasons) or None


def repository_files(root: Path) -> list[str]:
    """The files to scan, relative to `root`: git's list (tracked and new), filtered."""
    try:
        listed = subprocess.run(
            ['git', 'ls-files', '-z', '--cached', '--others', '--exclude-standard'],
            cwd=root, capture_output=True, check=True, timeout=60).stdout.decode('utf-8')
        names = set(filter(None, listed.split('\0')))
    except (OSError, subprocess.SubprocessError):
        # Not a git checkout (an unpacked archive): every file but hidden and generated ones.
        names = set()
        for directory, subdirectories, files in os.walk(root):
            subdirectories[:] = [d for d in subdirectories
                                 if not d.startswith('.') and d not in SKIPPED_DIRS
                                 and d not in ('runs', 'venv', '__pycache__')]
            names.update(str(Path(directory, f).relative_to(root)) for f in files)
    return sorted(name for name in names
                  if Path(name).suffix in SCANNED_SUFFIXES
                  and Path(name).parts[0] not in SKIPPED_DIRS
                  and (root / name).is_file())


def scan(root: Path, paths: Sequence[str]) -> list[Reference]:
    """Every reference in the files `paths` (relative to `root`)."""
    references: list[Reference] = []
    for name in paths:
        text = (root / name).read_text(encoding='utf-8', errors='replace')
        references += find_references(name, text)
    return references


def unresolved(root: Path, references: Sequence[Reference]) -> list[str]:
    """One line per reference that does not resolve: ``path:line: 'text': why``."""
    lines = []
    for reference in references:
        why = problem(reference, root)
        if why is not None:
            lines.append(f'{reference.where()}: {why}')
    return lines


def test_every_spec_and_adr_reference_resolves() -> None:
    """Each SPEC section names a heading of docs/spec.md, each ADR one record of docs/decisions."""
    references = scan(REPO, repository_files(REPO))
    kinds = {reference.kind for reference in references}
    assert kinds == {'SPEC', 'ADR'}, f'the scan found no {({"SPEC", "ADR"} - kinds)} reference'
    problems = unresolved(REPO, references)
    assert not problems, (
        f'{len(problems)} reference(s) resolve to no document (docs/spec.md headings, '
        'docs/decisions/NNNN-*.md):\n' + '\n'.join(problems))


def test_the_forms_references_take_are_found() -> None:
    """Wrapped, qualified and combined references are read as the numbers they name."""
    text = ('x (SPEC §5 v1.1, a) y SPEC section 4 z (SPEC\n'
            '    #: section 6) ADR-0021/0027 ADR-0032 §3 ADR-0032 section 4.3 ADR-0032 4.2.\n'
            "SPEC 8: and ADR-0022 step 5, SPEC's K, ADR-NNNN, SPEC §7.")
    found = [(r.line, r.kind, r.numbers, r.section, r.version)
             for r in find_references('f', text)]
    assert found == [
        (1, 'SPEC', (), '5', 'v1.1'),
        (1, 'SPEC', (), '4', None),
        (1, 'SPEC', (), '6', None),
        (2, 'ADR', ('0021', '0027'), None, None),
        (2, 'ADR', ('0032',), '3', None),
        (2, 'ADR', ('0032',), '4.3', None),
        (2, 'ADR', ('0032',), '4.2', None),
        (3, 'SPEC', (), '8', None),
        (3, 'ADR', ('0022',), None, None),
        (3, 'SPEC', (), '7', None),
    ]


def test_a_reference_to_nothing_is_reported_with_its_place() -> None:
    """A section, version, record or record section that does not exist fails, with file:line."""
    # Spelled apart so that this file itself holds no unresolvable reference.
    spec, adr = 'SPEC', 'ADR'
    text = '\n'.join([
        f'{spec} §5.4 and {spec} §5 v1.2 and {adr}-0021/0027 and {adr}-0032 §4.3',
        f'{spec} §99',
        f'{spec} §5.7',
        f'{spec} §5 v9.9',
        f'{adr}-9999',
        f'{adr}-0021/9998',
        f'{adr}-0032 §9',
    ])
    problems = unresolved(REPO, list(find_references('scratch.md', text)))
    assert [line.split(': ', 2)[:2] for line in problems] == [
        ['scratch.md:2', repr(f'{spec} §99')],
        ['scratch.md:3', repr(f'{spec} §5.7')],
        ['scratch.md:4', repr(f'{spec} §5 v9.9')],
        ['scratch.md:5', repr(f'{adr}-9999')],
        ['scratch.md:6', repr(f'{adr}-0021/9998')],
        ['scratch.md:7', repr(f'{adr}-0032 §9')],
    ]


def test_headings_and_section_numbers() -> None:
    """§5 is not §5.1, a version must match exactly, and fenced code holds no heading."""
    assert carries('§5 Reference behaviour', '5')
    assert not carries('§5.1 Self-assessor', '5')
    assert carries('§5.1 Self-assessor', '5.1')
    assert not carries('§51 Other', '5')
    assert carries('§5 v1.1 — Amendments', '5', 'v1.1')
    assert not carries('§5 v1.12 — Amendments', '5', 'v1.1')
    assert not carries('§5 Reference behaviour', '5', 'v1.1')
    assert headings('# A\n```python\n# not a heading\n```\n## B\n') == ['A', 'B']
