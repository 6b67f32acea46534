#!/usr/bin/env bash
# Build a package set vendored in ../shared/vendor/ into a cached install space and print that
# install space's path on stdout. Test dependencies, not part of Ghost:
#   ros2-jazzy  the unmodified Jazzy sources of ros2 launch/run/pkg/topic and what they import:
#               the tests run the launch file and the console scripts through them
#               (ghost/test/test_ros2_tools.py, fixture `ros2_tools`);
#   px4_msgs    a subset of PX4's message package (a rosidl CMake package, built like
#               ghost_interfaces): the px4_bridge tests need its types (fixture `px4_msgs_env`);
#               a PX4 user builds the whole package in their own workspace;
#   mavros_msgs a subset of MAVROS's message package (rosidl CMake, built alike): the
#               mavros_bridge tests need its types (fixture `mavros_msgs_env`); a MAVROS user
#               has the whole package with MAVROS.
#
# Idempotent: the build is skipped when the vendored sources (and this script) hash as they did
# at the last successful build. Concurrent callers (two pytest processes) wait on a lock. The
# sources are read where they are, never copied into the repository; the install space lives in
# build/vendored/<name>/ (git-ignored; build/ is COLCON_IGNOREd, so the workspace build never
# crawls it).
#
#   bash scripts/vendored.sh ros2-jazzy            # -> <repo>/build/vendored/ros2-jazzy/install
#   source scripts/env.sh && source "$(bash scripts/vendored.sh ros2-jazzy)/local_setup.bash"
#
# Usage: vendored.sh NAME [SOURCES] (SOURCES default: <repo>/../shared/vendor/NAME).
# Exit codes: 0 ready; 2 the vendored sources are missing (or a bad NAME); 1 the build failed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
name=${1:-}
say() { printf '[vendored %s] %s\n' "$name" "$*" >&2; }
case "$name" in
  ros2-jazzy) what='the vendored ROS 2 tools'; expect=README.md; about='about 40 s of CPU' ;;
  px4_msgs) what='the vendored px4_msgs'; expect=package.xml; about='once per clone' ;;
  mavros_msgs) what='the vendored mavros_msgs'; expect=package.xml; about='once per clone' ;;
  *) echo "usage: $0 ros2-jazzy|px4_msgs|mavros_msgs [SOURCES]" >&2; exit 2 ;;
esac
vendor=${2:-$root/../shared/vendor/$name}
base=$root/build/vendored/$name

if [ ! -f "$vendor/$expect" ]; then
  say "no $what at $vendor (see ../shared/vendor/$name/README.md)"
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
              sha256sum "$root/scripts/vendored.sh" | cut -d' ' -f1;
              echo "$VIRTUAL_ENV"; } | sha256sum | cut -d' ' -f1)
install=$base/install
stamp=$install/.ghost-vendor.sha256
if [ -f "$install/local_setup.bash" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$src_hash" ]; then
  echo "$install"
  exit 0
fi

say "building $what from $vendor ($about)"
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
