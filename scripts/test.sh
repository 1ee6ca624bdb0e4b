#!/usr/bin/env bash
# The whole test suite, as CI runs it: formatting, lints, then every test
# of every crate. Run from anywhere in the repository.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-vulkan.sh

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
