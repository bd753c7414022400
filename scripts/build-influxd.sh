#!/usr/bin/env bash
# Build influxd (InfluxDB OSS 2.7) from its Go module and cache the binary outside the repo.
#
# Prints the binary's path on stdout; progress goes to stderr. Idempotent: a cached binary
# whose recorded version matches is reused at once. Needs only Go and cargo on the machine.
#
# Why the extra steps (see shared DESIGN.md, "InfluxDB and Grafana in development and tests"):
#  1. the module's go.mod has a replace directive, so `go install …@version` is refused:
#     we copy the downloaded module to a writable directory and build it as the main module;
#  2. Flux's Rust library is compiled through influxdata's pkg-config wrapper (PKG_CONFIG),
#     and Flux pins a Rust toolchain that cannot be fetched: RUSTUP_TOOLCHAIN=stable;
#  3. Flux denies warnings that newer rustc emits, and RUSTFLAGS does not reach its
#     build-dependency: a RUSTC_WORKSPACE_WRAPPER appends --cap-lints=warn.
#
# Environment: THROTTLESCOPE_CACHE (default ~/.cache/throttlescope),
#              INFLUXD_VERSION (default v2.7.12), INFLUXD_REBUILD=1 forces a rebuild.
set -euo pipefail

version="${INFLUXD_VERSION:-v2.7.12}"
module="github.com/influxdata/influxdb/v2"
cache="${THROTTLESCOPE_CACHE:-$HOME/.cache/throttlescope}"
out_dir="$cache/influxd"
bin="$out_dir/influxd"
stamp="$out_dir/influxd.version"

log() { printf 'build-influxd: %s\n' "$*" >&2; }

mkdir -p "$out_dir"

# One build at a time: tests and `just influx-up` may call this concurrently.
exec 9>"$out_dir/.build.lock"
if ! flock -n 9; then
    log "another build holds $out_dir/.build.lock; waiting"
    flock 9
fi

if [[ -z "${INFLUXD_REBUILD:-}" && -x "$bin" && -f "$stamp" && "$(cat "$stamp")" == "$version" ]]; then
    log "reusing $bin ($version)"
    printf '%s\n' "$bin"
    exit 0
fi

for tool in go cargo flock; do
    command -v "$tool" >/dev/null || { log "error: '$tool' is not on PATH"; exit 1; }
done

start=$(date +%s)
export GOTOOLCHAIN=local
export GOFLAGS="${GOFLAGS:-} -buildvcs=false"

log "downloading $module@$version"
mod_json=$(go mod download -json "$module@$version")
mod_dir=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' <<<"$mod_json" | head -n1)
if [[ -z "$mod_dir" || ! -f "$mod_dir/go.mod" ]]; then
    log "error: could not locate the downloaded module directory"
    printf '%s\n' "$mod_json" >&2
    exit 1
fi

src="$out_dir/src-$version"
if [[ ! -f "$src/.copied" ]]; then
    log "copying module source to $src"
    rm -rf "$src"
    cp -r "$mod_dir" "$src"
    chmod -R u+w "$src"
    touch "$src/.copied"
fi

tools="$out_dir/tools"
mkdir -p "$tools"
log "building influxdata/pkg-config (version pinned by influxdb's go.mod)"
(cd "$src" && go build -o "$tools/pkg-config" github.com/influxdata/pkg-config)

wrapper="$tools/rustc-cap-lints"
cat >"$wrapper" <<'EOF'
#!/bin/sh
# RUSTC_WORKSPACE_WRAPPER: cargo calls "$0 rustc ARGS…"; cap lints so Flux's deny(warnings)
# does not fail on warnings that newer rustc versions introduced.
exec "$@" --cap-lints=warn
EOF
chmod +x "$wrapper"

export PKG_CONFIG="$tools/pkg-config"
export RUSTUP_TOOLCHAIN=stable
export RUSTC_WORKSPACE_WRAPPER="$wrapper"

log "building influxd $version (cold: ~5 min on 2 cores; warm: seconds)"
(cd "$src" && go build -ldflags "-s -w -X main.version=${version#v} -X main.commit=gomod" -o "$bin.tmp" ./cmd/influxd)
mv -f "$bin.tmp" "$bin"
printf '%s\n' "$version" >"$stamp"

log "built $bin ($(du -h "$bin" | cut -f1)) in $(($(date +%s) - start)) s"
printf '%s\n' "$bin"
