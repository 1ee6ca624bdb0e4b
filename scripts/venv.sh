#!/usr/bin/env bash
# A virtual environment under the target directory (never the system's
# Python packages), created or refreshed with pinned packages, and prints
# the path of its python. Usage: scripts/venv.sh NAME PIN...
# The environment is $CARGO_TARGET_DIR/NAME (target/NAME by default); a
# marker made from the pins refreshes an environment whose pins changed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
name="$1"
shift
target="${CARGO_TARGET_DIR:-$root/target}"
mkdir -p "$target"
venv="$(cd "$target" && pwd)/$name"
marker="$venv/.pins-$(printf '%s' "$*" | tr ' =' '_-')"
if [ ! -e "$marker" ]; then
  rm -rf "$venv"
  python3 -m venv "$venv" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$@" >&2
  touch "$marker"
fi
echo "$venv/bin/python"
