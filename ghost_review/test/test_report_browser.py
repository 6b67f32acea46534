"""report.html in a real browser: headless Chromium loads it from file:// with no console error.

The DOM must hold the decision timeline and exactly the episodes the bag's /decisions imply
(computed here from the bag with mcap_ros2, not with ghost_review), stay under 2 MB and name
no network resource. Laid out at 1400x1800 (a probe script measures a copy of the page, the
page itself has none): the verdict word is the first text, the first failure's link lands on
its episode or cycle, every mark of every plot has its legend entry, and the index shows four
flights on one screen. Skips with one line without Chromium (.ci/run installs it).
"""

from html.parser import HTMLParser
import json
from pathlib import Path
import re
import shutil
import subprocess
from typing import Any

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


#: The screen a page must work on.
SCREEN = (1400, 1800)
#: Measures the laid-out page after load and writes what it found into <pre id="probe">.
PROBE = """<script>
window.addEventListener('load', () => {
  const box = (e) => { const r = e.getBoundingClientRect();
    return {left: r.left, top: r.top + scrollY, width: r.width, height: r.height}; };
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT,
    {acceptNode: (n) => n.textContent.trim() ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_SKIP});
  const first = walker.nextNode();
  const target = document.querySelector(':target');
  const lanes = [...document.querySelectorAll('svg.lane')].map((svg) => ({
    id: svg.id,
    marks: [...svg.querySelectorAll('rect, path, line')]
      .filter((e) => !e.classList.contains('grid'))
      .map((e) => { const cls = e.getAttribute('class');
        return ['band', 'gate'].includes(cls) ? e.dataset.state
          : cls === 'event' ? e.dataset.credit : cls; }),
    keys: [...document.querySelectorAll(`.legend[data-lane="${svg.id}"] .key`)]
      .filter((k) => box(k).width > 0 && k.textContent.trim()).map((k) => k.dataset.key),
    decades: [...svg.querySelectorAll('text.decade')].map((t) => [t.textContent, box(t).top]),
  }));
  const out = {first: first ? {text: first.textContent.trim(), id: first.parentElement.id,
                               top: box(first.parentElement).top} : null,
               target: target ? {id: target.id, top: target.getBoundingClientRect().top,
                                 cls: target.className} : null,
               scrollY: scrollY, innerHeight: innerHeight,
               scrollWidth: document.documentElement.scrollWidth,
               flights: [...document.querySelectorAll('tr.flight')].map(box), lanes: lanes};
  const pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def _chromium(url: str, *extra: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    return subprocess.run(
        [CHROMIUM, '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
         '--hide-scrollbars', f'--window-size={SCREEN[0]},{SCREEN[1]}',
         '--enable-logging=stderr', '--v=0', *extra, '--dump-dom', url],
        capture_output=True, text=True, timeout=120, check=False)


def probe(page: Path, fragment: str = '') -> dict[str, Any]:
    """What PROBE measures on `page` (a copy beside it with the script) at 1400x1800."""
    copy = page.with_name(f'{page.stem}.probe.html')
    copy.write_text(page.read_text(encoding='utf-8').replace('</body>', f'{PROBE}</body>'),
                    encoding='utf-8')
    try:
        done = _chromium(copy.resolve().as_uri() + fragment)
    finally:
        copy.unlink()
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r'<pre id="probe">(.*?)</pre>', done.stdout, re.DOTALL)
    assert found is not None, done.stdout[-2000:]
    result: dict[str, Any] = json.loads(found.group(1).replace('&amp;', '&').replace(
        '&lt;', '<').replace('&gt;', '>'))
    return result


def load(page: Path) -> tuple[str, list[str]]:
    """(the DOM after load, the console messages and failed loads) of a page in Chromium."""
    done = _chromium(page.resolve().as_uri())
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
def test_every_real_flight_report_loads_cleanly_under_2_mb(real_review: Path) -> None:
    """ghost_review over the shared real flights: four reports, each checked in the browser."""
    flights = sorted(path.stem for path in REALDATA.glob('*.ulg'))
    assert flights and sorted(p.name for p in real_review.iterdir() if p.is_dir()) == flights
    for flight in flights:
        dom = check_report(real_review / flight / 'report.html', real_review / flight / 'bag')
        assert 'px4-events' in dom.svg_ids


def _decade_labels(lane: dict[str, Any]) -> list[float]:
    """The values of a lane's decade labels, top to bottom ('10 m' -> 10)."""
    labels = sorted(lane['decades'], key=lambda label: label[1])
    return [float(text.split()[0]) for text, _ in labels]


@needs_chromium
def test_the_verdict_word_comes_first_and_every_mark_has_its_legend(real_review: Path) -> None:
    """Each real report: the verdict first, a legend for every mark, a label per decade.

    The verdict word is the first text, at the top; every band, bar, line and marker of
    every plot has a visible legend entry; log axes have one label per decade.
    """
    for flight in sorted(path.stem for path in REALDATA.glob('*.ulg')):
        found = probe(real_review / flight / 'report.html')
        assert found['first']['text'] == 'VERIFIED WITH LIMITS', flight
        assert found['first']['id'] == 'verdict' and found['first']['top'] < 60
        assert found['scrollWidth'] <= SCREEN[0]
        lanes = {lane['id']: lane for lane in found['lanes']}
        assert {'timeline', 'sigma-position', 'sigma-velocity', 'sigma-orientation',
                'distance', 'fix-age', 'px4-events'} <= set(lanes)
        for lane in lanes.values():
            assert lane['marks'], (flight, lane['id'])
            missing = set(lane['marks']) - set(lane['keys'])
            assert not missing, (flight, lane['id'], missing)
        for name in ('sigma-position', 'sigma-velocity', 'sigma-orientation', 'distance'):
            values = _decade_labels(lanes[name])
            assert len(values) >= 3, (flight, name, values)
            # One label per decade, each a power of ten ten times the one below it.
            assert all(high == pytest.approx(10 * low) for high, low
                       in zip(values, values[1:], strict=False)), (flight, name, values)
        # The grey "PX4 flags invalid" bar is explained where PX4 flags the position invalid.
        if flight in ('14_19_29', 'quadrotor_local'):
            assert 'nosigma' in lanes['sigma-position']['marks']
    # 14_19_29's distances have a median of a few thousandths of a σ: on the log axis they
    # span decades instead of lying flat on a 0-6 line.
    distance = next(lane for lane in probe(real_review / '14_19_29' / 'report.html')['lanes']
                    if lane['id'] == 'distance')
    assert min(_decade_labels(distance)) <= 1e-3


@needs_chromium
def test_four_flights_fit_on_one_screen_each_row_opening_with_its_verdict(
        real_review: Path) -> None:
    """The index of the four shared flights at 1400x1800: every row within the screen."""
    found = probe(real_review / 'index.html')
    assert len(found['flights']) == 4
    assert found['scrollWidth'] <= SCREEN[0]
    assert max(row['top'] + row['height'] for row in found['flights']) <= SCREEN[1]
    assert found['first']['text'].startswith('Ghost flight review')


@needs_chromium
@pytest.mark.parametrize(('flight', 'target'), [('proceed', 'cycle-'), ('command', 'episode-')])
def test_the_first_failure_is_first_and_its_link_lands_on_it(
        tampered_review: tuple[Path, int], flight: str, target: str) -> None:
    """NOT VERIFIED is the first text, and the first failure's link lands where it names.

    Following it scrolls to the episode or cycle row (Chromium's :target).
    """
    output, _ = tampered_review
    report = output / flight / 'report.html'
    found = probe(report)
    assert found['first']['text'] == 'NOT VERIFIED' and found['first']['id'] == 'verdict'
    link = re.search(r'class="first-failure fail"><b>[^<]*</b> at <a class="failure-link" '
                     r'href="(#[^"]+)"', report.read_text(encoding='utf-8'))
    assert link is not None and link.group(1).startswith(f'#{target}')
    landed = probe(report, link.group(1))
    assert landed['target'] is not None and f'#{landed["target"]["id"]}' == link.group(1)
    assert landed['scrollY'] > 0  # the page moved to it
    assert 0 <= landed['target']['top'] < landed['innerHeight']


DOCS = Path(__file__).resolve().parents[2] / 'docs' / 'review.md'


@needs_chromium
def test_the_documented_screenshot_command_takes_the_picture(real_review: Path,
                                                             tmp_path: Path) -> None:
    """docs/review.md's chromium line, on the review of the real flights: a PNG of its size."""
    line = next(line for line in DOCS.read_text(encoding='utf-8').splitlines()
                if line.startswith('chromium --headless'))
    args = line.split()
    size = next(arg for arg in args if arg.startswith('--window-size='))
    width, height = (int(v) for v in size.split('=', 1)[1].split(','))
    picture = tmp_path / 'review-report.png'
    assert '--screenshot=docs/review-report.png' in args
    args = [f'--screenshot={picture}' if arg.startswith('--screenshot=') else
            arg.replace('runs/review', str(real_review)) for arg in args]
    assert CHROMIUM is not None
    done = subprocess.run([CHROMIUM, *args[1:]], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    data = picture.read_bytes()
    assert data[:8] == b'\x89PNG\r\n\x1a\n'
    assert (int.from_bytes(data[16:20], 'big'), int.from_bytes(data[20:24], 'big')) == (
        width, height)
