#!/usr/bin/env bash
# Checks for a machine with an NVIDIA GPU, which CI does not have
# (docs/cuda.md, "What is verified"): the device-generic suite on every
# cuda device, and the Python DLPack tests with PyTorch and CuPy where the
# package and they are installed.
#
# The suite runs as one single-threaded process per group of cases, in
# parallel, sharing one NVRTC cache. Cases on one device run one at a
# time, and on a fresh machine compiling the kernels is most of the work:
# in one process every module would be compiled in series (minutes).
#
# With cargo it builds what it runs (release). On a machine with only the
# binaries, name them: ANYDEV_DEVICES_BIN (the `devices` test binary of
# anydev-testing) and ANYDEV_SIM_LIBRARY (the simulator, which the suite
# loads). ANYDEV_TEST_DEVICES narrows the devices as usual (default: cuda).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

if [ -z "${ANYDEV_DEVICES_BIN:-}" ]; then
  target="${CARGO_TARGET_DIR:-$root/target}"
  cargo build --quiet --release --locked -p anydev-sim
  ANYDEV_SIM_LIBRARY="$(cd "$target" && pwd)/release/libanydev_sim.so"
  ANYDEV_DEVICES_BIN="$(cargo test --quiet --release --locked -p anydev-testing --test devices --no-run \
    --message-format=json | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("executable") and m.get("target", {}).get("name") == "devices":
        print(m["executable"])')"
fi
export ANYDEV_SIM_LIBRARY
export ANYDEV_TEST_DEVICES="${ANYDEV_TEST_DEVICES:-cuda}"
export ANYDEV_CUDA_CACHE_DIR="${ANYDEV_CUDA_CACHE_DIR:-$(mktemp -d)}"
logs="$(mktemp -d)"

# Groups are the cases' first name component (elementwise, reductions, ...).
"$ANYDEV_DEVICES_BIN" --list 2>/dev/null \
  | sed -n 's/^\(\[[^]]*\] \)\{0,1\}\([a-z0-9_]*\)::.*: test$/\2/p' | sort -u > "$logs/groups"
if [ ! -s "$logs/groups" ]; then
  "$ANYDEV_DEVICES_BIN" --list
  echo "no cases for ANYDEV_TEST_DEVICES=$ANYDEV_TEST_DEVICES" >&2
  exit 1
fi
xargs -P "$(nproc)" -I{} sh -c '"$1" --test-threads 1 "{}::" > "$2/{}.log" 2>&1 || echo {} >> "$2/failed"' \
  sh "$ANYDEV_DEVICES_BIN" "$logs" < "$logs/groups"
for group in $(cat "$logs/groups"); do
  printf '%-16s %s\n' "$group" "$(grep '^test result' "$logs/$group.log" || echo 'no result')"
done
status=0
if [ -s "$logs/failed" ]; then
  for group in $(cat "$logs/failed"); do
    sed -n '/^failures:$/,$p' "$logs/$group.log"
  done
  status=1
fi

if python3 -c "import anydev, torch" 2>/dev/null; then
  (cd crates/anydev-python && ANYDEV_TEST_DEVICES="cpu,$ANYDEV_TEST_DEVICES" \
    python3 -m pytest -q -p no:cacheprovider tests/test_dlpack.py) || status=1
else
  echo "the Python DLPack tests need the anydev package and PyTorch; skipped"
fi
echo "logs: $logs"
exit $status
