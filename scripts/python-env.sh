#!/usr/bin/env bash
# The Python the test scripts use: a virtual environment under the target
# directory (never the system's), created on first use with pinned
# packages. Prints the path of its python.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
venv="$target/venv"
# Bump the marker with the pins so that an old environment is refreshed.
pins=(numpy==2.2.6)
marker="$venv/.pins-$(printf '%s' "${pins[*]}" | tr ' =' '_-')"
if [ ! -e "$marker" ]; then
  rm -rf "$venv"
  python3 -m venv "$venv" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${pins[@]}" >&2
  touch "$marker"
fi
echo "$venv/bin/python"
