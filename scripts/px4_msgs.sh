#!/usr/bin/env bash
# Build the px4_msgs subset vendored in ../shared/vendor/px4_msgs (unmodified upstream sources of
# PX4/px4_msgs: seven messages, see its README) into a cached install space, and print that
# install space's path on stdout. A test dependency, not part of Ghost: a PX4 user builds the
# whole px4_msgs package in their own workspace; Ghost's tests of px4_bridge need these types
# (ghost_nodes/test/test_px4_bridge.py, through the `px4_env` fixture in conftest.py).
#
# Built like ghost_interfaces (a rosidl CMake message package) and cached like
# scripts/ros2_tools.sh: the build is skipped when the vendored sources (and this script) hash as
# they did at the last successful build; concurrent callers wait on a lock. The sources are read
# where they are, never copied into the repository; the install space lives in build/px4_msgs/
# (git-ignored; build/ is COLCON_IGNOREd, so the workspace build never crawls it).
#
#   bash scripts/px4_msgs.sh            # -> <repo>/build/px4_msgs/install
#   source scripts/env.sh && source "$(bash scripts/px4_msgs.sh)/local_setup.bash"
#
# Environment: GHOST_PX4_MSGS (default: <repo>/../shared/vendor/px4_msgs).
# Exit codes: 0 ready; 2 the vendored sources are missing; 1 the build failed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
vendor=${GHOST_PX4_MSGS:-$root/../shared/vendor/px4_msgs}
base=$root/build/px4_msgs
say() { printf '[px4_msgs] %s\n' "$*" >&2; }

if [ ! -f "$vendor/package.xml" ]; then
  say "no vendored px4_msgs at $vendor (see ../shared/vendor/px4_msgs/README.md)"
  exit 2
fi
vendor=$(cd "$vendor" && pwd)
mkdir -p "$base"
touch "$base/COLCON_IGNORE"

exec 9>"$base/.lock"
flock 9

# shellcheck source=scripts/env.sh
source "$root/scripts/env.sh" --no-install

src_hash=$( { cd "$vendor" && find . -type f ! -path '*/__pycache__/*' ! -name '*.pyc' -print0 \
                | sort -z | xargs -0 sha256sum;
              sha256sum "$root/scripts/px4_msgs.sh" | cut -d' ' -f1;
              echo "$VIRTUAL_ENV"; } | sha256sum | cut -d' ' -f1)
install=$base/install
stamp=$install/.ghost-vendor.sha256
if [ -f "$install/local_setup.bash" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$src_hash" ]; then
  echo "$install"
  exit 0
fi

say "building the vendored px4_msgs from $vendor (about a minute)"
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
