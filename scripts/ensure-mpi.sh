#!/usr/bin/env bash
# Makes sure MPI is installed for crates/anydev-dist: Open MPI's launcher
# and headers (Debian's openmpi-bin, libopenmpi-dev) and libclang, which
# the `mpi` crate's build uses to generate its bindings.
#
# Idempotent and quiet when they are present. As root it installs the
# packages when missing; otherwise it says how to, and exits 1, since the
# distributed crate cannot be built without them.
set -euo pipefail

have_mpi() {
    command -v mpirun >/dev/null 2>&1 && command -v mpicc >/dev/null 2>&1
}

have_libclang() {
    local f
    for f in /usr/lib/llvm-*/lib/libclang.so* /usr/lib/x86_64-linux-gnu/libclang*.so* /usr/lib/aarch64-linux-gnu/libclang*.so*; do
        [ -e "$f" ] && return 0
    done
    return 1
}

if have_mpi && have_libclang; then
    exit 0
fi

packages="libopenmpi-dev openmpi-bin libclang-dev"
if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure-mpi: MPI or libclang is missing and there is no apt-get; install an MPI implementation (Open MPI or MPICH, with mpicc and mpirun) and libclang" >&2
    exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "ensure-mpi: MPI or libclang is missing; install them with: sudo apt-get install -y $packages" >&2
    exit 1
fi

echo "ensure-mpi: installing $packages for crates/anydev-dist" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $packages >/dev/null
have_mpi || { echo "ensure-mpi: $packages installed but mpirun or mpicc is still missing" >&2; exit 1; }
