#!/usr/bin/env bash
# Build the ROS 2 Jazzy command-line tools vendored in ../shared/vendor/ros2-jazzy (ros2 launch,
# ros2 run, ros2 pkg, ros2 topic and what they import) into a cached install space, and print
# that install space's path on stdout. Test tools, not part of Ghost: the test suite runs the
# launch file and the console scripts through them (ghost_nodes/test/test_ros2_tools.py).
#
# Idempotent: the build is skipped when the vendored sources (and this script) hash as they did
# at the last successful build. Concurrent callers (two pytest processes) wait on a lock. The
# sources are read where they are, never copied into the repository; the install space lives in
# build/ros2_tools/ (git-ignored; build/ is COLCON_IGNOREd, so the workspace build never
# crawls it).
#
#   bash scripts/ros2_tools.sh            # -> <repo>/build/ros2_tools/install
#   source scripts/env.sh && source "$(bash scripts/ros2_tools.sh)/local_setup.bash"
#
# Environment: GHOST_ROS2_VENDOR (default: <repo>/../shared/vendor/ros2-jazzy).
# Exit codes: 0 ready; 2 the vendored sources are missing; 1 the build failed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
vendor=${GHOST_ROS2_VENDOR:-$root/../shared/vendor/ros2-jazzy}
base=$root/build/ros2_tools
say() { printf '[ros2_tools] %s\n' "$*" >&2; }

if [ ! -d "$vendor" ]; then
  say "no vendored ROS 2 tools at $vendor (see ../shared/vendor/ros2-jazzy/README.md)"
  exit 2
fi
vendor=$(cd "$vendor" && pwd)
mkdir -p "$base"
# build/ is already COLCON_IGNOREd; marking this folder too keeps it out of any crawl rooted here.
touch "$base/COLCON_IGNORE"

exec 9>"$base/.lock"
flock 9

# shellcheck source=scripts/env.sh
source "$root/scripts/env.sh" --no-install

# What the install space depends on: every vendored file, this script (the build command) and
# the interpreter the packages are built for.
src_hash=$( { cd "$vendor" && find . -type f ! -path '*/__pycache__/*' ! -name '*.pyc' -print0 \
                | sort -z | xargs -0 sha256sum;
              sha256sum "$root/scripts/ros2_tools.sh" | cut -d' ' -f1;
              echo "$VIRTUAL_ENV"; } | sha256sum | cut -d' ' -f1)
install=$base/install
stamp=$install/.ghost-vendor.sha256
if [ -f "$install/local_setup.bash" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$src_hash" ]; then
  echo "$install"
  exit 0
fi

say "building the vendored ROS 2 tools from $vendor (about 30 s)"
# A clean build: a stale install space (a package removed or renamed) must not survive.
rm -rf "$base/build" "$install" "$base/log"
started=$(date +%s)
if ! colcon --log-base "$base/log" build --base-paths "$vendor" \
      --build-base "$base/build" --install-base "$install" \
      --event-handlers console_cohesion- summary+ \
      --cmake-args -DBUILD_TESTING=OFF -DPython3_EXECUTABLE="$VIRTUAL_ENV/bin/python" \
      >"$base/colcon.txt" 2>&1; then
  tail -n 40 "$base/colcon.txt" >&2
  say "colcon build failed (full log: $base/colcon.txt)"
  exit 1
fi
echo "$src_hash" > "$stamp"
say "built in $(( $(date +%s) - started )) s: $install"
echo "$install"
