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

# The environment: never the system's Python packages.
python="$(scripts/venv.sh python-venv maturin==1.16.0 pytest==9.2.0 numpy==2.4.6 array-api-compat==1.16.0 \
  array-api-strict==2.6.1 hypothesis==6.170.17)"
CARGO_TARGET_DIR="$target" scripts/python-package.sh "$python"

cargo build --quiet --locked -p anydev-sim
export ANYDEV_PLUGINS="${ANYDEV_PLUGINS:-sim:$target/debug/libanydev_sim.so}"

# pytest exits 5 when it collected nothing: that is a failure too.
cd "$root/crates/anydev-python"
exec "$python" -m pytest -q -p no:cacheprovider tests "$@"
