#!/usr/bin/env bash
# Fails, saying how to fix it, when the Cargo.lock of a crate outside the
# workspace (crates/anydev-dist, crates/anydev-python: each has its own) is
# out of date with the crates it builds on: a dependency added to one of
# them must be locked there too. Usage: scripts/check-lock.sh crates/NAME
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
crate="$1"
if ! cargo metadata --quiet --locked --format-version 1 --manifest-path "$root/$crate/Cargo.toml" >/dev/null 2>&1; then
  echo "$crate/Cargo.lock is out of date with the crates it builds on; run" >&2
  echo "  cargo update --workspace --offline --manifest-path $crate/Cargo.toml" >&2
  echo "and commit the lock file with the change." >&2
  exit 1
fi
