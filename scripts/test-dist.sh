#!/usr/bin/env bash
# The distributed crate's tests, as CI runs them. crates/anydev-dist is
# outside the cargo workspace (it needs MPI, which nothing else does), with
# a Cargo.lock of its own. This script installs MPI when missing
# (scripts/ensure-mpi.sh), checks formatting and lints, runs the crate's
# unit and fault tests (the latter launch mpirun themselves), then runs
# under mpirun, on 4 simulated devices (one per rank; through the
# simulator's collectives and through MPI) and on 2 cpu ranks:
# `anydev-dist check` and the data-parallel SGD example, which checks
# itself against a single-process run. Last, the Python package's
# `anydev.dist`, built with its `dist` feature, in its own tests
# (crates/anydev-python/tests-dist), beside mpi4py.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
scripts/ensure-mpi.sh

target="${CARGO_TARGET_DIR:-$root/target}"
mkdir -p "$target"
target="$(cd "$target" && pwd)"
export CARGO_TARGET_DIR="$target"
manifest="$root/crates/anydev-dist/Cargo.toml"

scripts/check-lock.sh crates/anydev-dist
cargo fmt --manifest-path "$manifest" -- --check
cargo clippy --quiet --locked --manifest-path "$manifest" --all-targets -- -D warnings
# The simulator first: the fault tests load it for the plugin engine.
cargo build --quiet --locked -p anydev-sim
cargo test --quiet --locked --manifest-path "$manifest"
cargo build --quiet --locked --manifest-path "$manifest" --bins --examples

bin="$target/debug/anydev-dist"
example="$target/debug/examples/linear_regression"
mpi=(mpirun --allow-run-as-root --oversubscribe -x RAYON_NUM_THREADS=1 -x ANYDEV_DIST_TIMEOUT=60)

# The last line of `check` is `N passed, N failed`; it exits non-zero on failures.
run_check() {
  local out
  out="$("${mpi[@]}" "$@" "$bin" check)" || { printf '%s\n' "$out"; return 1; }
  printf '%s\n' "$out" | tail -n 2
  printf '%s\n' "$out" | tail -n 1 | grep -Eq '^[0-9]+ passed, 0 failed$'
}

echo "== 4 ranks on sim:0..3, through the simulator's own collectives"
sim=(-n 4 -x ANYDEV_PLUGINS="sim:$target/debug/libanydev_sim.so" -x ANYDEV_SIM_DEVICES=4 -x ANYDEV_DIST_KIND=sim)
info="$("${mpi[@]}" "${sim[@]}" "$bin" info)"
printf '%s\n' "$info"
# The simulator offers collectives (ABI 1.6), so its kind defaults to them.
printf '%s\n' "$info" | grep -q "sim:3 via plugin;"
run_check "${sim[@]}"
"${mpi[@]}" "${sim[@]}" "$example"

echo "== 4 ranks on sim:0..3, through MPI with host staging"
run_check "${sim[@]}" -x ANYDEV_DIST_BACKEND=sim:mpi

echo "== 2 ranks on cpu:0"
cpu=(-n 2 -x ANYDEV_DIST_KIND=cpu)
run_check "${cpu[@]}"
"${mpi[@]}" "${cpu[@]}" "$example"

echo "== anydev.dist from Python, beside mpi4py"
# The package built with its `dist` feature, in an environment of its own
# with mpi4py (its wheel loads the system's Open MPI).
python="$(scripts/venv.sh python-dist-venv maturin==1.16.0 pytest==9.2.0 numpy==2.4.6 mpi4py==4.1.2)"
scripts/python-package.sh "$python" dist
ANYDEV_PLUGINS="sim:$target/debug/libanydev_sim.so" \
  "$python" -m pytest -q -p no:cacheprovider crates/anydev-python/tests-dist
