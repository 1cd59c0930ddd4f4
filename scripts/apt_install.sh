#!/usr/bin/env bash
# apt-get install PACKAGE... as root, or through sudo for anyone else; where neither can run,
# says what to install by hand and exits 1.
set -euo pipefail
if ! command -v apt-get >/dev/null 2>&1; then
  echo "make: '$*' is missing and this system has no apt-get: install it with your package manager, then run make again" >&2
  exit 1
fi
if [ "$(id -u)" = 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
  echo "make: installing $* with sudo apt-get (you may be asked for your password)" >&2
else
  echo "make: '$*' is missing; apt-get needs root and there is no sudo. As root: apt-get install $*" >&2
  exit 1
fi
${as_root[@]+"${as_root[@]}"} apt-get update -qq
${as_root[@]+"${as_root[@]}"} apt-get install -y -qq "$@"
