"""Does a sandboxed worker reach the device? One sandbox slot, one worker, one call.

The call sends a tensor on DEVICE into the worker (so the worker starts CUDA there, under
its rlimits, as uid of the slot), computes on it, and sends a tensor back. It also reports
what the worker's process holds after that (VmData is what RLIMIT_DATA counts), so a
CUDA context that comes close to ``memory_mb`` shows before students' code does.
Prints one JSON object; never raises.

    python scripts/gpu_check_smoke.py cuda|cpu
"""
import json
import sys
import traceback

import torch

CELL = '''
import resource
import torch

def smoke(x):
    y = (x @ x.T).sum()
    status = dict(line.split(":", 1) for line in open("/proc/self/status") if line.startswith("Vm"))
    return {"device": str(x.device), "value": float(y), "echo": x * 2,
            "rlimit_data_mb": resource.getrlimit(resource.RLIMIT_DATA)[0] // 2**20,
            "vm": {k: v.strip() for k, v in status.items() if k in ("VmData", "VmRSS", "VmSize", "VmPeak")},
            "tf32": [torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32]}
'''
SLOT = 0  # on CUDA a slot is a GPU (uids are leased per run, so no other run shares it)


def smoke(device: str) -> dict:
    from autograder.course import COURSE
    from autograder.sandbox.sandbox import Sandbox
    with Sandbox(SLOT, COURSE.helper_package("attention_scoring"), device=device) as sandbox:
        worker = sandbox.spawn(None)
        reply = worker.transport({"op": "exec", "args": {"label": "smoke", "source": CELL}})
        if "error" in reply:
            return {"ok": False, "exec_error": reply["error"]}
        x = torch.arange(6.0, device=device).reshape(2, 3)  # (2, 3)
        reply = worker.transport({"op": "call", "args": {"target": "smoke", "method": None,
                                                         "args": [x], "kwargs": {}}})
        worker.close()
    if "error" in reply:
        return {"ok": False, "call_error": reply["error"]}
    value = reply["value"]
    echo = value.pop("echo")
    value["echo_device"] = str(echo.device)
    value["ok"] = value["device"].startswith(device) and torch.equal(echo, x * 2)
    return value


def main(device: str) -> None:
    try:
        found = smoke(device)
    except BaseException as error:  # noqa: BLE001 - a diagnosis, printed, never raised
        found = {"ok": False, "raised": f"{type(error).__name__}: {error}",
                 "traceback": traceback.format_exc()[-2000:]}
    print(json.dumps(found, default=str))


if __name__ == "__main__":
    main(sys.argv[1])
