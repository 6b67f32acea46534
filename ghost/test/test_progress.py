"""ghost_run's progress: a tqdm bar on a terminal, a one-line status otherwise."""

import io

import pytest

from ghost.progress import LoopProgress

pytestmark = pytest.mark.bag


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_not_a_terminal_gets_a_status_line_now_and_then() -> None:
    stream = io.StringIO()
    progress = LoopProgress(30, stream=stream, every_s=0.0)
    progress.update(3, 'PROCEED')
    progress.update(7, 'HOLD')
    progress.close()
    lines = stream.getvalue().splitlines()
    assert [line.rsplit(',', 1)[0] for line in lines] == [
        'ghost: 3/30 cycles, decision PROCEED', 'ghost: 7/30 cycles, decision HOLD']
    assert all(line.endswith(' s') for line in lines)


def test_not_a_terminal_is_quiet_between_lines() -> None:
    stream = io.StringIO()
    progress = LoopProgress(None, stream=stream, every_s=3600.0)
    for cycles in range(50):
        progress.update(cycles, 'PROCEED')
    assert stream.getvalue() == ''


def test_a_terminal_gets_a_bar_with_the_decision() -> None:
    stream = _Terminal()
    progress = LoopProgress(30, stream=stream, every_s=0.0)
    progress.update(12, 'ABSTAIN_UNCERTAIN')
    shown = stream.getvalue()
    assert '12/30' in shown and 'ABSTAIN_UNCERTAIN' in shown and 'cycle' in shown
    assert 'ghost: 12/30 cycles' not in shown  # the bar, not the status line
    progress.close()
