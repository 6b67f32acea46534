"""``python -m ghost_review``: the ghost_review command (ghost_replay and ghost_run run it)."""

import sys

from ghost_review.cli import main

sys.exit(main())
