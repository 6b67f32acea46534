"""report.html in a real browser: headless Chromium loads it from file:// with no console error.

The DOM must hold the decision timeline and exactly the episodes the bag's /decisions imply
(computed here from the bag with mcap_ros2, not with ghost_review), stay under 2 MB and name
no network resource. Skips with one line without Chromium (.ci/run installs it).
"""

from html.parser import HTMLParser
from pathlib import Path
import re
import shutil
import subprocess

from ghost_review_test.review_bags import (
    decisions_of,
    expected_episodes,
    REALDATA,
    SCENARIO_PARAMS,
    write_scenario_inputs,
)
import pytest

from ghost_review.cli import main

pytestmark = pytest.mark.bag

CHROMIUM = shutil.which('chromium') or shutil.which('chromium-browser')
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason='chromium is not installed '
                                    '(apt-get install chromium; .ci/run does)')
MAX_BYTES = 2 * 1024 * 1024
#: Chromium's log line for a page's console message (with --enable-logging=stderr --v=0).
#: Both spellings: ``CONSOLE(12)]`` (older builds) and ``CONSOLE:12]``.
CONSOLE = re.compile(r':(INFO|WARNING|ERROR|VERBOSE\d?):CONSOLE[(:]\d+\)?\] "(.*)", source: ')


def load(page: Path) -> tuple[str, list[str]]:
    """(the DOM after load, the console messages and failed loads) of a page in Chromium."""
    assert CHROMIUM is not None
    done = subprocess.run(
        [CHROMIUM, '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
         '--enable-logging=stderr', '--v=0', '--dump-dom', page.resolve().as_uri()],
        capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    problems = [line for line in done.stderr.splitlines()
                if CONSOLE.search(line) or 'net::ERR' in line]
    return done.stdout, problems


class _Dom(HTMLParser):
    """The elements the checks need: timeline bands and episode rows, with their attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.svg_ids: list[str] = []
        self.bands: list[dict[str, str | None]] = []
        self.episodes: list[dict[str, str | None]] = []
        self._in_timeline = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag == 'svg':
            self.svg_ids.append(str(attributes.get('id')))
            self._in_timeline = attributes.get('id') == 'timeline'
        elif tag == 'rect' and self._in_timeline and attributes.get('class') == 'band':
            self.bands.append(attributes)
        elif tag == 'tr' and attributes.get('class') == 'episode':
            self.episodes.append(attributes)

    def handle_endtag(self, tag: str) -> None:
        if tag == 'svg':
            self._in_timeline = False


def check_report(report: Path, bag: Path) -> _Dom:
    """Every check of one report against its Ghost bag; the parsed DOM."""
    assert report.stat().st_size < MAX_BYTES
    text = report.read_text(encoding='utf-8')
    assert not re.search(r'(src|href)\s*=\s*["\']?\s*(https?:)?//', text)
    assert 'url(' not in text and '<script' not in text and '<link' not in text
    dom_text, problems = load(report)
    assert problems == []
    dom = _Dom()
    dom.feed(dom_text)
    assert {'timeline', 'sigma-position', 'distance', 'fix-age'} <= set(dom.svg_ids)
    decisions = [kind for _, kind in decisions_of(bag)]
    runs = [kind for i, kind in enumerate(decisions) if i == 0 or kind != decisions[i - 1]]
    assert [band['data-state'] for band in dom.bands] == runs
    assert [(row['data-decision'], int(str(row['data-start-ns'])), int(str(row['data-end-ns'])))
            for row in dom.episodes] == expected_episodes(bag)
    return dom


@needs_chromium
def test_the_console_check_sees_a_console_error(tmp_path: Path) -> None:
    """The harness itself: a page that logs an error is caught."""
    page = tmp_path / 'bad.html'
    page.write_text('<!DOCTYPE html><p>x</p><script>console.error("boom")</script>',
                    encoding='utf-8')
    _, problems = load(page)
    assert any('boom' in line for line in problems)


@needs_chromium
def test_a_scenario_report_loads_cleanly_with_its_episodes(tmp_path: Path) -> None:
    """drift_then_recovery: HOLD episodes, every decision change a band."""
    source = write_scenario_inputs(tmp_path / 'drift')
    params = [arg for path in SCENARIO_PARAMS for arg in ('--params-file', str(path))]
    assert main([str(source), '--output', str(tmp_path / 'out'), *params]) == 0
    dom = check_report(tmp_path / 'out' / 'drift' / 'report.html',
                       tmp_path / 'out' / 'drift' / 'bag')
    assert dom.episodes
    index, problems = load(tmp_path / 'out' / 'index.html')
    assert problems == [] and 'drift/report.html' in index


@needs_chromium
@pytest.mark.skipif(not REALDATA.is_dir(), reason='../shared/realdata is not beside the clone')
def test_every_real_flight_report_loads_cleanly_under_2_mb(tmp_path: Path) -> None:
    """ghost_review over the shared real flights: four reports, each checked in the browser."""
    assert main([str(REALDATA), '--output', str(tmp_path / 'out')]) == 0
    flights = sorted(path.stem for path in REALDATA.glob('*.ulg'))
    assert flights and sorted(p.name for p in (tmp_path / 'out').iterdir() if p.is_dir()) \
        == flights
    for flight in flights:
        dom = check_report(tmp_path / 'out' / flight / 'report.html',
                           tmp_path / 'out' / flight / 'bag')
        assert 'px4-events' in dom.svg_ids
