#!/usr/bin/env bash
# SPDX-License-Identifier: BSL-1.0
# Installs every Debian package vkshmem needs to build, test and run. Idempotent:
# it installs only what is missing and does nothing when all is present.
set -euo pipefail

PACKAGES=(
  cmake g++ ninja-build pkg-config python3 git procps psmisc iproute2 util-linux
  libvulkan-dev vulkan-tools mesa-vulkan-drivers
  glslang-tools glslc spirv-tools
  libpmix-dev openmpi-bin libopenmpi-dev
  libucx-dev ucx-utils libfabric-dev libfabric-bin
  catch2 libfmt-dev gnuplot-nox help2man
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "vkshmem setup: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "vkshmem setup: done"
