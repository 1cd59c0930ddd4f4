"""The executors by name: ``local`` (this machine's processes) and ``ray`` (a Ray cluster).

The one place that knows the names; the grade and serve verbs ask it, and Ray is imported
only when it is chosen. Light: the command line checks a name before its heavy imports.
"""
LOCAL, RAY = "local", "ray"
HELP = "local (this machine) or ray (a Ray cluster: see the docs)"


def check_executor(name: str, address: str | None) -> None:
    """``ConfigError`` for an unknown name, or an address given to the local pool."""
    from ..config import ConfigError
    if name not in (LOCAL, RAY):
        raise ConfigError(f"--executor {name}: use local (this machine) or ray (a Ray cluster)")
    if address is not None and name != RAY:
        raise ConfigError(f"--address {address}: only a Ray cluster has an address; add --executor ray")


def executor_named(name: str, address: str | None = None, early=None):
    """The executor called ``name`` (checked first); ``early``: the local pool's slots
    launched before the imports (``early.launch_early``), used where they fit."""
    check_executor(name, address)
    if name == RAY:
        from .ray import RayExecutor
        if early is not None:
            early.close()
        return RayExecutor(address)
    from .local import LocalExecutor
    return LocalExecutor(early)
