"""Loading a tutorial's schedules in the benchmarks, without torch (cuda_bench re-exports it for
the GPU benchmarks; a benchmark's no-GPU check mode imports it directly)."""
import importlib.util
import os

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def tutorial(name):
    """Imports tutorials/<name>.py as a module (its schedules; its main part does not run)."""
    path = os.path.join(REPO, "tutorials", name + ".py")
    spec = importlib.util.spec_from_file_location(name.replace("-", "_"), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
