"""The measuring end: one actor per device of a node, alive as long as the driver's Ray job."""
import os
import socket
import time


class MeasureActor:
    """Owns a LocalMeasureRunner (its tessel-measure worker stays warm between candidates) and
    measures one candidate's request at a time: Ray runs an actor's calls one after another, so no
    two candidates are timed on its device at once, and no build runs on it while one is timed."""

    def __init__(self, whole_node=False):
        if whole_node:
            # A CPU node's actor holds all of the node's CPUs in Ray's count, which pins nothing:
            # it sets its own affinity (inherited by its tessel-measure worker) to every core.
            try:
                os.sched_setaffinity(0, range(os.cpu_count() or 1))
            except OSError:
                pass
        from .. import _tessel

        self._runner = _tessel.LocalMeasureRunner()

    def hello(self):
        """What the driver checks before it sends work: versions, and where the actor runs."""
        import ray

        from .. import __version__
        from . import PROTOCOL_VERSION

        return {
            "tessel_version": __version__,
            "protocol": PROTOCOL_VERSION,
            "node_id": ray.get_runtime_context().get_node_id(),
            "host": socket.gethostname(),
            "pid": os.getpid(),
        }

    def measure(self, request_json):
        """One MeasureRequest (JSON) in, the list of its results (JSON strings) out."""
        t0, start = time.monotonic(), time.time()
        results = self._runner.run_json(request_json)
        # The wall-clock window it held the device for (the driver's trace: tests check that
        # two jobs never time candidates on one device at once).
        return {"results": results, "seconds": time.monotonic() - t0, "window": [start, time.time()]}
