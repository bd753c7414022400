#!/usr/bin/env bash
# End to end under Wine: the probe simulator (a Linux program) on a
# pseudo-terminal, mapped to a COM port in the Wine prefix; `hostd.exe run
# --profile quick --probe COMn` on a directory on this machine's disk; then the
# Linux `hostd analyze` reads the run directory and its phases (files, bytes,
# energy) must be the ones hostd.exe wrote in summary.json, files.csv and files-probe.csv.
# Usage: e2e.sh WINE HOSTD_EXE PROBE_SIM (WINEPREFIX set; see test.sh).
set -euo pipefail

wine=$1 exe=$2 sim=$3
root=$(cd "$(dirname "$0")/../.." && pwd)
say() { printf 'test-windows e2e: %s\n' "$*" >&2; }

(cd "$root/hostd" && cargo build --locked --quiet -p hostd)
linux_hostd=${CARGO_TARGET_DIR:-$root/hostd/target}/debug/hostd

work=$(mktemp -d -p /var/tmp throttlescope-wine.XXXXXX) # on disk, not tmpfs
sim_pid=
com=
cleanup() {
  [[ -n $sim_pid ]] && { echo quit >&3 || true; kill "$sim_pid" 2>/dev/null || true; wait "$sim_pid" 2>/dev/null || true; }
  [[ -n $com ]] && rm -f "$WINEPREFIX/dosdevices/$com"
  if [[ $ok == 1 ]]; then rm -rf "$work"; else say "kept $work for a look"; fi
}
ok=0
trap cleanup EXIT

# The simulator announces its pty as `pty PATH`; its stdin stays open on fd 3.
mkfifo "$work/sim.in"
"$sim" <"$work/sim.in" >"$work/sim.out" 2>"$work/sim.err" &
sim_pid=$!
exec 3>"$work/sim.in"
for _ in $(seq 100); do
  pty=$(sed -n 's/^pty //p' "$work/sim.out" | head -n 1)
  [[ -n $pty ]] && break
  sleep 0.1
done
[[ -n ${pty:-} ]] || { cat "$work/sim.err" >&2; say "the simulator announced no pty"; exit 1; }

# A COM port no other prefix user holds: the first free comN from com10.
for n in $(seq 10 40); do
  [[ -e $WINEPREFIX/dosdevices/com$n || -L $WINEPREFIX/dosdevices/com$n ]] || { com=com$n; break; }
done
[[ -n $com ]] || { say "no free COM port name in $WINEPREFIX/dosdevices"; exit 1; }
ln -s "$pty" "$WINEPREFIX/dosdevices/$com"
port=${com^^}

mkdir "$work/target"
win() { printf 'Z:%s' "${1//\//\\}"; }
say "hostd.exe run --profile quick --probe $port ($pty) --target $(win "$work/target")"
start=$EPOCHREALTIME
"$wine" "$exe" run --profile quick --probe "$port" --seed 7 \
  --target "$(win "$work/target")" --out "$(win "$work/run")" >"$work/wine-run.log" 2>&1 ||
  { cat "$work/wine-run.log" >&2; say "hostd.exe run failed"; exit 1; }
say "hostd.exe run took $(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s"

# hostd.exe's own analysis (events.json) before the Linux one replaces it.
cp "$work/run/events.json" "$work/events-windows.json"
"$linux_hostd" analyze --json --no-report "$work/run" >"$work/analysis.json"
python3 - "$work/run" "$work/analysis.json" "$work/events-windows.json" <<'PY'
import csv, json, math, sys
run, analysis, own = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
summary = json.load(open(f"{run}/summary.json"))
manifest = json.load(open(f"{run}/manifest.json"))
rows = list(csv.DictReader(open(f"{run}/files.csv")))
# The probe's per-file figures, written once at the run's end, keyed as files.csv's rows.
probe_rows = {(x["target"], x["phase"], x["index"]): x for x in csv.DictReader(open(f"{run}/files-probe.csv"))}
problems = []
def check(what, wrote, read, tol=1e-9):
    same = wrote == read if not isinstance(wrote, float) else math.isclose(wrote, read, rel_tol=tol, abs_tol=tol)
    print(f"  {what}: hostd.exe {wrote}, Linux analyze {read}" + ("" if same else "  <-- DIFFERS"))
    if not same:
        problems.append(what)
assert summary["status"] == "completed", summary["status"]
assert manifest["host"]["os"] == "windows", manifest["host"]
wrote = {(p["target"], p["phase"]): p for p in summary["phases"]}
own = {(p["target"], p["phase"]): p for p in own["phases"]}
read = {(p["target"], p["phase"]): p for p in analysis["phases"]}
check("phases", sorted(wrote), sorted(read))
for key in sorted(wrote):
    w, o, r = wrote[key], own.get(key, {}), read.get(key, {})
    here = [x for x in rows if (x["target"], x["phase"]) == key and x["status"] == "ok"]
    check(f"{key[1]} files (summary.json)", w["files"], r.get("files"))
    check(f"{key[1]} files (files.csv)", len(here), r.get("files"))
    check(f"{key[1]} bytes (summary.json)", w["bytes"], r.get("bytes"))
    check(f"{key[1]} bytes (files.csv)", sum(int(x["bytes"]) for x in here), r.get("bytes"))
    if o.get("energy_j") is None or r.get("energy_j") is None:
        problems.append(f"{key[1]} energy missing")
        print(f"  {key[1]} energy: hostd.exe {o.get('energy_j')}, Linux analyze {r.get('energy_j')}  <-- MISSING")
        continue
    check(f"{key[1]} energy J (events.json)", float(o["energy_j"]), float(r["energy_j"]))
    # files-probe.csv keeps 6 decimals of each file's joules.
    joules = [probe_rows[(x["target"], x["phase"], x["index"])]["energy_j"] for x in here]
    check(f"{key[1]} energy J (files-probe.csv)", sum(float(j) for j in joules), float(r["energy_j"]), 1e-6 * (len(here) + 1))
print("  engine:", ", ".join(sorted({t.get("engine", "?") for t in manifest["targets"]})),
      "| direct I/O:", ", ".join(sorted({json.dumps(t.get("direct_io")) for t in manifest["targets"]})),
      "| kernel:", manifest["host"].get("kernel"))
print("  link:", "; ".join(str((t.get("link") or {}).get("text")) for t in manifest["targets"]))
sys.exit(f"test-windows e2e: figures differ: {', '.join(problems)}" if problems else 0)
PY
say "the Linux analysis agrees with what hostd.exe wrote"

# Ctrl-C: Wine turns SIGINT into a console CTRL_C_EVENT; the run must end
# cleanly (status 130, summary `interrupted`, its test files removed).
cat >"$work/many.toml" <<'TOML'
name = "many"
description = "test-windows: a run long enough to interrupt"
kind = "files"
[files]
count = 200
min_size = "4MB"
max_size = "4MB"
[io]
block_size = "1MiB"
queue_depth = 4
phases = ["write", "read"]
TOML
mkdir "$work/target2"
"$wine" "$exe" run --profile "$(win "$work/many.toml")" --target "$(win "$work/target2")" \
  --out "$(win "$work/run2")" >"$work/wine-run2.log" 2>&1 &
run_pid=$!
for _ in $(seq 200); do # until the first file is recorded
  [[ $(wc -l 2>/dev/null <"$work/run2/files.csv" || echo 0) -ge 2 ]] && break
  sleep 0.1
done
kill -INT "$run_pid"
status=0
wait "$run_pid" || status=$?
[[ $status == 130 ]] || { cat "$work/wine-run2.log" >&2; say "Ctrl-C: hostd.exe exited with $status, not 130"; exit 1; }
grep -q '"status": *"interrupted"' "$work/run2/summary.json" || { say "Ctrl-C: summary.json does not say interrupted"; exit 1; }
[[ -z $(ls -A "$work/target2") ]] || { ls -R "$work/target2" >&2; say "Ctrl-C: test files left behind"; exit 1; }
say "Ctrl-C ended the run cleanly (exit 130, interrupted, $(($(wc -l <"$work/run2/files.csv") - 1)) files recorded, test files removed)"
ok=1
