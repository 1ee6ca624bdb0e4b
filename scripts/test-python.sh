#!/usr/bin/env bash
# The Python package's tests, as CI runs them: builds `anydev` (the crate in
# crates/anydev-python) into a virtual environment under the target
# directory, builds the simulator plugin so that sim:0 and sim:1 exist next
# to cpu:0 and wgpu:0, and runs pytest on every device the runtime sees
# (narrow them with ANYDEV_TEST_DEVICES, as for the Rust suite). Extra
# arguments go to pytest.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
target="${CARGO_TARGET_DIR:-$root/target}"
mkdir -p "$target"
target="$(cd "$target" && pwd)"

# The environment: never the system's Python packages. Bump the marker with
# the pins so that an old environment is refreshed.
venv="$target/python-venv"
pins=(maturin==1.16.0 pytest==9.2.0 numpy==2.4.6 array-api-compat==1.16.0 array-api-strict==2.6.1 hypothesis==6.170.17)
marker="$venv/.pins-$(printf '%s' "${pins[*]}" | tr ' =' '_-')"
if [ ! -e "$marker" ]; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${pins[@]}"
  touch "$marker"
fi

# The package, built in the workspace's target directory: cargo keeps the
# artifacts of each feature set apart, so the crates the package shares
# with the workspace (same profile, same features) are built once for
# both. Without build isolation pip uses the pinned maturin above and
# needs no network. The dev profile builds in a fraction of release's time; the
# kernels are the Rust crates' own, so their speed is not what this run
# checks.
# The package has a Cargo.lock of its own (it is not a workspace member);
# a dependency added to a crate it builds on must be locked there too.
if ! cargo metadata --quiet --locked --format-version 1 \
  --manifest-path "$root/crates/anydev-python/Cargo.toml" >/dev/null 2>&1; then
  echo "crates/anydev-python/Cargo.lock is out of date with the crates it builds on; run" >&2
  echo "  cargo update --workspace --offline --manifest-path crates/anydev-python/Cargo.toml" >&2
  echo "and commit the lock file with the change." >&2
  exit 1
fi
# The crate is outside the workspace, so the workspace's lints miss it.
cargo fmt --manifest-path "$root/crates/anydev-python/Cargo.toml" -- --check
PYO3_PYTHON="$venv/bin/python" CARGO_TARGET_DIR="$target" \
  cargo clippy --quiet --locked --manifest-path "$root/crates/anydev-python/Cargo.toml" --all-targets -- -D warnings
PATH="$venv/bin:$PATH" CARGO_TARGET_DIR="$target" MATURIN_PEP517_ARGS="--profile dev" \
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-build-isolation \
  --force-reinstall --no-deps "$root/crates/anydev-python"

cargo build --quiet --locked -p anydev-sim
export ANYDEV_PLUGINS="${ANYDEV_PLUGINS:-sim:$target/debug/libanydev_sim.so}"

# pytest exits 5 when it collected nothing: that is a failure too.
cd "$root/crates/anydev-python"
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider tests "$@"
