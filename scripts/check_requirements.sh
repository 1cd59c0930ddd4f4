#!/usr/bin/env bash
# What grading needs before `make` installs anything: Linux, Python 3.11 or newer with venv,
# and bubblewrap (or a way to install it). Names everything missing at once, then exits 1.
#   scripts/check_requirements.sh PYTHON
set -uo pipefail
python=${1:-python3}
missing=()

if [ "$(uname -s)" != Linux ]; then
  missing+=("Linux: grading runs student code in a bubblewrap sandbox, which needs Linux namespaces;
    this is $(uname -s). Use a Linux machine or virtual machine (WSL 2 on Windows will do).")
fi

if ! command -v "$python" >/dev/null 2>&1; then
  missing+=("Python 3.11 or newer: no '$python' on PATH. Install it, or name one: make PYTHON=python3.12 ...")
elif ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  missing+=("Python 3.11 or newer: '$python' is $("$python" -c 'import platform; print(platform.python_version())' 2>&1).
    Install a newer one and name it: make PYTHON=python3.12 ...")
elif [ ! -d .venv ] && ! "$python" -c 'import ensurepip, venv' 2>/dev/null; then
  missing+=("Python's venv module: '$python -m venv' cannot make .venv (Debian and Ubuntu: apt-get install python3-venv).")
fi

if ! command -v bwrap >/dev/null 2>&1; then
  if ! command -v apt-get >/dev/null 2>&1; then
    missing+=("bubblewrap (bwrap), the sandbox: this system has no apt-get for make to install it with.
    Install the package 'bubblewrap' with your package manager, then run make again.")
  elif [ "$(id -u)" != 0 ] && ! command -v sudo >/dev/null 2>&1; then
    missing+=("bubblewrap (bwrap), the sandbox: make installs it with apt-get, which needs root, and there is no sudo.
    As root: apt-get install bubblewrap")
  fi
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "make: this machine lacks what grading needs (docs: Quick start, What you need):" >&2
  for item in "${missing[@]}"; do echo "  - $item" >&2; done
  exit 1
fi
