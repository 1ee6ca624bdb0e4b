#!/usr/bin/env bash
# The Python the NumPy differential tests use (scripts/diff_numpy.py): a
# virtual environment under the target directory with a pinned NumPy.
# Prints the path of its python.
exec "$(dirname "$0")/venv.sh" venv numpy==2.2.6
