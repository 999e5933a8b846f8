"""tessel: a tensor-expression compiler (Python API).

The package is a thin layer over the C++ library (the ``_tessel`` extension): every name here is
a C++ function or class with Pythonic names and keyword arguments. See docs/python.md.

    import tessel as ts
    A = ts.placeholder((64, 32), name="A")
    B = ts.placeholder((32, 48), name="B")
    k = ts.reduce_axis((0, 32), name="k")
    C = ts.compute((64, 48), lambda i, j: ts.sum(A[i, k] * B[k, j], axis=k), name="C")
    s = ts.create_schedule(C)
    print(ts.lower(s, [A, B, C]))
    f = ts.build(s, [A, B, C], target="llvm")
"""
import atexit as _atexit

from . import _tessel
from ._typed_errors import wrap_extension as _wrap_extension

_wrap_extension(_tessel)  # typed errors at every entry point, before anything is re-exported

from ._tessel import (  # noqa: F401,E402  (the public API, re-exported)
    __version__,
    targets,
    # errors
    TesselError,
    DSLError,
    ScheduleError,
    CompileError,
    TesselRuntimeError,
    InternalError,
    # devices
    Device,
    cpu,
    cuda,
    device,
    cuda_available,
    cuda_unavailable_reason,
    cuda_device_count,
    cuda_device_info,
    cuda_synchronize,
    # expressions
    Expr,
    Var,
    var,
    const,
    cast,
    select,
    if_then_else,
    floordiv,
    floormod,
    truncdiv,
    truncmod,
    exp,
    exp2,
    log,
    log2,
    sqrt,
    rsqrt,
    tanh,
    sigmoid,
    erf,
    sin,
    cos,
    pow,
    abs,
    floor,
    ceil,
    round,
    trunc,
    round_tf32,
    isnan,
    fma,
    max_value,
    min_value,
    inf_value,
    # tensors
    IterVar,
    Operation,
    Tensor,
    placeholder,
    compute,
    reduce_axis,
    flop_count,
    # reductions
    Reducer,
    sum,
    prod,
    max,
    min,
    comm_reducer,
    argmax,
    argmin,
    # schedules
    Schedule,
    Stage,
    Iterator,
    ThreadAxis,
    thread_axis,
    create_schedule,
    tensor_intrins,
    schedule_from_json,
    dag_hash,
    # targets, lowering and building
    Target,
    LoweredFunc,
    lower,
    lower_pass_names,
    verify_schedule,
    Module,
    Function,
    TimingResult,
    build,
    load_module,
    # arrays
    NDArray,
    # DAGs as data, workloads
    TensorDAG,
    make_tensor_dag,
    dag_to_json,
    dag_from_json,
    register_workload,
    unregister_workload,
    workload_names,
    workload_params,
    make_workload,
    workload_key,
    parse_workload_key,
    # tuning tasks
    SearchTask,
    # measurement, records, apply-best
    Measurer,
    MeasureResult,
    default_measure_worker_path,
    TuningRecord,
    make_record,
    record_from_json,
    read_records,
    ScheduleCosts,
    RecordWriter,
    apply_history_best,
    RECORD_FORMAT_VERSION,
)


class TuningWarning(UserWarning):
    """A warning of apply_history_best: a record of another CPU model or GPU used, or none."""


from . import nd  # noqa: F401,E402
from . import op  # noqa: F401,E402
from . import auto_schedule  # noqa: F401,E402
from . import auto_scheduler  # noqa: F401,E402  (TVM's Ansor API: docs/tvm.md)
# TVM's module names for tensor-expression scripts (`import tessel as tvm; from tessel import te`):
# the same functions under TVM's spellings (docs/tvm.md).
from . import te, tir, target, testing, transform  # noqa: F401,E402

# A build abandoned by Ctrl-C finishes on its worker thread; let it end before the interpreter
# tears down (bounded, so a hung build cannot hang exit).
_atexit.register(_tessel._wait_for_abandoned_workers, 30.0)

# Models from files (docs/models.md): tessel.frontend.from_onnx and ts.compile(graph, target).
from . import frontend  # noqa: F401,E402
from .frontend.compiled import compile  # noqa: F401,E402
