#!/usr/bin/env bash
# The whole test suite (called by `make test` after bootstrap): lint, strict typing, then pytest
# over every package's tests. Exits non-zero on any failure, and when pytest collects no test.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
# shellcheck source=scripts/env.sh
source scripts/env.sh

echo '== ruff'
ruff check .
echo '== mypy --strict (ghost_core, ghost_bag, ghost_verify, ghost_nodes, ghost_px4, ghost_ardupilot, ghost_mavros, ghost)'
mypy --strict ghost_core/ghost_core
mypy --strict ghost_bag/ghost_bag
mypy --strict ghost_verify/ghost_verify
mypy --strict ghost_nodes/ghost_nodes
mypy --strict ghost_px4/ghost_px4
mypy --strict ghost_ardupilot/ghost_ardupilot
mypy --strict ghost_mavros/ghost_mavros
mypy --strict ghost/ghost
echo '== pytest'
set +e
python -m pytest "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
  echo 'pytest collected no tests: that is a failure' >&2
  exit 1
fi
exit "$rc"
