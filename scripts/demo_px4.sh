#!/usr/bin/env bash
# make demo-px4: real PX4 flight logs played as PX4 would, through Ghost and its command gate.
#
# For each log: ghost_run --px4-ulog LOG --speed SPEED (px4_log_player on fmu/out/... with
# PX4's QoS -> px4_bridge -> the agent -> command_gate in PX4 mode, fed by the stand-in
# mission), recorded and verified (BAUD-v1, ERUR-v1, the chain, conformance, GATE-v1); then one
# line per log: what Ghost decided on its cycles, and what the gate let through and what it
# held, and why. Every log is played, one after the other, even after one fails.
#
#   PX4_LOGS   the logs (default: every ../shared/realdata/*.ulg)
#   PX4_SPEED  playback speed (default 4)
#   PX4_MSGS   px4_msgs sources to build when px4_msgs is not importable yet (default
#              ../shared/vendor/px4_msgs); with your own PX4 workspace sourced, nothing is built
#   RUNS       where the runs go (default runs/)
#
# Exit code: 0 when every log ran and verified; else the first failing run's ghost_run code.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
say() { printf '[demo-px4] %s\n' "$*" >&2; }
speed=${PX4_SPEED:-4}
runs=${RUNS:-runs}
if [ -n "${PX4_LOGS:-}" ]; then
  read -r -a logs <<< "$PX4_LOGS"
else
  shopt -s nullglob
  logs=("$root"/../shared/realdata/*.ulg)
  shopt -u nullglob
fi
if [ "${#logs[@]}" -eq 0 ]; then
  say "no PX4 logs: set PX4_LOGS='a.ulg b.ulg' (default ../shared/realdata/*.ulg, not found)"
  exit 2
fi
source scripts/env.sh
if ! python -c 'import px4_msgs.msg' 2>/dev/null; then
  sources=${PX4_MSGS:-$root/../shared/vendor/px4_msgs}
  if [ ! -f "$sources/package.xml" ]; then
    say "px4_msgs is not importable and $sources has no package.xml: source your PX4"
    say "workspace (with px4_msgs built) or set PX4_MSGS to px4_msgs sources"
    exit 2
  fi
  install=$(bash scripts/vendored.sh px4_msgs "$sources")
  set +u  # colcon's setup scripts read unset variables
  COLCON_CURRENT_PREFIX=$install source "$install/local_setup.bash"
  set -u
fi
stamp=$(date -u +%Y%m%dT%H%M%SZ)
status=0
summaries=()
for log in "${logs[@]}"; do
  run="$runs/px4-$(basename "$log" .ulg)-$stamp"
  say "$log at ${speed}x -> $run"
  code=0
  ghost_run --px4-ulog "$log" --speed "$speed" --run-dir "$run" || code=$?
  if [ "$code" -ne 0 ] && [ "$status" -eq 0 ]; then status=$code; fi
  if [ -f "$run/reports.json" ]; then
    summaries+=("$(python - "$log" "$run/reports.json" "$run/bag" <<'PY' || echo "$(basename "$log"): no summary (see $run)"
import collections, json, pathlib, sys
from ghost_core.levels import DecisionKind
from ghost_verify.bag import GhostBag
log, reports = sys.argv[1], json.loads(pathlib.Path(sys.argv[2]).read_text())
gate, erur, baud = reports['gate'], reports['erur'], reports['baud']
why = ', '.join(f'{n} {k}' for k, n in sorted(gate.get('reason_counts', {}).items()))
try:
    decided = collections.Counter(
        DecisionKind(r.decision_kind).name for cycle in GhostBag(sys.argv[3]).cycles()
        for r in cycle.rationales[:1])
    total = sum(decided.values())
    ghost = ', '.join(f'{kind.name} {decided[kind.name]}' for kind in DecisionKind
                      if decided[kind.name]) + f' of {total} cycles'
except Exception as err:  # a damaged bag: the verdict above says what is wrong with it
    ghost = f'decisions not readable ({type(err).__name__})'
print(f"{pathlib.Path(log).name}: {'verified' if reports['holds'] else 'NOT verified'}; "
      f"Ghost: {ghost}; "
      f"ERUR on {erur['cycles_precondition_held']}, BAUD on {baud['cycles_precondition_held']} cycles; "
      f"gate: {why or 'no records'}")
PY
)")
  fi
done
say "summary (Ghost's decisions per cycle; gate records per action/reason):"
for line in "${summaries[@]}"; do printf '  %s\n' "$line"; done
exit "$status"
