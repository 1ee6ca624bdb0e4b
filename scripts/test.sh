#!/usr/bin/env bash
# The whole test suite, as CI runs it: formatting, lints, then every test
# of every crate. Run from anywhere in the repository.
set -euo pipefail
cd "$(dirname "$0")/.."
# CI builds once from a clean clone: incremental caches would only cost it
# disk (many gigabytes across the workspace, Python and MPI builds) and time.
if [ "${CI:-}" = true ]; then
  export CARGO_INCREMENTAL=0
fi
scripts/ensure-vulkan.sh
# Without a display session Mesa's Vulkan device-select layer makes
# libwayland print "error: XDG_RUNTIME_DIR is invalid" in every test log;
# with no display there is no default GPU for it to find (the CLI does the
# same, see quiet_vulkan_device_select in crates/anydev-cli).
if [ ! -d "${XDG_RUNTIME_DIR:-}" ]; then
  export NODEVICE_SELECT="${NODEVICE_SELECT:-1}"
fi

# Where the time goes, in the log: each step with the seconds spent so far.
step() { echo "== $* (${SECONDS}s)"; }

step "formatting, lints"
cargo fmt --all -- --check
scripts/check-features.py
cargo clippy --workspace --all-targets --locked -- -D warnings
step "the workspace's tests"
cargo test --workspace --locked

step "NVRTC"
# Every generated CUDA kernel must compile. NVRTC is a library, not a GPU:
# PyPI ships it, so this runs on machines without CUDA too.
# Absolute paths: cargo runs each test from its own crate's directory.
target="${CARGO_TARGET_DIR:-target}"
mkdir -p "$target"
target="$(cd "$target" && pwd)"
nvrtc="$target/nvrtc-12.9"
if [ ! -e "$nvrtc/nvidia/cuda_nvrtc/lib/libnvrtc.so.12" ]; then
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --target "$nvrtc" "nvidia-cuda-nvrtc-cu12==12.9.86"
fi
# `--workspace`, not `-p`: cargo resolves features over the packages it
# selects, so picking a few would compile them and their dependencies again.
ANYDEV_NVRTC_PATH="$nvrtc/nvidia/cuda_nvrtc/lib/libnvrtc.so.12" \
  cargo test --locked --workspace --test nvrtc_compile --test nvrtc_extension --test nvrtc -- --ignored

# Plugin conformance, as a vendor would run it: the simulator must pass;
# the C test plugin and the C template must pass with their gaps reported
# as skips; a C plugin
# with a deliberately wrong `add` must fail on its own, and pass only when
# its manifest lists those cases as expected failures.
step "plugin conformance"
conformance="$target/conformance"
mkdir -p "$conformance"
abi=crates/anydev-plugin-abi
cc -std=c99 -Wall -Wextra -Werror -fPIC -shared -I "$abi/include" \
  "$abi/tests/c_plugin/test_plugin.c" -o "$conformance/libctest.so"
cc -std=c99 -Wall -Wextra -Werror -fPIC -shared -I "$abi/include" -I "$abi/tests/c_plugin" \
  crates/anydev-testing/tests/c_plugin/broken_add.c -o "$conformance/libctest_broken_add.so"
cp crates/anydev-testing/tests/c_plugin/ctest_broken_add.json "$conformance/"
# The vendor starter kit, built by its own Makefile (-Wpedantic included).
make --no-print-directory -C plugins/c-template OUT="$conformance"
cp plugins/c-template/template.json "$conformance/"
# The command and the simulator, with the features the workspace's tests
# built them with (a `-p` selection, or one without the tests' targets,
# would resolve features apart and compile much of the project again).
cargo build --locked --workspace --all-targets
"$target/debug/anydev" conformance "$target/debug/libanydev_sim.so" | tee "$conformance/sim.txt"
# The quantization library's cases ran on the simulator's own (ABI 1.4)
# implementation of its ops, not only on the built-in devices.
grep -Eq "^quant::gemv_matches_an_f64_reference +sim:0 +f32 +pass" "$conformance/sim.txt"
"$target/debug/anydev" conformance "$conformance/libctest.so"
"$target/debug/anydev" conformance "$conformance/ctest_broken_add.json"
"$target/debug/anydev" conformance "$conformance/template.json"
if "$target/debug/anydev" conformance "$conformance/libctest_broken_add.so" > "$conformance/broken.txt"; then
  echo "conformance passed a plugin whose add is broken" >&2
  exit 1
fi
grep -q "case elementwise::add_broadcast on ctest_broken_add:0 (f32)" "$conformance/broken.txt"

# Differential tests against NumPy on every device (docs/testing.md), in a
# virtual environment under the target directory.
step "NumPy differential"
"$(scripts/python-env.sh)" scripts/diff_numpy.py --driver "$target/debug/anydev-diff"

# The Python package, built into its own virtual environment, on every
# device (docs/python.md).
step "Python package"
scripts/test-python.sh
step "distributed"
scripts/test-dist.sh
step "done"
