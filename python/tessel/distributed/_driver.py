"""The driver (``python -m tessel.distributed serve``): the daemon's frames in, Ray actors out.

Setup connects to the cluster and starts the actors of the targets to warm; each Run request is
split into one request per candidate, handed to idle actors of nodes whose target resource
matches, and answered once every candidate has a result, in the request's order. A candidate
whose actor dies (its node was lost) goes back to the queue and is measured elsewhere, at most
``max_attempts`` times in all, then recorded as a worker_error: never twice, never lost. Nodes
are looked at again every second while a request runs, so a node that joins gets work.
"""
import collections
import json
import os
import sys
import time

from . import PROTOCOL_VERSION, target_resource
from ._frames import EXIT, REPLY, RUN, SETUP, read_frame, write_frame

NODE_POLL_SECONDS = 1.0
# A file the driver appends a line to for each candidate measured (its node and the wall-clock
# window its actor held the device for), when set: for tests.
TRACE_ENV = "TESSEL_DISTRIBUTED_TRACE"
WARM_SECONDS = 60.0


def say(text):
    print("tessel.distributed: " + text, file=sys.stderr, flush=True)


def check_hello(hello, daemon_version):
    """Why an actor's node is refused ("" when it is not): another tessel or protocol."""
    if hello.get("protocol") != PROTOCOL_VERSION:
        return "speaks protocol %s, this daemon %s" % (hello.get("protocol"), PROTOCOL_VERSION)
    if hello.get("tessel_version") != daemon_version:
        return "runs tessel %s, this daemon tessel %s: install the same version on every node" % (
            hello.get("tessel_version"),
            daemon_version,
        )
    return ""


def lost_result(message):
    return json.dumps(
        {
            "error": "worker_error",
            "error_message": message,
            "costs": [],
            "build_seconds": 0.0,
            "run_seconds": 0.0,
            "timestamp": time.time(),
        }
    )


class Actor:
    def __init__(self, handle, node_id, resource):
        self.handle = handle
        self.node_id = node_id
        self.resource = resource
        self.hello = handle.hello.remote()  # the ObjectRef until it answers, then None
        self.ready = False
        self.busy = False


class Node:
    def __init__(self, info):
        self.node_id = info["NodeID"]
        self.address = info.get("NodeManagerAddress", "?")
        self.alive = True
        self.refused = ""
        self.measured = 0
        self.actors = []

    def status(self):
        state = "refused" if self.refused else ("alive" if self.alive else "dead")
        if self.alive and not self.refused and not any(a.ready for a in self.actors):
            state = "starting" if self.actors else "idle"
        return {
            "node_id": self.node_id,
            "address": self.address,
            "state": state,
            "actors": len([a for a in self.actors if a.ready]),
            "measured": self.measured,
            "message": self.refused,
        }


class Driver:
    def __init__(self, ray_module, address):
        self.ray = ray_module
        self.address = address
        self.version = None
        self.max_attempts = 3
        self.nodes = {}  # node id -> Node
        self.resources = set()  # the target resources actors are kept for
        self.last_poll = 0.0
        self.requests = 0
        self.candidates = 0
        self.seconds = 0.0  # from receiving requests to their replies: the farm's time
        import ray.exceptions as rex

        self.death = (
            rex.RayActorError,
            getattr(rex, "ActorDiedError", rex.RayActorError),
            getattr(rex, "ActorUnavailableError", rex.RayActorError),
            rex.WorkerCrashedError,
            rex.ObjectLostError,
            rex.NodeDiedError,
            rex.OwnerDiedError,
        )
        from ._actor import MeasureActor

        self.actor_class = ray_module.remote(max_restarts=0, max_task_retries=0)(MeasureActor)

    # --- nodes and actors -------------------------------------------------------------------
    def poll_nodes(self, force=False):
        now = time.monotonic()
        if not force and now - self.last_poll < NODE_POLL_SECONDS:
            return
        self.last_poll = now
        for info in self.ray.nodes():
            node = self.nodes.get(info["NodeID"])
            if node is None:
                node = self.nodes[info["NodeID"]] = Node(info)
            if not info.get("Alive", False):
                if node.alive:
                    say("node %s is gone" % node.address)
                node.alive = False
                node.actors = []
                continue
            if node.refused:
                continue
            resources = info.get("Resources", {})
            for res in self.resources:
                units = int(resources.get(res, 0))
                have = len([a for a in node.actors if a.resource == res])
                for _ in range(have, units):
                    node.actors.append(self.start_actor(node, res, resources))

    def start_actor(self, node, res, resources):
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        where = NodeAffinitySchedulingStrategy(node_id=node.node_id, soft=False)
        gpus = int(resources.get("GPU", 0))
        options = {"scheduling_strategy": where, "resources": {res: 1}}
        whole_node = False
        if gpus > 0 and ":cuda" in res:
            # One GPU each (Ray sets CUDA_VISIBLE_DEVICES: the actor's device 0 is its own),
            # and a share of the node's CPUs for the builds (none on a head started without).
            options.update(num_gpus=1, num_cpus=int(resources.get("CPU", 0)) // gpus)
        else:  # a CPU node's actor holds all of its CPUs, and pins its worker to them
            options.update(num_cpus=max(1, int(resources.get("CPU", 1))))
            whole_node = True
        handle = self.actor_class.options(**options).remote(whole_node)
        return Actor(handle, node.node_id, res)

    def actors(self):
        for node in self.nodes.values():
            for actor in node.actors:
                yield node, actor

    def check_hellos(self, timeout=0.0):
        pending = [a.hello for _, a in self.actors() if a.hello is not None]
        if not pending:
            return
        done, _ = self.ray.wait(pending, num_returns=len(pending), timeout=timeout)
        done = set(done)
        for node, actor in list(self.actors()):
            if actor.hello is None or actor.hello not in done:
                continue
            ref, actor.hello = actor.hello, None
            try:
                hello = self.ray.get(ref)
            except self.death:
                node.actors.remove(actor)
                continue
            except Exception as e:  # the actor could not start there: tessel missing or broken
                node.refused = "its actor failed to start: %s" % str(e).splitlines()[-1]
                say("node %s refused: %s" % (node.address, node.refused))
                self.drop_node_actors(node)
                continue
            why = check_hello(hello, self.version)
            if why:
                node.refused = why
                say("node %s refused: %s" % (node.address, why))
                self.drop_node_actors(node)
                continue
            actor.ready = True

    def drop_node_actors(self, node):
        for actor in node.actors:
            self.ray.kill(actor.handle)
        node.actors = []

    def status(self):
        return [n.status() for n in self.nodes.values()]

    def trace(self, node, out):
        path = os.environ.get(TRACE_ENV)
        if not path or "window" not in out:
            return
        with open(path, "a") as f:
            f.write(json.dumps({"node_id": node.node_id, "window": out["window"]}) + "\n")

    # --- frames ------------------------------------------------------------------------------
    def setup(self, header):
        self.version = header["tessel_version"]
        self.max_attempts = max(1, int(header.get("max_attempts", 3)))
        for t in header.get("warm_targets", []):
            self.resources.add(target_resource(t))
        self.poll_nodes(force=True)
        # The warm actors start now, before the first request: up to a minute for them to
        # answer (importing tessel, starting a worker), so the first round does not wait.
        end = time.monotonic() + WARM_SECONDS
        while time.monotonic() < end and any(a.hello is not None for _, a in self.actors()):
            self.check_hellos(timeout=0.2)
        return {"status": "ok", "nodes": self.status()}

    def measure(self, request):
        t0 = time.monotonic()
        reply = self._measure(request, target_resource(request["task"]["target"]))
        self.requests += 1
        self.candidates += len(request["candidates"])
        self.seconds += time.monotonic() - t0
        return reply

    def _measure(self, request, res):
        self.resources.add(res)
        candidates = request["candidates"]
        n = len(candidates)
        results = [None] * n
        attempts = [0] * n
        queue = collections.deque(range(n))
        inflight = {}  # ObjectRef -> (candidate, node, actor)
        waiting_said = False
        while queue or inflight:
            self.poll_nodes()
            self.check_hellos()
            for node, actor in self.actors():
                if not queue:
                    break
                if actor.resource != res or not actor.ready or actor.busy:
                    continue
                i = queue.popleft()
                one = dict(request, candidates=[candidates[i]])
                ref = actor.handle.measure.remote(json.dumps(one))
                actor.busy = True
                inflight[ref] = (i, node, actor)
            if not inflight:
                if not waiting_said:
                    say("waiting for a node offering %s (none is ready)" % res)
                    waiting_said = True
                self.check_hellos(timeout=NODE_POLL_SECONDS)
                continue
            done, _ = self.ray.wait(list(inflight), num_returns=1, timeout=NODE_POLL_SECONDS)
            for ref in done:
                i, node, actor = inflight.pop(ref)
                actor.busy = False
                try:
                    out = self.ray.get(ref)
                    results[i] = out["results"][0]
                    node.measured += 1
                    self.trace(node, out)
                except self.death:
                    if actor in node.actors:
                        node.actors.remove(actor)
                    attempts[i] += 1
                    why = "its node %s died during the measurement" % node.address
                    say("candidate %d: %s (attempt %d of %d)" % (i, why, attempts[i], self.max_attempts))
                    if attempts[i] >= self.max_attempts:
                        results[i] = lost_result("%s, %d times" % (why, attempts[i]))
                    else:
                        queue.appendleft(i)
                    self.poll_nodes(force=True)
                except Exception as e:  # the actor's measurement raised: the task itself
                    return {"status": "error", "message": str(e).splitlines()[-1]}
        return {"status": "ok", "results": [json.loads(r) for r in results], "nodes": self.status()}


def unreachable(address, timeout=5.0):
    """Why the head's GCS port cannot be reached ("" when it can, or for "auto"): ray.init would
    otherwise retry for minutes before it gives up."""
    import socket

    if address in ("auto", "") or ":" not in address or "://" in address:
        return ""
    host, port = address.rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except (OSError, ValueError) as e:
        return "no Ray head answers at %s (%s)" % (address, e)
    return ""


def serve(fd, address):
    """Answers the daemon's frames on ``fd`` until Exit or until the daemon is gone."""
    try:
        import ray
    except ImportError:
        frame = read_frame(fd)
        if frame is not None:
            write_frame(fd, REPLY, {"status": "cluster_lost", "message": "Ray is not installed "
                                    "for %s (pip install ray)" % sys.executable})
        return 1
    driver = None
    while True:
        frame = read_frame(fd)
        if frame is None or frame[0] == EXIT:
            break
        kind, header, _ = frame
        try:
            if kind == SETUP:
                if driver is None:
                    why = unreachable(address)
                    if why:
                        raise ConnectionError(why)
                    ray.init(address=address, logging_level="ERROR", log_to_driver=False)
                    driver = Driver(ray, address)
                reply = driver.setup(header)
            elif kind == RUN and driver is not None:
                reply = driver.measure(header)
            else:
                reply = {"status": "error", "message": "unexpected frame %d" % kind}
        except ConnectionError as e:
            reply = {"status": "cluster_lost", "message": str(e)}
        except Exception as e:  # noqa: BLE001 — any failure of Ray's is the cluster's loss
            reply = {"status": "cluster_lost", "message": "%s: %s" % (type(e).__name__, e)}
        write_frame(fd, REPLY, reply)
        if reply["status"] == "cluster_lost":
            break
    if driver is not None:
        # The closing line the operator (and the tests) read: where the candidates went.
        say("measurement: %d candidates in %.3f s, %d requests"
            % (driver.candidates, driver.seconds, driver.requests))
        say("measured per node: " + json.dumps({n.node_id: n.measured for n in driver.nodes.values()}))
        ray.shutdown()
    return 0
