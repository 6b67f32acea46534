"""Register this folder's helpers as ghost_review_test.<name> (test file names stay unique)."""

from pathlib import Path
import sys
import types

HERE = Path(__file__).resolve().parent

if 'ghost_review_test' not in sys.modules:
    _package = types.ModuleType('ghost_review_test')
    _package.__path__ = [str(HERE)]
    sys.modules['ghost_review_test'] = _package

# The fixtures below need the helpers registered above.
from ghost_review_test.review_bags import REALDATA, tampered_copy  # noqa: E402
import pytest  # noqa: E402

#: The real flight the NOT VERIFIED bags are made from, and a cycle of its first episode
#: (ABSTAIN_UNCERTAIN while PX4 flags its position invalid).
TAMPERED_FLIGHT = '14_19_29'
TAMPERED_STAMP_NS = 5_502_598_000


@pytest.fixture(scope='session')
def real_review(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """ghost_review over the shared real flights (../shared/realdata): the output folder."""
    from ghost_review.cli import main

    if not REALDATA.is_dir():
        pytest.skip('../shared/realdata is not beside the clone')
    output = tmp_path_factory.mktemp('real') / 'out'
    assert main([str(REALDATA), '--output', str(output)]) == 0
    return output


@pytest.fixture(scope='session')
def tampered_review(real_review: Path, tmp_path_factory: pytest.TempPathFactory
                    ) -> tuple[Path, int]:
    """Two edits of the real flight's Ghost bag, reviewed together: (output, exit code).

    'proceed': one ABSTAIN_UNCERTAIN decision rewritten to PROCEED (no hash recomputed): the
    cycle leaves the episode, so its failure links to the cycle. 'command': one actuation's
    command rewritten to CONTINUE_MISSION inside the episode: the failure links to it.
    """
    from ghost_review.cli import main

    folder = tmp_path_factory.mktemp('tampered')
    bag = real_review / TAMPERED_FLIGHT / 'bag'

    def proceed(message: dict[str, object]) -> None:
        message['decision']['kind'] = 0  # type: ignore[index]

    def command(message: dict[str, object]) -> None:
        message['command']['kind'] = 2  # type: ignore[index]

    made = [tampered_copy(bag, folder / 'proceed', '/decisions', TAMPERED_STAMP_NS, proceed),
            tampered_copy(bag, folder / 'command', '/actuations', TAMPERED_STAMP_NS, command)]
    output = folder / 'out'
    code = main([*(str(path) for path in made), str(bag), '--output', str(output)])
    return output, code
