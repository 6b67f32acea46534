#!/usr/bin/env bash
# make demo-ardupilot: real ArduPilot flight logs played as AP_DDS would, through Ghost and its
# command gate.
#
# For each log: ghost_run --ardupilot-log LOG --speed SPEED (ap_log_player on /ap/... with
# AP_DDS's QoS, /ap/odometry/filtered from the EKF3 variances -> ap_bridge -> the agent ->
# command_gate in ardupilot mode, fed by the stand-in mission ap_mission), recorded and
# verified (BAUD-v1, ERUR-v1, the chain, conformance, GATE-v1); then one line per log: what
# Ghost decided on its cycles, and what the gate let through and what it held, and why. Every
# log is played, one after the other, even after one fails. No vehicle answers /ap/mode_switch
# here: the gate records its requests as unanswered.
#
#   AP_LOGS         the logs (default: every ../shared/realdata/ardupilot/*.bin)
#   AP_SPEED        playback speed (default 4)
#   ARDUPILOT_MSGS  ardupilot_msgs sources to build when ardupilot_msgs is not importable yet
#                   (default ../shared/vendor/ardupilot_msgs, built with the geographic_msgs
#                   subset of ghost_ardupilot/test/interfaces); with your own ArduPilot
#                   workspace sourced, nothing is built
#   RUNS            where the runs go (default runs/)
#
# Exit code: 0 when every log ran and verified; else the first failing run's ghost_run code.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
say() { printf '[demo-ardupilot] %s\n' "$*" >&2; }
speed=${AP_SPEED:-4}
runs=${RUNS:-runs}
if [ -n "${AP_LOGS:-}" ]; then
  read -r -a logs <<< "$AP_LOGS"
else
  shopt -s nullglob
  logs=("$root"/../shared/realdata/ardupilot/*.bin)
  shopt -u nullglob
fi
if [ "${#logs[@]}" -eq 0 ]; then
  say "no ArduPilot logs: set AP_LOGS='a.bin b.bin' (default ../shared/realdata/ardupilot/*.bin,"
  say "not found)"
  exit 2
fi
source scripts/env.sh
if ! python -c 'import ardupilot_msgs.msg, geographic_msgs.msg' 2>/dev/null; then
  sources=${ARDUPILOT_MSGS:-$root/../shared/vendor/ardupilot_msgs}
  if [ ! -f "$sources/package.xml" ]; then
    say "ardupilot_msgs is not importable and $sources has no package.xml: source your"
    say "ArduPilot workspace (ardupilot_msgs, geographic_msgs) or set ARDUPILOT_MSGS"
    exit 2
  fi
  install=$(bash scripts/vendored.sh ardupilot_msgs "$sources")
  set +u  # colcon's setup scripts read unset variables
  COLCON_CURRENT_PREFIX=$install source "$install/local_setup.bash"
  set -u
fi
stamp=$(date -u +%Y%m%dT%H%M%SZ)
status=0
summaries=()
for log in "${logs[@]}"; do
  run="$runs/ardupilot-$(basename "$log" .bin)-$stamp"
  say "$log at ${speed}x -> $run"
  code=0
  ghost_run --ardupilot-log "$log" --speed "$speed" --run-dir "$run" || code=$?
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
    ghost = ', '.join(f'{kind.name} {decided[kind.name]}' for kind in DecisionKind
                      if decided[kind.name]) + f' of {sum(decided.values())} cycles'
except Exception as err:  # a damaged bag: the verdict above says what is wrong with it
    ghost = f'decisions not readable ({type(err).__name__})'
print(f"{pathlib.Path(log).name}: {'verified' if reports['holds'] else 'NOT verified'}; "
      f"Ghost: {ghost}; ERUR on {erur['cycles_precondition_held']}, BAUD on "
      f"{baud['cycles_precondition_held']} cycles; gate: {why or 'no records'}")
PY
)")
  fi
done
say "summary (Ghost's decisions per cycle; gate records per action/reason):"
for line in "${summaries[@]}"; do printf '  %s\n' "$line"; done
exit "$status"
