"""Measurement on a Ray cluster (docs/distributed.md).

``tessel-tune run JOB --cluster HOST:6379`` starts ``python -m tessel.distributed serve``, the
driver of this package: it connects to the cluster as a Ray job, keeps long-lived actors on the
nodes whose target matches the task's (one per GPU, or one per CPU node holding all of its CPUs),
each measuring with a warm tessel-measure worker, and answers each measurement request of the
daemon with one result per candidate, in order. The daemon keeps the log.

A node offers its devices to tessel through a Ray custom resource named after its target
(``target_resource``); ``python -m tessel.distributed resources`` prints the node's, for
``ray start --resources``.
"""
import re as _re

#: The version of the daemon-driver-actor exchange; a node that speaks another one is refused.
PROTOCOL_VERSION = 1


def target_resource(target):
    """The Ray custom resource a node holding devices of ``target`` offers (one unit a device).

    Derived from the canonical target string, so that a task for ``sm_90`` never lands on an
    ``sm_80`` node, nor a task for 16 cores on a node of 8.
    """
    from .. import Target

    text = str(target if isinstance(target, Target) else Target(str(target)))
    return "tessel_target:" + _re.sub(r"[^A-Za-z0-9_.=:-]+", "_", text)


def node_resources(target=None):
    """The custom resources of this machine for ``ray start --resources`` (a dict).

    ``target``: the target its devices are measured for (default: the host's CPU, or with
    CUDA devices, CUDA's). A CUDA node offers one unit per device, a CPU node one.
    """
    from .. import Target, cuda_device_count

    if target is None:
        gpus = cuda_device_count()
        target = Target("cuda") if gpus > 0 else Target("llvm")
    t = target if isinstance(target, Target) else Target(str(target))
    units = max(1, cuda_device_count()) if t.is_gpu else 1
    return {target_resource(t): units}
