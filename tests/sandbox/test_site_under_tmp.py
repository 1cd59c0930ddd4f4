"""A grader whose packages lie under /tmp (a checkout in /tmp, or the GPU check's venv on top of
another venv's packages) still runs student code: the sandbox's own /tmp hides nothing it needs."""
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from .helpers import CAN_SANDBOX, SKIP_REASON

pytestmark = pytest.mark.skipif(not CAN_SANDBOX, reason=SKIP_REASON)

GRADER = textwrap.dedent("""
    import json, sys
    sys.path.append(sys.argv[1])  # as a .pth file of the GPU check's venv adds another venv's site folder
    from pathlib import Path
    from autograder.sandbox.sandbox import Sandbox
    from tests.sandbox.helpers import LIMITS, make_helper_package
    with Sandbox(93, make_helper_package(Path(sys.argv[2])), LIMITS) as sandbox:
        worker = sandbox.spawn()
        reply = worker.transport({"op": "exec", "args": {"label": "x", "source":
                                  "import tmp_probe\\nprint(tmp_probe.WHERE)"}})
        worker.close()
    print(json.dumps(reply))
""")


def test_a_site_folder_under_tmp_is_importable_inside(tmp_path):
    with tempfile.TemporaryDirectory(dir="/tmp", prefix="checkout-") as checkout:
        site = Path(checkout) / "venv" / "lib" / "python3" / "site-packages"
        site.mkdir(parents=True)
        (site / "tmp_probe.py").write_text("WHERE = 'found under /tmp'\n")
        for folder in (site, *site.parents):
            if folder == Path("/tmp"):
                break
            folder.chmod(0o755)  # the slot's uid reads it, as it reads any venv
        helpers = tmp_path / "helpers"
        helpers.mkdir()
        run = subprocess.run([sys.executable, "-c", GRADER, str(site), str(helpers)], capture_output=True,
                             text=True, timeout=300, cwd=Path(__file__).resolve().parents[2])
    assert run.returncode == 0, run.stderr[-3000:]
    reply = json.loads(run.stdout.strip().splitlines()[-1])
    assert "error" not in reply, reply
    assert reply["stdout"].strip() == "found under /tmp"
