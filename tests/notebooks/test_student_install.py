"""Can students open the notebooks where they work (issue 16)?

- Linux laptop without a GPU: the README's "Linux" commands, run as written in a copy of the
  release, build a fresh venv (with the newest versions, and again with the oldest ones
  requirements.txt allows), and both solved notebooks run top to bottom there with
  ``jupyter execute`` (nbclient). One substitution: this machine reaches no PyTorch index,
  so ``pip install torch --index-url .../whl/cpu`` becomes ``pip install torch==2.13.0``,
  the same CPU build from the local wheel. ``jupyter lab`` (a server) is not started.
- macOS and Windows: their blocks are the Linux one without the CPU-index line.
- Colab: a folder holding only the notebook and the uploaded ``d2l_attention.zip``; the first
  cell unpacks it. Opened alone (an LMS download), the first cell says what to do.
- The oldest Python the README states: every helper module and notebook cell compiles there.
"""
import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from autograder.release import STUDENT_REQUIREMENTS

from .cells import ASSIGNMENTS, nbgrader, read, solved_copy, source_path
from .conftest import venv_env

pytestmark = pytest.mark.slow
CPU_INDEX_LINE = "pip install torch --index-url https://download.pytorch.org/whl/cpu"
LOCAL_TORCH_LINE = "pip install torch==2.13.0"   # what the CPU index serves, from /opt/wheels here
SERVER_LINE = "jupyter lab"
MISSING = ("Не найдена библиотека курса d2l_attention: откройте блокнот из папки задания, где она лежит, "
           "а в Colab загрузите d2l_attention.zip из этой папки в панель «Файлы» слева и запустите эту "
           "ячейку снова.")


def readme_block(readme: str, heading: str) -> list[str]:
    """The lines of the first fenced block below ``### <heading>`` in the student README."""
    section = readme.split(f"\n### {heading}", 1)[1]
    block = re.search(r"```\w*\n(.*?)```", section, re.DOTALL)
    return block.group(1).strip().split("\n")


def test_other_platforms_run_the_same_steps(release_dir):
    """Do the macOS and Windows steps install what the tested Linux steps install, minus the CPU index?"""
    readme = (release_dir / "README.md").read_text()
    linux = readme_block(readme, "Linux")
    assert CPU_INDEX_LINE in linux and linux[-1] == SERVER_LINE
    without_index = [line for line in linux if line != CPU_INDEX_LINE]
    assert readme_block(readme, "macOS") == without_index
    windows = readme_block(readme, "Windows")
    assert [line for line in windows if line.startswith(("pip", "jupyter"))] == without_index[2:]


@dataclass(frozen=True)
class StudentVenv:
    kind: str                 # "newest" or "oldest"
    folder: Path              # the student's copy of the release, with .venv in it
    installed: dict[str, str]  # `pip freeze` after the README's steps: name -> version


def student_env() -> dict:
    """A student's environment: the venv's tools on PATH for the steps, no thread limits."""
    env = venv_env()
    env.pop("OMP_NUM_THREADS")
    return env


@pytest.fixture(scope="module", params=["newest", "oldest"])
def student_venv(request, release_dir, tmp_path_factory) -> StudentVenv:
    """The student's folder after the README's Linux steps.

    ``oldest`` pins every requirement to its floor series through PIP_CONSTRAINT (say
    numpy>=1.23 -> numpy==1.23.*); the commands are the same."""
    folder = tmp_path_factory.mktemp(f"student-{request.param}") / "student_template"
    shutil.copytree(release_dir, folder)
    lines = readme_block((release_dir / "README.md").read_text(), "Linux")
    steps = [LOCAL_TORCH_LINE if line == CPU_INDEX_LINE else line for line in lines if line != SERVER_LINE]
    env = student_env()
    if request.param == "oldest":
        floors = folder.parent / "floors.txt"
        floors.write_text("".join(f"{name}=={floor}.*\n" for name, floor in STUDENT_REQUIREMENTS.items()
                                  if name != "torch"))
        env["PIP_CONSTRAINT"] = str(floors)
    script = "set -euo pipefail\n" + "\n".join(steps) + "\npip freeze\n"
    done = subprocess.run(["bash", "-c", script], cwd=folder, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"the README's Linux steps failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    installed = dict(line.split("==", 1) for line in done.stdout.splitlines() if "==" in line)
    return StudentVenv(request.param, folder, {name.lower(): version for name, version in installed.items()})


def test_install_keeps_the_cpu_torch(student_venv):
    """Does `pip install -r requirements.txt` keep the CPU torch and pull nothing of CUDA?"""
    print(student_venv.kind, {name: student_venv.installed[name] for name in (*STUDENT_REQUIREMENTS, "jupyterlab")})
    assert student_venv.installed["torch"] == "2.13.0+cpu"
    assert not [name for name in student_venv.installed if name.startswith(("nvidia", "triton", "cuda"))]


def test_oldest_install_gets_the_floors(student_venv):
    """Does the oldest install really get the floor series of each requirement (and the newest not)?"""
    floors = {name: floor for name, floor in STUDENT_REQUIREMENTS.items() if name != "torch"}
    at_floor = {name: student_venv.installed[name].startswith(floor + ".") for name, floor in floors.items()}
    assert at_floor == dict.fromkeys(floors, student_venv.kind == "oldest")


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_solved_notebook_runs_in_the_student_venv(student_venv, assignment):
    """Does the solved notebook run top to bottom in the student's venv, with that venv's kernel?"""
    folder = student_venv.folder
    path = solved_copy(folder / assignment / f"{assignment}.ipynb", source_path(assignment),
                       folder / assignment / "solved.ipynb")
    notebook = read(path)
    notebook.cells.append(nbformat.v4.new_code_cell("import sys\nprint(sys.prefix)"))   # which Python ran it
    nbformat.write(notebook, path)
    script = f". .venv/bin/activate\njupyter execute --inplace --timeout=600 {assignment}/solved.ipynb\n"
    done = subprocess.run(["bash", "-c", script], cwd=folder, env=student_env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-5000:]
    executed = read(path)
    assert executed.cells[-1].outputs[0].text.strip() == str(folder / ".venv")
    visible = [cell for cell in executed.cells if nbgrader(cell).get("grade_id", "").endswith("_visible")]
    assert visible and all("passed" in "".join(o.get("text", "") for o in cell.outputs) for cell in visible)
    for cell in executed.cells:   # the demos' own timings, for the record (never asserted)
        if nbgrader(cell).get("grade_id") in ("training_demo", "comparison_demo"):
            print(student_venv.kind, cell.id, "".join(output.get("text", "") for output in cell.outputs))


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_colab_unpacks_the_uploaded_zip(kernel_env, release_dir, tmp_path, assignment):
    """With only the notebook and d2l_attention.zip in its folder (Colab's /content), does the first cell import?"""
    shutil.copy(release_dir / assignment / f"{assignment}.ipynb", tmp_path)
    shutil.copy(release_dir / assignment / "d2l_attention.zip", tmp_path)
    notebook = read(tmp_path / f"{assignment}.ipynb")
    first = next(cell for cell in notebook.cells if cell.cell_type == "code")
    notebook.cells = [first]
    NotebookClient(notebook, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    assert (tmp_path / "d2l_attention" / "__init__.py").is_file()


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_notebook_opened_alone_says_what_to_do(kernel_env, release_dir, tmp_path, assignment):
    """Opened without its folder, does the first cell say in one Russian sentence (and English) what to do?"""
    shutil.copy(release_dir / assignment / f"{assignment}.ipynb", tmp_path)
    notebook = read(tmp_path / f"{assignment}.ipynb")
    notebook.cells = [next(cell for cell in notebook.cells if cell.cell_type == "code")]
    NotebookClient(notebook, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    [error] = [output for output in notebook.cells[0].outputs if output.output_type == "error"]
    assert error.ename == "ModuleNotFoundError"
    assert error.evalue.startswith(MISSING + " / The course library d2l_attention is missing")


def test_oldest_stated_python_compiles_everything(release_dir):
    """Does every helper module and notebook cell compile with the oldest Python the README states?"""
    stated = re.search(r"Нужны Python (3\.\d+) или новее", (release_dir / "README.md").read_text()).group(1)
    python = find_python(stated)
    if python is None:
        pytest.skip(f"python{stated} is not installed here")
    sources = {str(path): path.read_text() for path in sorted(release_dir.rglob("*.py"))}
    for assignment in ASSIGNMENTS:
        for cell in read(source_path(assignment)).cells:
            if cell.cell_type == "code":
                sources[f"{assignment}:{cell.id}"] = cell.source
    probe = ("import json, sys\nfor name, text in json.load(sys.stdin).items():\n"
             "    compile(text, name, 'exec')\nprint(sys.version_info[:2])\n")
    done = subprocess.run([python, "-c", probe], input=json.dumps(sources), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(tuple(int(n) for n in stated.split(".")))


def find_python(version: str) -> str | None:
    """An interpreter of ``version`` that runs: on PATH, or one that pyenv installed but not selected."""
    candidates = [shutil.which(f"python{version}")]
    candidates += sorted(str(path) for path in (Path.home() / ".pyenv" / "versions").glob(f"{version}.*/bin/python{version}"))
    for candidate in filter(None, candidates):
        if subprocess.run([candidate, "-c", "pass"], capture_output=True).returncode == 0:
            return candidate
    return None
