"""The sandbox's own exceptions. Each keeps its message as its only argument, so it
survives a pickle round trip (a grading process hands it to the parent)."""


class SandboxUnavailable(RuntimeError):
    """This machine cannot run the sandbox at all."""


class SandboxError(RuntimeError):
    """The sandbox failed for a reason that is the grader's or the course's, not the student's."""


class ZygoteGone(Exception):
    """The zygote did not answer, or a worker died before any student code ran in it:
    the slot must be restarted."""
