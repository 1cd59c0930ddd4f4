"""Does the Quick start still do what it shows? Every command of its console blocks runs, in
order, in a fresh folder holding a copy of the bundled examples, with this checkout's
``autograder`` on PATH; what each prints must match what the page shows under it.

The service's command runs as shown plus ``--port 0`` (any free port, so that a machine's
port 8000 is never needed), in the background; the page's ``127.0.0.1:8000`` in later
commands becomes the port it chose. Then it is stopped as the page says (Ctrl-C: SIGINT).
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .quickstart import REPO, Step, setup_commands, steps

SERVE = "autograder serve "
STARTED = re.compile(r"serving \S+ at http://127\.0\.0\.1:(\d+)/")
COMMAND_S = 300     # one grading run of four notebooks, on a busy 2-core machine
GRADED_S = 240


def _env() -> dict:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    env["COLUMNS"] = "200"  # what a wide terminal shows: no line of the page's output is wrapped
    return env


def _run(command: str, folder: Path) -> str:
    done = subprocess.run(["bash", "-c", command], cwd=folder, env=_env(), capture_output=True, text=True,
                          timeout=COMMAND_S)
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"quick start: `{command}` exited {done.returncode}:\n{output[-3000:]}"
    return output


class Service:
    """The page's `autograder serve`, in the background until stopped."""

    def __init__(self, step: Step, folder: Path):
        self.log = folder / "serve.log"
        self.process = subprocess.Popen(["bash", "-c", f"exec {step.command} --port 0 2> serve.log"], cwd=folder,
                                        env=_env(), stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + COMMAND_S
        while not (started := STARTED.search(self.text())):
            assert self.process.poll() is None, f"quick start: `{step.command}` stopped:\n{self.text()[-3000:]}"
            assert time.monotonic() < deadline, f"quick start: the service did not start:\n{self.text()[-3000:]}"
            time.sleep(0.2)
        self.port = started.group(1)

    def text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            self.process.wait(timeout=60)


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """Every step of the page, run once: (step, output) in order; the folder they ran in."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed (make sandbox-deps)")
    folder = tmp_path_factory.mktemp("quickstart")
    shutil.copytree(REPO / "examples", folder / "examples")
    outputs, service = [], None
    try:
        for step in steps():
            command = step.command.replace("127.0.0.1:8000", f"127.0.0.1:{service.port}") if service else step.command
            if command.startswith(SERVE):
                service = Service(step, folder)
                outputs.append((step, service.text().replace(f":{service.port}/", ":8000/")))
            else:
                outputs.append((step, _run(command, folder)))
        yield outputs, folder, service
    finally:
        if service is not None:
            service.stop()


def test_the_page_has_the_five_steps():
    """Does the page still show grading, showing, written points, export and the service?"""
    commands = " ".join(step.command for step in steps())
    for verb in ("autograder grade", "autograder show", "manual_points.csv", "autograder export",
                 "autograder tokens", "autograder serve", "api/submissions"):
        assert verb in commands, f"docs/quickstart.md: no console command with {verb!r}"


def test_every_command_prints_what_the_page_shows(ran):
    """Does each command's output match the lines the page shows under it?"""
    outputs, _, _ = ran
    wrong = [f"$ {step.command}\n  the page shows:\n" + "\n".join(f"    {line}" for line in step.shown)
             + "\n  it printed:\n" + "\n".join(f"    {line}" for line in output.splitlines()[-25:])
             for step, output in outputs if not step.matches(output)]
    assert not wrong, "docs/quickstart.md no longer shows what its commands print:\n\n" + "\n\n".join(wrong)


def test_the_hand_in_is_graded_into_the_results(ran):
    """Does the student's hand-in through the service land as the page says: a result, a
    feedback page and a row of grades.csv, seconds later?"""
    _, folder, service = ran
    results = folder / "results" / "attention_scoring"
    deadline = time.monotonic() + GRADED_S
    while not (results / "ivanov.json").exists():
        assert time.monotonic() < deadline, f"the hand-in was not graded:\n{service.text()[-3000:]}"
        time.sleep(0.2)
    assert (results / "feedback" / "ivanov.html").exists()
    service.stop()
    assert service.process.returncode == 130, service.text()[-2000:]
    assert any(line.startswith("ivanov,") for line in (results / "grades.csv").read_text().splitlines())


def test_the_set_up_commands_exist():
    """Do the set-up lines name a make target that exists and the venv's activate script?"""
    commands = setup_commands()
    assert "make demo" in commands and ". .venv/bin/activate" in commands, commands
    dry = subprocess.run(["make", "-n", "demo"], cwd=REPO, capture_output=True, text=True)
    assert dry.returncode == 0 and "autograder grade examples/attention_scoring" in dry.stdout, dry.stderr
    assert (REPO / ".venv" / "bin" / "activate").exists()
