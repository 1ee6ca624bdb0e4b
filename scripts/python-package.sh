#!/usr/bin/env bash
# Lints the Python package's crate (crates/anydev-python, outside the cargo
# workspace, so the workspace's fmt and clippy miss it) and builds and
# installs it into the environment of PYTHON, with the cargo FEATURES given
# (comma-separated, e.g. `dist`). Usage: scripts/python-package.sh PYTHON [FEATURES]
#
# The package is built in the workspace's target directory: cargo keeps the
# artifacts of each feature set apart, so the crates it shares with the
# workspace (same profile, same features) are built once for both. Without
# build isolation pip uses the environment's pinned maturin and needs no
# network. The dev profile builds in a fraction of release's time; the
# kernels are the Rust crates' own, so their speed is not what the tests check.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
python="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
features="${2:-}"
target="${CARGO_TARGET_DIR:-$root/target}"
mkdir -p "$target"
export CARGO_TARGET_DIR="$(cd "$target" && pwd)"
manifest="$root/crates/anydev-python/Cargo.toml"
feature_args=()
maturin_args="--profile dev"
if [ -n "$features" ]; then
  feature_args=(--features "$features")
  maturin_args="$maturin_args --features $features"
fi

# The package has a Cargo.lock of its own (it is not a workspace member).
"$root/scripts/check-lock.sh" crates/anydev-python
cargo fmt --manifest-path "$manifest" -- --check
PYO3_PYTHON="$python" cargo clippy --quiet --locked --manifest-path "$manifest" "${feature_args[@]}" --all-targets -- -D warnings
PATH="$(dirname "$python"):$PATH" MATURIN_PEP517_ARGS="$maturin_args" \
  "$python" -m pip install --quiet --disable-pip-version-check --no-build-isolation \
  --force-reinstall --no-deps "$root/crates/anydev-python"
