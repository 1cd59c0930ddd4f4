"""``grader.yml``: one typed configuration, validated before any work starts.

Unknown keys are errors with a suggestion, and every task's checks must be exactly the
checks the grader has for it, so a typo can never silently drop points.
"""
import dataclasses
import difflib
import inspect
import re
from datetime import date, datetime
from pathlib import Path
from typing import Literal

import yaml
from pydantic import (AnyHttpUrl, AwareDatetime, BaseModel, ConfigDict, Field, PositiveFloat, PositiveInt,
                      TypeAdapter, ValidationError, create_model, field_validator, model_validator)

from .course import COURSE, Course
from .sandbox.limits import Limits


class ConfigError(Exception):
    """A usage or grader.yml error: one readable line per mistake (exit status 2)."""
    exit_code = 2


def _limit_fields() -> dict:
    """grader.yml's ``sandbox`` keys: the fields of the sandbox's ``Limits``, with their
    defaults, types (positive) and help (the comment on each field's line in limits.py)."""
    source = inspect.getsource(Limits)
    help_of = dict(re.findall(r"^\s+(\w+):[^#\n]*#\s*(.+)$", source, re.MULTILINE))
    positive = {int: PositiveInt, float: PositiveFloat}
    return {f.name: (positive[type(f.default)], Field(f.default, description=help_of.get(f.name, "")))
            for f in dataclasses.fields(Limits)}


class _LimitsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def limits(self) -> Limits:
        """The sandbox's ``Limits`` for these settings."""
        return Limits(**self.model_dump())


SandboxConfig = create_model("SandboxConfig", __base__=_LimitsConfig, **_limit_fields())


class ManualTask(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    manual: PositiveFloat = Field(description="points of a written answer graded by the TA")


class AssignmentConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    notebook: str = Field(description="file name of the notebook in assignments/<name>/")
    tasks: dict[str, ManualTask | dict[str, float]] = Field(
        description="task id -> {check name: points} or {manual: points}")

    def points(self, task_id: str) -> float:
        task = self.tasks[task_id]
        return task.manual if isinstance(task, ManualTask) else sum(task.values())

    def is_manual(self, task_id: str) -> bool:
        return isinstance(self.tasks[task_id], ManualTask)


class ServiceConfig(BaseModel):
    """``autograder serve`` (SPEC §5); the deadline's keys are read by ``service/deadlines.py``."""
    model_config = ConfigDict(extra="forbid", frozen=True)
    submissions_per_hour: PositiveInt = Field(
        20, description="submissions one student may hand in over the last 60 minutes (refused ones do not count)")
    deadline: AwareDatetime | None = Field(
        None, description="the assignment's deadline, ISO 8601 with a time zone (2026-03-01T23:59:00+03:00): "
                          "later uploads are refused, later exchange hand-ins get feedback only")
    extensions: Path | None = Field(
        None, description="a CSV of per-student deadlines (student_id,deadline), its path relative to grader.yml")
    exchange_shared_uid: bool = Field(
        False, description="the hub runs every student as one Unix user: a hand-in folder's owner is not "
                           "checked against the student it names (anyone can hand in as anyone)")
    url: str | None = Field(
        None, description="the students' page of `autograder serve`, named in the students' README; "
                          "{assignment} in it stands for each assignment's name (https://course.example.org/{assignment}/)")

    @field_validator("deadline", mode="before")
    @classmethod
    def _a_time_with_its_zone(cls, value):
        return _deadline(value)

    @field_validator("url")
    @classmethod
    def _a_web_address(cls, value: str | None) -> str | None:
        if value is not None:
            if re.search(r"[\s<>\[\]()`\\]", value):
                raise ValueError("an address with a space, a bracket, a backquote or a backslash; give the page's URL")
            TypeAdapter(AnyHttpUrl).validate_python(value.replace("{assignment}", "assignment"))
        return value

    @field_validator("extensions")
    @classmethod
    def _a_file(cls, value: Path | None) -> Path | None:
        if value is not None and value.name in ("", ".", ".."):
            raise ValueError("give the path of a CSV file (student_id,deadline), relative to grader.yml")
        return value

    @model_validator(mode="after")
    def _extensions_of_a_deadline(self) -> "ServiceConfig":
        if self.extensions is not None and self.deadline is None:
            raise ValueError("service.extensions gives students later deadlines than service.deadline, "
                             "which is not set; set it")
        return self


def _deadline(value):
    """A deadline as YAML gives it (a time with its zone) or as text; a date alone, a time
    without its zone or a number is refused: each would be read in some zone nobody chose."""
    if value is None:
        return None
    example = "write it as 2026-03-01T23:59:00+03:00 (or ...Z for UTC)"
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            raise ValueError(f"not a date and time in ISO 8601; {example}") from None
    if type(value) is date:
        raise ValueError(f"a date without a time; {example}")
    if not isinstance(value, datetime):
        raise ValueError(f"not a date and time; {example}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"a time without its time zone; {example}")
    return value


class GraderConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    language: Literal["en", "ru"] = Field("en", description="language of the feedback")
    device: Literal["auto", "cpu", "cuda"] = Field("auto", description="where the checks run")
    seed: int | None = Field(None, description="overrides the per-assignment hypothesis seed")
    max_notebook_mb: PositiveInt = Field(20, description="a larger submission is not read (scored 0)")
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    service: ServiceConfig = Field(default_factory=ServiceConfig)
    assignments: dict[str, AssignmentConfig]

    def assignment(self, name: str) -> AssignmentConfig:
        if name not in self.assignments:
            raise ConfigError(f"unknown assignment {name!r}{_suggest(name, self.assignments)}; "
                              f"grader.yml has {sorted(self.assignments)}")
        return self.assignments[name]


def _suggest(word: str, choices) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _fields_at(location: tuple) -> list[str]:
    """Names of the keys allowed where a validation error happened."""
    if location[0] == "sandbox":
        return list(SandboxConfig.model_fields)
    if location[0] == "service":
        return list(ServiceConfig.model_fields)
    if location[0] == "assignments" and len(location) == 3:
        return list(AssignmentConfig.model_fields)
    if location[0] == "assignments":
        return list(ManualTask.model_fields)
    return list(GraderConfig.model_fields)


def _describe(error: dict) -> str:
    location = ".".join(str(part) for part in error["loc"])
    if error["type"] == "extra_forbidden":
        key = str(error["loc"][-1])
        return f"{location}: unknown key{_suggest(key, _fields_at(error['loc']))}"
    if error["type"] == "value_error":  # one of ours, written as it should read
        return f"{location}: {error['ctx']['error']}"
    return f"{location}: {error['msg'].lower()}"


def load_config(path: Path | None = None, course: Course = COURSE) -> GraderConfig:
    """Read and validate grader.yml, then check its checks against the grader's own."""
    return parse_config(read_config(path or course.config_path), path or course.config_path, course)


def read_config(path: Path, given: bool = False) -> bytes:
    """The file's bytes (what the result cache keys on), or a ``ConfigError`` saying why not;
    ``given``: the path came from ``--config``."""
    try:
        return path.read_bytes()
    except OSError as error:
        fix = "check the path given to --config" if given else "pass --config PATH to use another grader.yml"
        raise ConfigError(f"{'--config ' if given else ''}{path}: cannot read ({error.strerror}); {fix}") from None


def parse_config(data: bytes, path: Path, course: Course = COURSE) -> GraderConfig:
    try:
        raw = yaml.safe_load(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise ConfigError(f"{path}: not valid YAML{where}: {problem}") from None
    if raw is not None and not isinstance(raw, dict):
        raise ConfigError(f"{path}: expected a mapping of keys (language:, sandbox:, assignments:), "
                          f"got a {type(raw).__name__}")
    try:
        config = GraderConfig.model_validate(raw or {})
    except ValidationError as error:
        raise ConfigError("\n".join(f"{path.name}: {_describe(e)}" for e in error.errors())) from None
    problems = _check_names(config) + _check_notebook_points(config, course)
    if problems:
        raise ConfigError("\n".join(f"{path.name}: {p}" for p in problems))
    return config


def _check_names(config: GraderConfig) -> list[str]:
    from .checks import TASKS  # the checks the grader actually has
    problems = []
    for name, assignment in config.assignments.items():
        for task_id, task in assignment.tasks.items():
            where = f"assignments.{name}.tasks.{task_id}"
            if isinstance(task, ManualTask):
                continue
            if task_id not in TASKS:
                problems.append(f"{where}: no checks exist for this task{_suggest(task_id, TASKS)}")
                continue
            known = [check.name for check in TASKS[task_id].checks]
            problems += [f"{where}.{check}: unknown check{_suggest(check, known)}"
                         for check in task if check not in known]
            problems += [f"{where}: missing check {check!r} (give it points, 0 to switch it off)"
                         for check in known if check not in task]
    return problems


def _check_notebook_points(config: GraderConfig, course: Course) -> list[str]:
    """Each task's points must be those of its cell in the source notebook (the one source of
    truth for nbgrader's gradebook): the test cell ``<task>_tests``, or the manual cell."""
    import nbformat
    problems = []
    for name, assignment in config.assignments.items():
        path = course.source_notebook(name, assignment.notebook)
        try:
            cells = nbformat.read(path, as_version=4).cells
        except (OSError, ValueError) as error:
            problems.append(f"assignments.{name}.notebook: cannot read {path} ({error})")
            continue
        points = {c.metadata["nbgrader"]["grade_id"]: c.metadata["nbgrader"].get("points")
                  for c in cells if c.get("metadata", {}).get("nbgrader", {}).get("grade")}
        for task_id in assignment.tasks:
            cell_id = task_id if isinstance(assignment.tasks[task_id], ManualTask) else f"{task_id}_tests"
            if points.get(cell_id) is None:
                problems.append(f"assignments.{name}.tasks.{task_id}: the notebook has no graded cell {cell_id!r}")
            elif abs(points[cell_id] - assignment.points(task_id)) > 1e-9:
                problems.append(f"assignments.{name}.tasks.{task_id}: points add up to {assignment.points(task_id):g} "
                                f"but the notebook's cell {cell_id!r} gives {points[cell_id]:g}; make them agree")
    return problems
