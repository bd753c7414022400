#!/usr/bin/env bash
# `just test`: runs each recipe of the suite in turn (each as `just RECIPE`), keeps going past
# a failure so that one run reports every failing recipe, and ends with a table of recipe,
# seconds, tests passed and failed, and one closing line of totals. The tests of a recipe
# are read from its own runners' closing lines (ctest, the hostd test binaries' total,
# node's test runner, cargo test's "test result:" lines).
#
# A recipe written `+RECIPE` runs beside the others instead, in a background lane at the
# lowest CPU and I/O priority (nice 19, ionice idle): the lane starts when test-hostd's
# one-at-a-time group begins (test-parallel.sh touches $THROTTLESCOPE_ALONE_SIGNAL), whose
# tests mostly wait on devices the kernel slows, or when the foreground recipe before it
# ends, whichever comes first; its recipes run one after another and their output is
# printed whole when each ends. The foreground tests keep the CPUs they ask for: a nice-19
# task gets 1.5 % of a core against one of nice 0, and hostd runs at nice -10 in the
# real-device tests.
#
# Usage: test-all.sh [+]RECIPE...     Exit status: 0 when every recipe passed.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
logs=$(mktemp -d -t throttlescope-test-all.XXXXXX)
trap 'rm -rf "$logs"' EXIT

# passed failed of one recipe's log
count() {
    awk '
        /tests passed, [0-9]+ tests failed out of [0-9]+/ { # ctest
            for (i = 1; i <= NF; i++) if ($i == "of") tot = $(i + 1)
            for (i = 1; i <= NF; i++) if ($(i + 1) == "tests" && $(i + 2) == "failed") f = $i
            ct_p += tot - f; ct_f += f; ct = 1 }
        /^test binaries: [0-9]+ passed, [0-9]+ failed/ { tb_p += $3; tb_f += $5; tb = 1 }
        /(^|: )test result:/ {
            for (i = 1; i <= NF; i++) {
                if ($(i + 1) ~ /^passed/) tr_p += $i
                if ($(i + 1) ~ /^failed/) tr_f += $i } }
        /^# pass [0-9]+/ { n_p += $3; node = 1 }
        /^# fail [0-9]+/ { n_f += $3 }
        END {
            # The hostd binaries print their own "test result:" lines before their total:
            # the total stands for them (the doc tests after it are few and counted there).
            if (tb) { p = tb_p; f = tb_f } else { p = tr_p; f = tr_f }
            if (ct) { p += ct_p; f += ct_f }
            if (node) { p += n_p; f += n_f }
            printf "%d %d\n", p, f }' "$1"
}

rows=()
total_p=0 total_f=0 failed_recipes=()
t_all=$(date +%s)
export THROTTLESCOPE_ALONE_SIGNAL="$logs/alone-group-started"

# Records one recipe's outcome: recipe, exit status, seconds, log, note.
record() {
    local recipe=$1 rc=$2 secs=$3 log=$4 note=${5:-} p f status=ok
    read -r p f < <(count "$log")
    if ((rc != 0)); then
        status=FAILED
        failed_recipes+=("$recipe")
        ((f == 0)) && f=1 # a recipe that failed outside a test runner counts as one failure
    fi
    total_p=$((total_p + p)) total_f=$((total_f + f))
    rows+=("$(printf '%-18s %6d %8d %7d  %s%s' "$recipe" "$secs" "$p" "$f" "$status" "$note")")
}

# The background lane: waits for its start signal, runs each recipe at the lowest priority,
# and leaves "recipe rc seconds" lines in $logs/lane.tsv.
# Its anchor: the foreground recipe written just before the first `+RECIPE`.
lane=() lane_pid='' anchor='' last=''
for arg in "$@"; do
    if [[ $arg == +* ]]; then
        lane+=("${arg#+}")
        [[ -z $anchor ]] && anchor=$last
    else
        last=$arg
    fi
done
[[ -z $anchor ]] && touch "$logs/anchor-ended" # the lane comes first: it starts at once
start_lane() {
    (
        while [[ ! -e $THROTTLESCOPE_ALONE_SIGNAL && ! -e $logs/anchor-ended ]]; do sleep 1; done
        for recipe in "${lane[@]}"; do
            t0=$(date +%s) rc=0
            nice -n 19 ionice -c 3 just --justfile "$root/justfile" "$recipe" >"$logs/$recipe.log" 2>&1 || rc=$?
            printf '%s\t%d\t%d\n' "$recipe" "$rc" "$(($(date +%s) - t0))" >>"$logs/lane.tsv"
            { echo "== just $recipe (beside the others, done)"; cat "$logs/$recipe.log"; } >&2
        done
    ) &
    lane_pid=$!
}

foreground=()
for arg in "$@"; do [[ $arg == +* ]] || foreground+=("$arg"); done
for recipe in "${foreground[@]}"; do
    log="$logs/$recipe.log"
    t0=$(date +%s)
    echo "== just $recipe"
    [[ ${#lane[@]} -gt 0 && -z $lane_pid && ( $recipe == "$anchor" || -z $anchor ) ]] && start_lane
    just --justfile "$root/justfile" "$recipe" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    [[ $recipe == "$anchor" ]] && touch "$logs/anchor-ended"
    record "$recipe" "$rc" $(($(date +%s) - t0)) "$log"
done
[[ ${#lane[@]} -gt 0 && -z $lane_pid ]] && { touch "$logs/anchor-ended"; start_lane; }
if [[ -n $lane_pid ]]; then
    echo "== waiting for the recipes beside the others: ${lane[*]}"
    wait "$lane_pid"
    while IFS=$'\t' read -r recipe rc secs; do
        record "$recipe" "$rc" "$secs" "$logs/$recipe.log" "  (beside the others)"
    done <"$logs/lane.tsv"
    for recipe in "${lane[@]}"; do
        grep -q "^$recipe	" "$logs/lane.tsv" 2>/dev/null || { failed_recipes+=("$recipe"); total_f=$((total_f + 1)); rows+=("$(printf '%-18s %6s %8s %7d  %s' "$recipe" - - 1 "FAILED (never ran)")"); }
    done
fi

echo
echo "just test: recipes and their time"
printf '%-18s %6s %8s %7s  %s\n' recipe seconds passed failed status
printf '%s\n' "${rows[@]}"
printf '%-18s %6d %8d %7d\n' total "$(($(date +%s) - t_all))" "$total_p" "$total_f"
if ((${#failed_recipes[@]})); then
    echo "test-all: FAILED: ${failed_recipes[*]}" >&2
fi
echo "total: $total_p passed, $total_f failed"
((${#failed_recipes[@]} == 0))
