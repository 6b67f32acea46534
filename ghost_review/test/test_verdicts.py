"""The verdict at a glance: the word first, the failure linked to where it was, the exit code.

On the shared real flights (every one VERIFIED WITH LIMITS: BAUD-v1 vacuous, fixes from the
GNSS the estimator fuses) and on two edits of one of them that verify_all rejects (fixtures in
conftest.py). What the page shows in a browser: test_report_browser.py.
"""

from pathlib import Path
import re
import subprocess
import sys

from ghost_review_test.conftest import TAMPERED_FLIGHT, TAMPERED_STAMP_NS
from ghost_review_test.review_bags import REALDATA
import pytest

from ghost_core.cli import ExitCode
from ghost_review.cli import main

pytestmark = pytest.mark.bag


def _body(page: Path) -> str:
    html = page.read_text(encoding='utf-8')
    return html.split('<body>', 1)[1]


def test_real_flights_are_verified_with_their_limits_named(real_review: Path) -> None:
    """Each report opens with VERIFIED WITH LIMITS and names the limits beside it, once."""
    flights = sorted(path.stem for path in REALDATA.glob('*.ulg'))
    for flight in flights:
        body = _body(real_review / flight / 'report.html')
        assert body.startswith('<header id="glance"><p class="glance"><span id="verdict" '
                               'class="verdict limit">VERIFIED WITH LIMITS</span>'), flight
        glance = body.split('</header>', 1)[0]
        assert 'BAUD-v1 vacuous' in glance
        assert 'BAUD-v1 vacuous: no drift precondition ever held' in glance
        assert '(vacuous)' not in body and 'badge' not in body
        assert body.count('HOLDS vacuously (0 cycles)') >= 1
    # Every flight with fixes says they are the GNSS its estimator fuses, in one line.
    for flight in ('14_19_29', 'esc_status_log', 'log_123_2024-3-1-14-47-02'):
        glance = _body(real_review / flight / 'report.html').split('</header>', 1)[0]
        assert 'fixes not independent of the estimator' in glance
        assert glance.count('the GNSS its estimator fuses') == 1
        assert 'RTK' in glance and 'motion capture' in glance
    # No fix at all: nothing to be independent of.
    glance = _body(real_review / 'quadrotor_local' / 'report.html').split('</header>', 1)[0]
    assert 'fixes not independent' not in glance


def test_the_index_opens_each_row_with_its_verdict(real_review: Path) -> None:
    """One verdict word per row, first; the lead column credits no battery failsafe."""
    index = (real_review / 'index.html').read_text(encoding='utf-8')
    rows = re.findall(r'<tr class="flight"[^>]*>(.*?)</tr>', index)
    assert len(rows) == len(list(REALDATA.glob('*.ulg')))
    for row in rows:
        assert row.startswith('<td><span class="verdict limit">VERIFIED WITH LIMITS</span></td>')
    quadrotor = next(row for row in rows if 'quadrotor_local/report.html' in row)
    assert 'listed, not credited: battery failsafe' in quadrotor
    assert 'ahead' not in quadrotor
    assert 'none (PROCEED then and after' not in index


def test_a_not_verified_flight_exits_1_and_its_failure_comes_first(
        tampered_review: tuple[Path, int]) -> None:
    """Exit 1 (as verify_all); every file is written; each report leads with the failure."""
    output, code = tampered_review
    assert code == ExitCode.VIOLATED
    for flight in ('proceed', 'command', 'bag'):
        assert (output / flight / 'report.html').is_file()
    proceed = _body(output / 'proceed' / 'report.html')
    assert proceed.startswith('<header id="glance"><p class="glance"><span id="verdict" '
                              'class="verdict fail">NOT VERIFIED</span>')
    first = re.search(r'<p class="first-failure fail"><b>(.*?)</b> at <a class="failure-link" '
                      r'href="#([^"]+)">', proceed)
    assert first is not None
    # The rewritten decision left the episode: the link is the cycle's, and the cycle exists.
    assert first.group(1).startswith('chain: VIOLATED')
    assert first.group(2) == f'cycle-{TAMPERED_STAMP_NS}'
    assert f'id="cycle-{TAMPERED_STAMP_NS}"' in proceed
    command = _body(output / 'command' / 'report.html')
    first = re.search(r'<p class="first-failure fail"><b>(.*?)</b> at <a class="failure-link" '
                      r'href="#([^"]+)">', command)
    assert first is not None and first.group(1).startswith('conformance: VIOLATED')
    episode = first.group(2)
    assert episode == 'episode-1'
    start, end = re.search(rf'id="{episode}" data-decision="ABSTAIN_UNCERTAIN" '
                           r'data-start-ns="(\d+)" data-end-ns="(\d+)"', command).groups()
    assert int(start) <= TAMPERED_STAMP_NS < int(end)
    # The untouched bag still verifies, with its limits.
    assert 'VERIFIED WITH LIMITS' in _body(output / 'bag' / 'report.html')[:200]
    index = (output / 'index.html').read_text(encoding='utf-8')
    assert index.count('<span class="verdict fail">NOT VERIFIED</span>') == 2
    assert f'href="proceed/report.html#cycle-{TAMPERED_STAMP_NS}"' in index
    assert 'href="command/report.html#episode-1"' in index


def test_the_exit_code_is_the_largest_that_applies(tampered_review: tuple[Path, int],
                                                   tmp_path: Path) -> None:
    """NOT VERIFIED beside an unreadable input: 3 (as verify_all over many bags)."""
    output, _ = tampered_review
    (tmp_path / 'notes.txt').write_text('not a flight\n', encoding='utf-8')
    proceed = output.parent / 'proceed'
    assert main([str(proceed), str(tmp_path / 'notes.txt'), '--output',
                 str(tmp_path / 'out')]) == ExitCode.BAD_INPUT
    done = subprocess.run([sys.executable, '-m', 'ghost_review', str(proceed), '--output',
                           str(tmp_path / 'again')], capture_output=True, text=True,
                          check=False, timeout=300)
    assert done.returncode == ExitCode.VIOLATED, done.stderr
    assert done.stdout.splitlines()[-1].endswith('; NOT VERIFIED: proceed')
    assert TAMPERED_FLIGHT  # the edits are of this real flight


@pytest.mark.parametrize('bridge', ['px4_bridge', 'ap_bridge', 'mavros_bridge'])
def test_a_bridge_that_differs_leads_the_verdict_at_its_cycle(bridge: str) -> None:
    """Each bridge's replay section (px4, ArduPilot, MAVROS) links its failure to its cycle."""
    from ghost_review.verdict import verdict_of

    line = f'{bridge}: DIFFERS (9 of 10 outputs re-derived exactly; 1 differ; ...)'
    document = {'replay': {bridge: {'holds': False, 'first_difference': {
        'cycle_stamp_ns': 4_200_000_000}}}}
    verdict = verdict_of(['replay: 60/60 messages re-derived exactly (10 cycles, ...)', line,
                          f'NOT VERIFIED: {line}'], ExitCode.VIOLATED, document)
    failing = [check for check in verdict.checks if check.name == bridge]
    assert verdict.lead == bridge and failing and failing[0].stamp_ns == 4_200_000_000
