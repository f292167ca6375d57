#!/usr/bin/env bash
# Installs the Debian packages perfkit builds and tests with (idempotent: only
# what is missing is installed). Used by .ci/run and scripts/quickstart.sh;
# packages named as arguments are installed as well (fuzz/install-deps.sh).
set -euo pipefail

packages=(build-essential cmake pkg-config libsqlite3-dev sqlite3 libcjson-dev
          libncurses-dev check libsubunit-dev gnuplot-nox tmux python3
          libxml2-utils chromium fonts-dejavu-core xz-utils
          libprotobuf-c-dev protobuf-c-compiler protobuf-compiler
          libopenmpi-dev openmpi-bin "$@")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq "${missing[@]}"
fi
