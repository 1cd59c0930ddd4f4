"""Sandbox slots launched before the grader's own imports, so that their zygotes import torch
on the other core while the grader imports its checks (a cold run of one notebook waits for
both: about 2.5 s each on these machines).

``launch_early`` reads only what a slot needs (grader.yml's sandbox limits, the assignment's
helper package, how many notebooks there are) with the light modules, and gives up quietly
on anything unclear: ``run.prepare`` then says what is wrong, and the pool starts its slots
itself. Each slot is launched on the CPU its grading process will be pinned to (``slot_cpus``);
the grading processes forked later ``adopt`` one slot each (``pool._start_slot``);
the parent closes what is left once the first pool has ended.
"""
import os
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..course import COURSE, Course
from ..sandbox.confine import gpu_nodes
from ..sandbox.limits import Limits
from ..sandbox.preflight import check_available
from ..sandbox.sandbox import Sandbox


@dataclass
class EarlySlots:
    """Slots launched for a run, one per grading process it will most likely fork."""
    limits: Limits
    helpers: Path
    sandboxes: list[Sandbox] = field(default_factory=list)

    def fits(self, limits: Limits, helpers: Path, device: str) -> bool:
        """Whether these slots are the ones the run's settings ask for."""
        return device == "cpu" and limits == self.limits and Path(helpers).resolve() == self.helpers

    def close(self) -> None:
        for sandbox in self.sandboxes:
            sandbox.close()
        self.sandboxes = []


def launch_early(paths: list[Path], assignment: str, jobs: int | None, config: Path | None,
                 device: str | None, students: list[str], course: Course = COURSE) -> EarlySlots | None:
    """Slots for a local run on the CPU, launched now; None where that is not clear yet."""
    try:
        raw = yaml.safe_load((config or course.config_path).read_text(encoding="utf-8"))
        wanted = device or raw.get("device", "auto")
        if wanted == "cuda" or (wanted == "auto" and gpu_nodes()) or check_available() is not None:
            return None
        limits = Limits(**(raw.get("sandbox") or {}))
        count = _notebooks(paths, assignment, raw["assignments"][assignment]["notebook"], students)
    except Exception:  # noqa: BLE001 - whatever it is, prepare() says it properly
        return None
    early = EarlySlots(limits, course.helper_package(assignment).resolve())
    for slot in range(min(jobs or os.cpu_count() or 1, count)):
        sandbox = Sandbox(slot, early.helpers, limits, "cpu")
        try:
            sandbox.launch(slot_cpus(slot))
        except Exception:  # noqa: BLE001 - the pool starts this slot itself, and says why it cannot
            sandbox.close()
            break
        early.sandboxes.append(sandbox)
    return early if early.sandboxes else None


def slot_cpus(slot: int) -> set[int]:
    """The one CPU, of those this process may use, that grading slot ``slot`` runs on."""
    cpus = sorted(os.sched_getaffinity(0))
    return {cpus[slot % len(cpus)]}


def _notebooks(paths: list[Path], assignment: str, notebook: str, students: list[str]) -> int:
    from ..submissions.find import find_submissions
    found = find_submissions(paths, assignment, notebook).submissions
    return len([s for s in found if not students or s.student_id in students])
