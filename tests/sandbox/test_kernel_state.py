"""Kernel state that outlives a submission (issue 18, item 1): a submission plants data by
every channel it can reach; the next submission in the same slot, and a submission in the
other slot, find none of it. The list of channels and what closes each is in the
docstring of ``autograder.sandbox.sandbox``."""
import contextlib
import os

import pytest

from autograder.sandbox import seccomp

from .helpers import run

pytestmark = pytest.mark.timeout(90)

PLANT = r'''
import ctypes, errno, os, socket, time
libc = ctypes.CDLL(None, use_errno=True)
SECRET = b"ag-secret-42"

def call(number, *args):
    if libc.syscall(number, *args) >= 0:
        return "planted"
    return "denied: " + errno.errorcode[ctypes.get_errno()]

outcome = {
    "user keyring": call(248, b"user", b"ag-secret", SECRET, len(SECRET), ctypes.c_int(-4)),
    "session keyring": call(248, b"user", b"ag-secret", SECRET, len(SECRET), ctypes.c_int(-3)),
    "sysv shm": call(29, 0x4242, 4096, 0o1666),
    "sysv msg": call(68, 0x4242, 0o1666),
    "sysv sem": call(64, 0x4242, 1, 0o1666),
    "posix mq": call(240, b"ag-secret", os.O_CREAT | os.O_RDWR, 0o666, None),
    "inotify": call(294, 0),
}
try:
    with open("/dev/shm/ag-secret", "wb") as file:
        file.write(SECRET)
    outcome["posix shm"] = "planted"
except OSError as error:
    outcome["posix shm"] = "denied: " + errno.errorcode[error.errno]
with open("/tmp/ag-secret", "wb") as file:
    file.write(SECRET)
outcome["tmp file"] = "planted"
ready, told = os.pipe()
if os.fork() == 0:  # a daemon in its own session, holding an abstract socket and a port
    os.setsid()
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(b"\0ag-secret")
    unix.listen()
    tcp = socket.create_server(("127.0.0.1", 4242))
    os.write(told, b"1")
    time.sleep(600)
os.read(ready, 1)
outcome["abstract socket"] = outcome["loopback port"] = "planted"
print(outcome)
'''

LOOK = r'''
import ctypes, os, socket
libc = ctypes.CDLL(None, use_errno=True)
found = []
for keyring in (-4, -3):  # KEYCTL_SEARCH in the user and session keyrings
    if libc.syscall(250, 10, ctypes.c_int(keyring), b"user", b"ag-secret", 0) >= 0:
        found.append("keyring")
try:
    if "ag-secret" in open("/proc/keys").read():
        found.append("/proc/keys")
except OSError:
    pass
for name, number, args in (("sysv shm", 29, (0x4242, 0, 0)), ("sysv msg", 68, (0x4242, 0)),
                           ("sysv sem", 64, (0x4242, 0, 0)), ("posix mq", 240, (b"ag-secret", os.O_RDONLY))):
    if libc.syscall(number, *args) >= 0:
        found.append(name)
for kind in ("shm", "msg", "sem"):
    if len(open(f"/proc/sysvipc/{kind}").read().splitlines()) > 1:
        found.append(f"/proc/sysvipc/{kind}")
for path, name in (("/dev/shm/ag-secret", "posix shm"), ("/tmp/ag-secret", "tmp file")):
    if os.path.exists(path):
        found.append(name)
for family, address, name in ((socket.AF_UNIX, b"\0ag-secret", "abstract socket"),
                              (socket.AF_INET, ("127.0.0.1", 4242), "loopback port")):
    with socket.socket(family) as probe:
        if probe.connect_ex(address) == 0:
            found.append(name)
others = [p for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, os.getpid(), os.getppid())]
if others:
    found.append("process")
print(found)
'''
DENIED = {"user keyring": "denied: EPERM", "session keyring": "denied: EPERM", "sysv shm": "denied: EPERM",
          "sysv msg": "denied: EPERM", "sysv sem": "denied: EPERM", "posix mq": "denied: EPERM",
          "inotify": "denied: EPERM", "posix shm": "denied: EACCES"}


def _plant(worker) -> dict:
    reply = run(worker, PLANT)
    assert "error" not in reply, reply
    return eval(reply["stdout"])  # noqa: S307 - our own cell's printed dict


def _look(worker) -> list[str]:
    reply = run(worker, LOOK)
    assert "error" not in reply, reply
    return eval(reply["stdout"])  # noqa: S307


def test_within_a_submission_only_its_own_channels_work(worker):
    """Does every channel that would outlive the submission refuse the plant, while the
    ones that die with it (a /tmp file, sockets, a process) work and can be found?"""
    outcome = _plant(worker)
    assert {k: v for k, v in outcome.items() if k in DENIED} == DENIED
    assert sorted(_look(worker)) == ["abstract socket", "loopback port", "process", "tmp file"]


def test_the_next_submission_in_the_slot_finds_nothing(sandbox):
    """After a submission planted by every channel, does the next one in the slot find none?"""
    with contextlib.closing(sandbox.spawn()) as planter:
        _plant(planter)
    with contextlib.closing(sandbox.spawn()) as looker:
        assert _look(looker) == []


def test_the_other_slot_finds_nothing_even_meanwhile(sandbox, other_sandbox):
    """While a submission that planted by every channel still runs in one slot, does a
    submission in the other slot find none of it?"""
    with contextlib.closing(sandbox.spawn()) as planter:
        _plant(planter)
        with contextlib.closing(other_sandbox.spawn()) as looker:
            assert _look(looker) == []


@pytest.mark.skipif(os.uname().machine not in seccomp.MACHINES, reason="no seccomp filter on this machine")
@pytest.mark.parametrize("name", sorted(seccomp.DENIED))
def test_each_denied_system_call_fails_with_eperm(worker, name):
    """Does each system call on the deny list fail with EPERM before the kernel looks at
    its arguments (all zero here; some would succeed, e.g. PTRACE_TRACEME)?"""
    number = seccomp.DENIED[name][seccomp.MACHINES[os.uname().machine][1]]
    if number is None:
        pytest.skip(f"{name} does not exist on this machine")
    reply = run(worker, f"import ctypes, errno\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                        f"print(libc.syscall({number}, 0, 0, 0, 0, 0, 0), errno.errorcode[ctypes.get_errno()])")
    assert reply["stdout"] == "-1 EPERM\n"


@pytest.mark.parametrize("source, expected", [
    ("libc.syscall(435, 0, 0)", "-1 ENOSYS"),  # clone3: glibc falls back to clone
    ("libc.unshare(0x10000000)", "-1 EPERM"),  # CLONE_NEWUSER
    ("libc.unshare(0x40000000)", "-1 EPERM"),  # CLONE_NEWNET: no capability left
])
def test_no_new_namespaces(worker, source, expected):
    """Can a cell make no namespace of its own (and so no capability in one)?"""
    reply = run(worker, f"import ctypes, errno\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                        f"print({source}, errno.errorcode[ctypes.get_errno()])")
    assert reply["stdout"] == expected + "\n"
