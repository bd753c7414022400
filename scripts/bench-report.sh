#!/usr/bin/env bash
# The comparison page of ten synthetic 100-GB runs (`scenario-gen`: x5-gradual and
# p50-slc-13gb, five seeds each, probe at 100 Hz): `hostd compare --report` wall time, the
# page's size (target < 1 MB) and its render time in headless Chromium (target < 2 s):
#   - in the page: performance.now() once the load event has fired and a forced layout of
#     every element is done (navigation start → parsed, styled and laid out), from a copy
#     of the page that allows exactly that script;
#   - outside: the wall time of a headless screenshot of the page (start, parse, layout,
#     paint) less that of an empty page, median of ROUNDS (5).
# Usage: bench-report.sh HOSTD SCENARIO_GEN   (CHROMIUM picks the browser)
set -euo pipefail

hostd=${1:?usage: bench-report.sh HOSTD SCENARIO_GEN}
gen=${2:?usage: bench-report.sh HOSTD SCENARIO_GEN}
chromium=${CHROMIUM:-chromium}
rounds=${ROUNDS:-5}
work=$(mktemp -d -p /var/tmp throttlescope-bench-report.XXXXXX)
trap 'rm -rf "$work"' EXIT

runs=()
for k in 0 1 2 3 4; do
    for sc in x5-gradual p50-slc-13gb; do
        "$gen" "$sc" "$work/$sc-$k" --seed-offset "$k" >/dev/null
        runs+=("$work/$sc-$k")
    done
done
echo "bench-report: 10 runs of 100 GB, $(( $(cat "$work"/*/files.csv | wc -l) - 10 )) files in all"

t0=$(date +%s%N)
"$hostd" compare --report "$work/compare.html" "${runs[@]}" >/dev/null 2>&1
compare_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
size=$(stat -c %s "$work/compare.html")

# The copy that may run the timing script (the page itself allows no script).
sed -e '/Content-Security-Policy/d' -e 's#</body>#<script>window.addEventListener("load",()=>{document.querySelectorAll("*").forEach(e=>e.getBoundingClientRect());const p=document.createElement("pre");p.id="render-ms";p.textContent=performance.now().toFixed(0);document.body.appendChild(p);});</script></body>#' \
    "$work/compare.html" > "$work/timed.html"
echo '<!DOCTYPE html><html><body></body></html>' > "$work/empty.html"
flags=(--headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update
       --disable-sync --no-first-run --hide-scrollbars --window-size=1300,4000)
median() { sort -n | sed -n "$(( (rounds + 1) / 2 ))p"; }
in_page=() shot=() empty=()
for _ in $(seq "$rounds"); do
    profile=$(mktemp -d -p "$work")
    ms=$("$chromium" "${flags[@]}" --user-data-dir="$profile" --dump-dom "file://$work/timed.html" 2>/dev/null \
        | sed -n 's#.*<pre id="render-ms">\([0-9]*\)</pre>.*#\1#p')
    in_page+=("${ms:?the timing script did not run}")
    for page in compare empty; do
        profile=$(mktemp -d -p "$work")
        t0=$(date +%s%N)
        "$chromium" "${flags[@]}" --user-data-dir="$profile" --screenshot="$work/$page.png" "file://$work/$page.html" >/dev/null 2>&1
        t=$(( ($(date +%s%N) - t0) / 1000000 ))
        if [[ $page == compare ]]; then shot+=("$t"); else empty+=("$t"); fi
    done
done
page_ms=$(printf '%s\n' "${in_page[@]}" | median)
shot_ms=$(printf '%s\n' "${shot[@]}" | median)
empty_ms=$(printf '%s\n' "${empty[@]}" | median)
echo "bench-report: hostd compare --report: ${compare_ms} ms; page $(( size / 1024 )) KB (target < 1024 KB)"
echo "bench-report: in-page load and layout: runs $(printf '%s\n' "${in_page[@]}" | sort -n | tr '\n' ' ')ms; median ${page_ms} ms (target < 2000 ms)"
echo "bench-report: screenshot wall time: median ${shot_ms} ms, empty page ${empty_ms} ms: the page's share $(( shot_ms - empty_ms )) ms (target < 2000 ms)"
