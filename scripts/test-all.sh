#!/usr/bin/env bash
# `just test`: runs each recipe of the suite in turn (each as `just RECIPE`), keeps going past
# a failure so that one run reports every failing recipe, and ends with a table of recipe,
# seconds, tests passed and failed, and one closing line of totals. The tests of a recipe
# are read from its own runners' closing lines (ctest, the hostd test binaries' total,
# node's test runner, cargo test's "test result:" lines).
#
# Usage: test-all.sh RECIPE...     Exit status: 0 when every recipe passed.
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
for recipe in "$@"; do
    log="$logs/$recipe.log"
    t0=$(date +%s)
    echo "== just $recipe"
    just --justfile "$root/justfile" "$recipe" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    secs=$(($(date +%s) - t0))
    read -r p f < <(count "$log")
    status=ok
    if ((rc != 0)); then
        status=FAILED
        failed_recipes+=("$recipe")
        ((f == 0)) && f=1 # a recipe that failed outside a test runner counts as one failure
    fi
    total_p=$((total_p + p)) total_f=$((total_f + f))
    rows+=("$(printf '%-18s %6d %8d %7d  %s' "$recipe" "$secs" "$p" "$f" "$status")")
done

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
