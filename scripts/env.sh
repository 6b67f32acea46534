# Source this file to use the no-ROS Ghost workspace: the venv's ROS 2 Jazzy and the colcon
# install space (verify_*, ghost nodes, ghost_interfaces) on PATH/PYTHONPATH.
# `source scripts/env.sh --no-install` sets up only the venv (used by bootstrap before building).
# `source scripts/env.sh --ros2` adds Jazzy's ros2 CLI (launch, run, pkg, topic) that `make ros2`
# built from ../shared/vendor/ros2-jazzy (scripts/vendored.sh), for a machine without ROS.
_ghost_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
_ghost_venv=${GHOST_VENV:-$_ghost_root/.venv}
export VIRTUAL_ENV=$_ghost_venv
case ":$PATH:" in *":$_ghost_venv/bin:"*) ;; *) export PATH="$_ghost_venv/bin:$PATH" ;; esac
export AMENT_PREFIX_PATH="$_ghost_venv${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
export CMAKE_PREFIX_PATH="$_ghost_venv${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
export RMW_IMPLEMENTATION=${RMW_IMPLEMENTATION:-rmw_fastrtps_cpp}
if [ "${1:-}" != "--no-install" ] && [ -f "$_ghost_root/install/local_setup.bash" ]; then
  # colcon's own setup script: AMENT_PREFIX_PATH, PYTHONPATH, PATH and library paths.
  # It reads unset variables, so it runs without `set -u` even when the caller uses it.
  case $- in *u*) _ghost_nounset=1; set +u ;; *) _ghost_nounset= ;; esac
  COLCON_CURRENT_PREFIX="$_ghost_root/install" source "$_ghost_root/install/local_setup.bash"
  [ -n "$_ghost_nounset" ] && set -u
  unset _ghost_nounset
fi
if [ "${1:-}" = "--ros2" ]; then
  if [ -f "$_ghost_root/build/vendored/ros2-jazzy/install/local_setup.bash" ]; then
    case $- in *u*) _ghost_nounset=1; set +u ;; *) _ghost_nounset= ;; esac
    source "$_ghost_root/build/vendored/ros2-jazzy/install/local_setup.bash"
    [ -n "$_ghost_nounset" ] && set -u
    unset _ghost_nounset
  else
    echo "scripts/env.sh: no ros2 CLI built in this clone: run make ros2 first" >&2
  fi
fi
mkdir -p "$_ghost_root/log"
unset _ghost_root _ghost_venv
