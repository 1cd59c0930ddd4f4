#!/usr/bin/env bash
# CUDA vs CPU grades in one command, on a machine with its own python3 and torch and no
# package registry (issue 14; scripts/gpu_check_device.md says how a session runs it).
#
#   bash scripts/gpu_check.sh [--device cuda|cpu] [--quick] [--jobs N] [--budget-s S]
#
# Sets up a venv on the machine's python3 that keeps its torch, installs the wheels that
# `make wheels` put in wheels/ (--no-index --no-deps), unpacks the carried bubblewrap if
# the machine has none, puts the repository on PYTHONPATH (never `pip install -e .`: the
# project pins a torch that is not there), and hands over to scripts/gpu_check.py, which
# runs the CUDA tests, grades every bundled example and mutation variant on both devices,
# and writes its table under $OUT (default ./gpu_check_out). `--device cpu` compares CPU
# with itself: the self-test that keeps this script from rotting on CPU-only machines.
#
# Environment: PYTHON (default python3), WHEELS (default <repo>/wheels), OUT.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PYTHON=${PYTHON:-python3}
WHEELS=${WHEELS:-$REPO/wheels}
OUT=${OUT:-$REPO/gpu_check_out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpu_check.XXXXXX")
chmod 755 "$WORK"  # the sandbox's uid reads the venv made in here
trap 'rm -rf "$WORK"' EXIT
LOG=$OUT/setup.log
: >"$LOG"

say() { echo "gpu_check: $*" | tee -a "$LOG"; }

# A venv that sees the machine's packages. --system-site-packages alone is not enough
# when python3 is itself a venv (the GPU machine's is): then the base interpreter's site
# folder is not the one with torch, so a .pth file adds python3's own site folders.
make_venv() {
    "$PYTHON" -m venv --without-pip --system-site-packages "$WORK/venv" >>"$LOG" 2>&1 || return 1
    local site
    site=$("$WORK/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    "$PYTHON" -c 'import site, sys
if sys.prefix != sys.base_prefix:
    print("\n".join(site.getsitepackages()))' >"$site/_gpu_check_base.pth"
}

install_wheels() {  # into the venv's site folder, with the machine's own pip
    if ! compgen -G "$WHEELS/*.whl" >/dev/null; then
        say "no wheels in $WHEELS: using the packages $PYTHON already has"
        return 0
    fi
    if [ -f "$WHEELS/python_version.json" ] && ! "$PYTHON" -c 'import json, sys
made = json.load(open(sys.argv[1]))["python_version"].split(".")[:2]
sys.exit(made != [str(n) for n in sys.version_info[:2]])' "$WHEELS/python_version.json"; then
        say "$WHEELS was made for another Python than $("$PYTHON" -V 2>&1): run" \
            "scripts/gpu_check_wheels.py --python-version X.Y for this one"
        return 1
    fi
    say "installing $(ls "$WHEELS"/*.whl | wc -l) wheels from $WHEELS into $1"
    "$PYTHON" -m pip install -q --no-index --no-deps --no-warn-conflicts --disable-pip-version-check \
        --target "$1" --find-links "$WHEELS" -r "$WHEELS/requirements.txt" >>"$LOG" 2>&1
}

# bubblewrap runs student code; the GPU machine's image may not have it. The carried
# Debian package is unpacked (never installed) and put first on PATH; its libraries are
# used only if the machine lacks them.
provide_bwrap() {
    if command -v bwrap >/dev/null; then
        say "bwrap: $(command -v bwrap)"
        return 0
    fi
    if ! compgen -G "$WHEELS/debs/*.deb" >/dev/null; then
        say "no bwrap here and none carried in $WHEELS/debs: the sandboxed stages will fail"
        return 0
    fi
    local root=$WORK/bwrap-root deb
    mkdir -p "$root" "$WORK/bin"
    for deb in "$WHEELS"/debs/*.deb; do
        if command -v dpkg-deb >/dev/null; then
            dpkg-deb -x "$deb" "$root"
        else
            (cd "$WORK" && ar x "$deb" data.tar.xz && tar -xJf data.tar.xz -C "$root" && rm data.tar.xz)
        fi
    done
    local libs=$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu
    if ldd "$root/usr/bin/bwrap" 2>/dev/null | grep -q "not found"; then
        printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s "$@"\n' "$libs" "$root/usr/bin/bwrap" >"$WORK/bin/bwrap"
        chmod 755 "$WORK/bin/bwrap"
        say "bwrap: carried, with its carried libraries"
    else
        ln -s "$root/usr/bin/bwrap" "$WORK/bin/bwrap"
        say "bwrap: carried ($("$WORK/bin/bwrap" --version 2>&1))"
    fi
    export PATH=$WORK/bin:$PATH
}

if make_venv; then
    PY=$WORK/venv/bin/python
    install_wheels "$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" ||
        { say "installing the wheels failed (see $LOG)"; exit 3; }
else  # no venv module: the wheels go into a folder of their own on PYTHONPATH
    say "could not make a venv with $PYTHON (see $LOG); installing into $WORK/site"
    PY=$PYTHON
    install_wheels "$WORK/site" || { say "installing the wheels failed (see $LOG)"; exit 3; }
    export PYTHONPATH=$WORK/site
fi
provide_bwrap
export PYTHONPATH=$REPO${PYTHONPATH:+:$PYTHONPATH}
export PATH=$(dirname "$PY"):$PATH PYTHONUNBUFFERED=1 PYTEST_DISABLE_PLUGIN_AUTOLOAD=1
# the sandbox's uid must be able to read the assignments' helper packages
chmod -R o+rX "$REPO"/assignments/*/d2l_attention 2>/dev/null || true
cd "$REPO"
status=0
"$PY" scripts/gpu_check.py --out "$OUT" --work "$WORK" "$@" || status=$?
exit $status
