"""``make wheels``: what the grader needs on a GPU machine that has no package registry.

The GPU machine has Python 3.12 and its own torch (CUDA) with numpy and matplotlib
(FIELD_NOTES, "The GPU machine"). Everything else that ``autograder grade``, the
nbgrader path and ``pytest -m cuda`` import there is carried in ``wheels/``, at the
versions installed in this repository's ``.venv`` (the versions the suite runs here),
and installed with ``--no-index --no-deps`` by ``scripts/gpu_check.sh``.

    .venv/bin/python scripts/gpu_check_wheels.py [--dest wheels] [--python-version 3.12]

``RUNTIME_MODULES`` is what a run imports; a test imports them and checks that every
distribution they load is either carried or taken from the machine, so the list
cannot fall behind the code (``OPTIONAL``: imported when installed, needed by nothing).
"""
import argparse
import importlib.metadata
import json
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LIMIT_MB = 60  # the device machine's working tree travels in 64 MiB, wheels included

# What gpu_check.sh runs imports these (the CLI, the worker and zygote, the nbgrader
# path, the mutation suite's variants, the notebook helpers, the CUDA tests).
RUNTIME_MODULES = (
    "autograder.cli", "autograder.grading.pipeline", "autograder.in_kernel", "autograder.sandbox.zygote",
    "autograder.sandbox.runner", "reference", "matplotlib.pyplot", "pytest", "pytest_timeout",
    "tests.mutants.harness", "tests.mutants.test_mutants", "tests.notebooks.cells", "tests.reference.test_cuda",
    "copydetect",  # imported where the class report is written (autograder/similarity.py)
)

CARRIED = {  # distribution -> why it travels
    # the grader's own imports (config, results, CLI, checks)
    "pydantic": "config and results", "pydantic_core": "pydantic (binary)",
    "annotated-types": "pydantic", "typing-inspection": "pydantic",
    "typing_extensions": "pydantic needs a newer one than torch",
    "PyYAML": "grader.yml (binary)", "typer": "the CLI", "annotated-doc": "typer",
    "shellingham": "typer", "rich": "the CLI's progress and tables", "Pygments": "rich",
    "hypothesis": "the checks (binary)", "copydetect": "the class report's similar solutions",
    "sortedcontainers": "hypothesis", "attrs": "hypothesis, jsonschema", "tqdm": "the course helpers",
    # notebooks: nbformat and its schema validation
    "nbformat": "reads notebooks", "ijson": "submissions/reading.py streams a notebook's JSON (binary)",
    "fastjsonschema": "nbformat", "jsonschema": "nbformat",
    "jsonschema-specifications": "jsonschema", "referencing": "jsonschema",
    "rpds-py": "referencing (binary)", "traitlets": "nbformat",
    # jsonschema's format checkers: imported when present, as they are here
    "arrow": "jsonschema formats", "fqdn": "jsonschema formats", "isoduration": "jsonschema formats",
    "jsonpointer": "jsonschema formats", "rfc3339-validator": "jsonschema formats",
    "rfc3986-validator": "jsonschema formats", "uri-template": "jsonschema formats",
    "webcolors": "jsonschema formats",  # (not rfc3987-syntax: autograder/__init__.py refuses it)
    "idna": "jsonschema formats",
    # (nbgrader's stack no longer travels: grading/assemble.py computes nbgrader's checksum itself)
    "setuptools": "its distutils .pth file, loaded at every start-up",
    # the CUDA tests
    "pytest": "pytest -m cuda", "pluggy": "pytest", "iniconfig": "pytest", "packaging": "pytest",
    "pytest-timeout": "the CUDA tests' time limits",
}

FROM_MACHINE = {  # distribution -> why it is not carried (the GPU machine has it)
    "torch": "the machine's CUDA build (2.11)", "numpy": "torch's, binary and large",
    "matplotlib": "large; the zygote imports it", "contourpy": "matplotlib", "cycler": "matplotlib",
    "fonttools": "matplotlib", "kiwisolver": "matplotlib", "pillow": "matplotlib",
    "pyparsing": "matplotlib", "python-dateutil": "matplotlib", "six": "python-dateutil",
    "tzdata": "arrow", "Jinja2": "torch", "MarkupSafe": "Jinja2", "sympy": "torch", "mpmath": "sympy",
    "networkx": "torch", "filelock": "torch", "fsspec": "torch",
    "attention-autograder": "this repository, on PYTHONPATH",
}

OPTIONAL = {  # distribution -> who imports it when it is installed (here, or there), needing none
    "msgpack": "jupyter_client's serializer (the GPU machine has it)", "orjson": "jupyter_client's serializer",
}

# bubblewrap (the sandbox) and the libraries it links, from Debian, unpacked by
# gpu_check.sh when the machine has no bwrap of its own.
DEBS = ("bubblewrap", "libcap2", "libselinux1", "libpcre2-8-0")
PLATFORMS = ("manylinux2014_x86_64", "manylinux_2_17_x86_64", "manylinux_2_24_x86_64",
             "manylinux_2_26_x86_64", "manylinux_2_27_x86_64", "manylinux_2_28_x86_64")


def pinned() -> list[str]:
    """``name==version`` for every carried distribution, as installed in this interpreter."""
    return [f"{name}=={importlib.metadata.version(name)}" for name in sorted(CARRIED, key=str.lower)]


def imported_distributions(modules=RUNTIME_MODULES) -> set[str]:
    """The distributions whose packages are loaded after importing ``modules``."""
    import importlib
    for module in modules:
        importlib.import_module(module)
    owners = importlib.metadata.packages_distributions()
    top = {name.split(".")[0] for name, module in list(sys.modules.items())
           if module is not None  # an import refused on purpose (autograder/__init__.py)
           and "/_vendor/" not in _location(module)}  # vendored: it travels inside its wheel
    return {dist for name in top for dist in owners.get(name, ())}


def _location(module) -> str:
    """Where a module lies (a namespace package has no ``__file__``, only a path)."""
    found = getattr(module, "__file__", None) or next(iter(getattr(module, "__path__", None) or []), None)
    return str(found or "")


def download(dest: Path, python_version: str) -> None:
    """pip-download every carried wheel for ``python_version`` on manylinux x86_64."""
    requirements = pinned()
    platforms = [arg for p in PLATFORMS for arg in ("--platform", p)]
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                    "--python-version", python_version, "--implementation", "cp", *platforms,
                    "-d", str(dest), *requirements], check=True)
    (dest / "requirements.txt").write_text("\n".join(requirements) + "\n")
    (dest / "python_version.json").write_text(json.dumps({"python_version": python_version}))


def download_debs(dest: Path) -> None:
    """``apt-get download`` bubblewrap and its libraries (no install); warn if apt cannot."""
    apt = shutil.which("apt-get")
    dest.mkdir(parents=True, exist_ok=True)
    if apt is None or subprocess.run([apt, "download", *DEBS], cwd=dest).returncode != 0:
        print(f"warning: could not download {' '.join(DEBS)} (apt-get update first?); "
              f"the GPU machine will need its own bwrap", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dest", type=Path, default=REPO / "wheels")
    parser.add_argument("--python-version", default="3.12", help="the GPU machine's Python")
    args = parser.parse_args()
    if args.dest.exists():
        shutil.rmtree(args.dest)  # one version of each: two would stop the install there
    args.dest.mkdir(parents=True)
    download(args.dest, args.python_version)
    download_debs(args.dest / "debs")
    size_mb = sum(f.stat().st_size for f in args.dest.rglob("*") if f.is_file()) / 2**20
    print(f"{args.dest}: {len(list(args.dest.glob('*.whl')))} wheels, "
          f"{len(list(args.dest.glob('debs/*.deb')))} debs, {size_mb:.1f} MB")
    if size_mb > LIMIT_MB:
        sys.exit(f"{args.dest} is {size_mb:.1f} MB, over {LIMIT_MB} MB: carry fewer wheels "
                 f"(scripts/gpu_check_wheels.py, CARRIED)")


if __name__ == "__main__":
    main()
