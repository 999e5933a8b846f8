"""tessel.frontend: models from files (docs/models.md).

    import tessel as ts
    from tessel.frontend import from_onnx
    graph = from_onnx("resnet50.onnx", shapes={"input": (1, 3, 224, 224)})
    m = ts.compile(graph, "llvm")
    y = m(x)

The importer maps each ONNX node onto `ts.op` calls (frontend glue, as TVM's relay.frontend):
the operators, their schedules and the tuning records are the C++ library's.
"""
from ._onnx import from_onnx  # noqa: F401
from .compiled import CompiledModel, compile  # noqa: F401
from .graph import Graph, ModelError, Node, Value  # noqa: F401
