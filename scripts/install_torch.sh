#!/usr/bin/env bash
# Installs torch into the venv from TORCH_INDEX, PyTorch's wheel index for one build (the CPU
# one unless told otherwise: pip's own index has the multi-GB CUDA build on Linux).
#   scripts/install_torch.sh VENV_PYTHON TORCH_SPEC [TORCH_INDEX]
# An empty TORCH_INDEX means pip's own index. An index that cannot be reached (a machine with
# only a local mirror; an unknown host fails at once, a silent one after 15 s) is said, and
# torch comes from pip's configured indexes instead; then the build installed is named.
set -euo pipefail
py=$1 spec=$2 index=${3:-}

reachable() {
  "$py" - "$1" <<'PY'
import sys, urllib.request
try:
    urllib.request.urlopen(sys.argv[1].rstrip("/") + "/torch/", timeout=15).close()
except Exception as error:  # any reason at all: say it and fall back
    print(f"make: {sys.argv[1]} cannot be reached ({error}); installing torch from pip's configured indexes",
          file=sys.stderr)
    sys.exit(1)
PY
}

if [ -n "$index" ] && reachable "$index"; then
  echo "make: installing $spec from $index"
  "$py" -m pip install -q "$spec" --index-url "$index"
else
  "$py" -m pip install -q "$spec"
  "$py" -W ignore -c 'import torch; print(f"make: installed torch {torch.__version__}", "(CPU only)" if torch.version.cuda is None else f"(CUDA {torch.version.cuda})")'
fi
