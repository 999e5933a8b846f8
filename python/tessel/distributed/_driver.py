"""The driver (``python -m tessel.distributed serve``): the daemon's frames in, Ray actors out.

Setup connects to the cluster and starts the actors of the targets to warm; each Run request is
split into one request per candidate, handed to idle actors of nodes whose target resource
matches, and answered once every candidate has a result, in the request's order. Built frames
carry modules the daemon built for the last Run: an actor takes a built candidate first, and
with none built, as the Run's "build" says: "auto" its last candidate (built on the node, while
the daemon builds from the front), "nodes" its next, "daemon" none (it waits). A candidate
whose actor dies (its node was lost) goes back to the queue and is measured elsewhere, at most
``max_attempts`` times in all, then recorded as a worker_error: never twice, never lost. Nodes
are looked at again every second while a request runs, so a node that joins gets work.
"""
import collections
import json
import os
import queue
import sys
import threading
import time

from . import PROTOCOL_VERSION, target_resource
from ._frames import BUILT, EXIT, REPLY, RUN, SETUP, read_frame, write_frame

NODE_POLL_SECONDS = 1.0
# How long the driver waits for a measurement before it looks at the daemon's frames again.
STEP_SECONDS = 0.02
# A file the driver appends a line to for each candidate measured (its node, the wall-clock
# window its actor held the device for, and whether the daemon built it), when set: for tests.
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
        self.seconds = 0.0  # while some request awaits its reply: the farm's time
        self.runs = collections.deque()  # Run, in the order their replies are due
        self.inflight = {}  # ObjectRef -> (run, candidate, node, actor, whether it came built)
        self.busy_since = 0.0
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

    def trace(self, node, out, built):
        path = os.environ.get(TRACE_ENV)
        if not path or "window" not in out:
            return
        with open(path, "a") as f:
            f.write(json.dumps({"node_id": node.node_id, "window": out["window"],
                                "built": built}) + "\n")

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

    # --- runs: requests being measured ---------------------------------------------------------
    def add_run(self, request):
        """A Run frame: its candidates join the work, in order; answered by ``step``."""
        mode = request.pop("build", "nodes")
        if mode not in ("auto", "daemon", "nodes"):
            raise ValueError("unknown build mode %r" % mode)
        if not self.runs:
            self.busy_since = time.monotonic()
        run = Run(request, target_resource(request["task"]["target"]), mode)
        self.resources.add(run.res)
        self.runs.append(run)
        return run

    def add_built(self, header):
        """A Built frame: modules the daemon built for the last Run (late ones are dropped)."""
        if self.runs and self.runs[-1].left > 0:
            for i, built in header.get("built", {}).items():
                self.runs[-1].built[int(i)] = built

    def busy(self):
        return bool(self.runs)

    def dispatch(self):
        """Idle actors take candidates: built ones first, in order; with nothing built, "auto"
        takes the run's last candidate (built there), "nodes" its next, "daemon" none."""
        for run in self.runs:
            if not run.todo:
                continue
            for node, actor in self.actors():
                if not run.todo:
                    break
                if actor.resource != run.res or not actor.ready or actor.busy:
                    continue
                i = run.take()
                if i is None:
                    break
                one = dict(run.request, candidates=[run.candidate(i)])
                ref = actor.handle.measure.remote(json.dumps(one))
                actor.busy = True
                self.inflight[ref] = (run, i, node, actor, run.is_built(i))

    def step(self, reply, timeout=STEP_SECONDS):
        """Dispatches, waits up to ``timeout`` for a measurement, and answers every run at the
        head of the queue that is complete, with ``reply(dict)``."""
        self.poll_nodes()
        self.check_hellos()
        self.dispatch()
        if not self.inflight:
            run = next((r for r in self.runs if r.todo), None)
            if run is not None and not run.waiting_said and not any(
                    a.ready and a.resource == run.res for _, a in self.actors()):
                say("waiting for a node offering %s (none is ready)" % run.res)
                run.waiting_said = True
            self.check_hellos(timeout=timeout)
        else:
            done, _ = self.ray.wait(list(self.inflight), num_returns=1, timeout=timeout)
            for ref in done:
                self.finish(ref)
        while self.runs and self.runs[0].answered():
            run = self.runs.popleft()
            if run.error:
                reply({"status": "error", "message": run.error})
            else:
                self.requests += 1
                self.candidates += len(run.results)
                reply({"status": "ok", "results": [json.loads(r) for r in run.results],
                       "nodes": self.status()})
            if not self.runs:
                self.seconds += time.monotonic() - self.busy_since

    def finish(self, ref):
        run, i, node, actor, built = self.inflight.pop(ref)
        actor.busy = False
        try:
            out = self.ray.get(ref)
            run.done(i, out["results"][0])
            node.measured += 1
            self.trace(node, out, built)
        except self.death:
            if actor in node.actors:
                node.actors.remove(actor)
            run.attempts[i] += 1
            why = "its node %s died during the measurement" % node.address
            say("candidate %d: %s (attempt %d of %d)"
                % (i, why, run.attempts[i], self.max_attempts))
            if run.attempts[i] >= self.max_attempts:
                run.done(i, lost_result("%s, %d times" % (why, run.attempts[i])))
            else:
                run.requeue(i)
            self.poll_nodes(force=True)
        except Exception as e:  # the actor's measurement raised: the task itself
            run.fail(str(e).splitlines()[-1])


class Run:
    """One Run frame's candidates: those not yet handed out (``todo``, in order), the modules
    the daemon built for them, and their results."""

    def __init__(self, request, res, mode):
        self.request = request
        self.res = res
        self.mode = mode
        n = len(request["candidates"])
        self.results = [None] * n
        self.attempts = [0] * n
        self.built = {}  # candidate -> its "built" object from a Built frame
        self.todo = collections.deque(range(n))
        self.left = n
        self.inflight = 0
        self.error = ""
        self.waiting_said = False

    def is_built(self, i):
        return i in self.built or "built" in self.request["candidates"][i]

    def take(self):
        for k, i in enumerate(self.todo):
            if self.is_built(i):
                del self.todo[k]
                break
        else:
            if self.mode == "daemon":
                return None
            i = self.todo.pop() if self.mode == "auto" else self.todo.popleft()
        self.inflight += 1
        return i

    def candidate(self, i):
        c = self.request["candidates"][i]
        return dict(c, built=self.built[i]) if i in self.built else c

    def done(self, i, result):
        self.inflight -= 1
        if self.results[i] is None:
            self.results[i] = result
            self.left -= 1

    def requeue(self, i):
        """Candidate i's actor died: it is measured again first (unless the run has failed)."""
        self.inflight -= 1
        if not self.error:
            self.todo.appendleft(i)

    def fail(self, message):
        self.inflight -= 1
        self.error = self.error or message
        self.todo.clear()

    def answered(self):
        return self.left == 0 or (self.error and self.inflight == 0)


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
    # The daemon's frames are read on a thread of their own, so that Built frames reach the
    # measurements' loop while it waits on the actors, and a Run can follow a Run unanswered.
    frames = queue.Queue()

    def read_all():
        while True:
            frame = read_frame(fd)
            frames.put(frame)
            if frame is None or frame[0] == EXIT:
                return

    threading.Thread(target=read_all, daemon=True).start()
    driver = None
    ended = False
    while not ended:
        busy = driver is not None and driver.busy()
        try:
            if not busy:
                frame = frames.get()
            elif driver.inflight:  # the actors' results are waited for in step()
                frame = frames.get_nowait()
            else:  # nothing measuring: a Built frame, or a node, is what comes next
                frame = frames.get(timeout=STEP_SECONDS)
        except queue.Empty:
            frame = ()
        reply = None
        try:
            if frame is None or (frame and frame[0] == EXIT):
                ended = True
            elif frame:
                kind, header, _ = frame
                if kind == SETUP:
                    if driver is None:
                        why = unreachable(address)
                        if why:
                            raise ConnectionError(why)
                        ray.init(address=address, logging_level="ERROR", log_to_driver=False)
                        driver = Driver(ray, address)
                    reply = driver.setup(header)
                elif kind == RUN and driver is not None:
                    driver.add_run(header)
                elif kind == BUILT:
                    if driver is not None:
                        driver.add_built(header)
                else:
                    reply = {"status": "error", "message": "unexpected frame %d" % kind}
            elif busy:
                driver.step(lambda r: write_frame(fd, REPLY, r))
        except ConnectionError as e:
            reply = {"status": "cluster_lost", "message": str(e)}
        except Exception as e:  # noqa: BLE001 — any failure of Ray's is the cluster's loss
            reply = {"status": "cluster_lost", "message": "%s: %s" % (type(e).__name__, e)}
        if reply is not None:
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
