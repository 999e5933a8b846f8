"""tessel.target: ``tvm.target.Target`` (tessel's ``Target``: docs/target.md)."""
from ._tessel import Target  # noqa: F401
