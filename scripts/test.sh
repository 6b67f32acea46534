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
# Two phases: the unit and bag tiers on two workers (no ROS process: they share nothing), then
# the DDS and ros2-tools tiers one at a time (each run's graph keeps the machine busy). A phase
# with no test for the given arguments (-k ...) is fine; no test in both is a failure.
echo '== pytest: unit and bag tiers (2 workers)'
set +e
python -m pytest -n 2 -m 'unit or bag' "$@"
fast=$?
echo '== pytest: dds and ros2_tools tiers'
python -m pytest -m 'not (unit or bag)' "$@"
slow=$?
set -e
if [ "$fast" -eq 5 ] && [ "$slow" -eq 5 ]; then
  echo 'pytest collected no tests: that is a failure' >&2
  exit 1
fi
for rc in "$fast" "$slow"; do
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 5 ]; then
    exit "$rc"
  fi
done
exit 0
