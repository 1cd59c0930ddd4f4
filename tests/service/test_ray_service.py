"""``autograder serve --executor ray``: the service's slots on a Ray cluster (a head node started
here on a loopback address, as tests/engine/test_ray.py does), graded as by the local pool."""
import signal

from tests.engine.test_ray import LOOPBACK, RayNode, free_port, on_cluster

from .server import config_file, make_tokens, notebook, start


def task_scores(result: dict) -> dict:
    return {task["id"]: task["score"] for task in result["tasks"]}


@on_cluster
def test_the_service_grades_on_a_ray_cluster_as_locally(server, tmp_path):
    """Do a correct and a buggy notebook handed in to a service whose slots are a Ray head's
    get the same score per task as from the local service, and does SIGTERM leave no process?"""
    port = free_port()
    head = RayNode("--head", "--port", str(port), "--node-ip-address", LOOPBACK, "--include-dashboard", "false",
                   "--no-monitor")
    try:
        tokens, token_of = make_tokens(tmp_path, ["r1", "r2"])
        on_ray = start(tmp_path, tokens, token_of, config_file(tmp_path, "ru"), jobs=1, name="ray",
                       extra=("--executor", "ray", "--address", f"{LOOPBACK}:{port}"))
        for ray_student, local_student, name in (("r1", "s31", "correct"), ("r2", "s32", "buggy")):
            on_cluster_id = on_ray.submit(ray_student, notebook(name)).json()["id"]
            local_id = server.submit(local_student, notebook(name)).json()["id"]
            assert task_scores(on_ray.wait_done(ray_student, on_cluster_id)["result"]) == \
                   task_scores(server.wait_done(local_student, local_id)["result"]), name
        assert on_ray.stop(signal.SIGTERM) == -signal.SIGTERM
        assert on_ray.left() == {}
    finally:
        assert head.kill() == {}, "processes of the head node outlived it"
