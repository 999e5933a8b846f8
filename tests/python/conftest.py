# pytest setup: finds the tessel package of a CMake build when it is not installed
# (scripts/test.sh sets PYTHONPATH; this helps `pytest tests/python` after a plain CMake build).
import os
import sys

_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
try:
    import tessel  # noqa: F401
except ImportError:
    build = os.environ.get("TESSEL_BUILD_DIR", os.path.join(_root, "build", "release"))
    sys.path.insert(0, os.path.join(build, "python"))
    import tessel  # noqa: F401

REPO_ROOT = _root
