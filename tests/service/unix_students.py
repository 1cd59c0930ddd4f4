"""Students as real Unix users, for the exchange's tests: made with ``useradd`` (root only),
each running nbgrader's commands under their own uid, and removed again (``userdel``) with
the folders they own.

A process dropped to a student's uid must still run this Python. Where the interpreter lives
under a folder others cannot enter (``/root``, mode 0700, on these machines), the command runs
in a mount namespace of its own, where a small tmpfs stands in for that folder with only the
interpreter's sub-folder bound into it; nothing changes for any other process.
"""
import os
import pwd
import shlex
import shutil
import stat
import subprocess
import sys
import uuid
from pathlib import Path

TOOLS = ("useradd", "userdel", "unshare", "setpriv")


class UnixStudents:
    def __init__(self, names: list[str], scratch: Path):
        self.names, self.scratch = names, scratch
        self.ids = {name: (pwd.getpwnam(name).pw_uid, pwd.getpwnam(name).pw_gid) for name in names}

    @classmethod
    def make(cls, roles: list[str], scratch: Path) -> "tuple[UnixStudents | None, str]":
        """One user per role (``ag<tag><role>``), or None and why not."""
        if os.geteuid() != 0:
            return None, "not root: no Unix users can be made"
        missing = [tool for tool in TOOLS if shutil.which(tool) is None]
        if missing:
            return None, f"no {', '.join(missing)} on this machine"
        if _hidden_ancestor() == "deeper":
            return None, "the interpreter lies under two folders other users cannot enter"
        tag, made = uuid.uuid4().hex[:6], []
        for role in roles:
            name = f"ag{tag}{role}"[:31]
            done = subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
                                  capture_output=True, text=True)
            if done.returncode != 0:
                cls(made, scratch).remove()
                return None, f"useradd failed: {done.stderr.strip()}"
            made.append(name)
        return cls(made, scratch), ""

    def remove(self) -> None:
        for name in self.names:
            subprocess.run(["userdel", name], capture_output=True)

    def own(self, name: str, path: Path) -> None:
        """``path`` and everything under it, given to ``name``."""
        uid, gid = self.ids[name]
        for folder, folders, files in os.walk(path):
            for entry in [folder, *(os.path.join(folder, f) for f in folders + files)]:
                os.chown(entry, uid, gid, follow_symlinks=False)

    def command(self, name: str, argv: list[str]) -> list[str]:
        """``argv`` as run by ``name`` (its uid and gid, no other group)."""
        uid, gid = self.ids[name]
        drop = f"exec setpriv --reuid={uid} --regid={gid} --clear-groups -- \"$@\""
        hidden = _hidden_ancestor()
        if hidden is None:
            return ["sh", "-c", drop, "sh", *argv]
        ancestor, child = map(shlex.quote, map(str, hidden))
        scratch = shlex.quote(str(self.scratch))
        self.scratch.mkdir(exist_ok=True)
        unhide = (f"mount --bind {ancestor} {scratch} && mount -t tmpfs -o mode=0755,size=1m tmpfs {ancestor} && "
                  f"mkdir {ancestor}/{child} && mount --bind {scratch}/{child} {ancestor}/{child} && "
                  f"umount {scratch} && ")
        return ["unshare", "--mount", "--propagation", "private", "sh", "-c", unhide + drop, "sh", *argv]


def _hidden_ancestor():
    """(the folder others cannot enter, the name of its sub-folder that leads to the interpreter),
    None when every folder on the way is open, ``"deeper"`` when two are closed."""
    real = Path(os.path.realpath(sys.executable))
    closed = [folder for folder in reversed(real.parents) if not os.stat(folder).st_mode & stat.S_IXOTH]
    if not closed:
        return None
    if len(closed) > 1:
        return "deeper"
    return closed[0], real.relative_to(closed[0]).parts[0]
