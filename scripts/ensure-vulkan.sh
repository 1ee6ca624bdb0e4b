#!/usr/bin/env bash
# Makes sure a Vulkan driver is installed, so the wgpu backend has a device
# to test on: on a machine without a GPU, Mesa's llvmpipe software Vulkan
# device (Debian package mesa-vulkan-drivers) runs real compute shaders.
#
# Idempotent and quiet when a Vulkan driver is present. As root it installs
# the package when missing; otherwise it says how to, and exits 0 so the
# wgpu tests then report the backend as unavailable instead of failing here.
set -euo pipefail

icd_present() {
    local f
    for f in /usr/share/vulkan/icd.d/*.json /etc/vulkan/icd.d/*.json; do
        [ -e "$f" ] && return 0
    done
    return 1
}

if icd_present; then
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure-vulkan: no Vulkan driver found and no apt-get; install a Vulkan driver (Mesa's lavapipe/llvmpipe works without a GPU) to test the wgpu backend" >&2
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "ensure-vulkan: no Vulkan driver found; install one with: sudo apt-get install -y mesa-vulkan-drivers (the wgpu tests report the backend as unavailable until then)" >&2
    exit 0
fi

echo "ensure-vulkan: installing mesa-vulkan-drivers (llvmpipe software Vulkan) for the wgpu tests" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --reinstall --no-install-recommends mesa-vulkan-drivers >/dev/null
icd_present || echo "ensure-vulkan: mesa-vulkan-drivers installed but no Vulkan ICD file appeared" >&2
