// The extension module `tessel._tessel`: every Py<Concept>.cpp registers its part here. The
// `tessel` package re-exports it (python/tessel/__init__.py).
#include "PyCommon.h"
#include "PyFeatures.h"
#include "tessel/driver/Build.h"

#ifndef TESSEL_VERSION
#define TESSEL_VERSION "0.0.0"
#endif

PYBIND11_MODULE(_tessel, m) {
    namespace py = pybind11;
    using namespace tessel::python;
    m.doc() = "tessel: a tensor-expression compiler (C++ core; see the `tessel` package)";
    m.attr("__version__") = TESSEL_VERSION;
    m.def(
        "targets",
        [] {
            std::vector<std::string> t;
            if (tessel::has_llvm_backend()) t.push_back("llvm");
            if (tessel::has_cuda_backend()) t.push_back("cuda");
            return t;
        },
        "The code generation targets this build of tessel supports (\"llvm\" with the LLVM "
        "backend, \"cuda\" with the CUDA backend's NVRTC; running CUDA kernels also needs a "
        "GPU: ts.cuda_available()).");
    init_error(m);
    init_device(m);
    init_expr(m);
    init_tensor(m);
    init_reducer(m);
    init_schedule(m);
    init_target(m);
    init_lower(m);
    init_build(m);
    init_ndarray(m);
    init_workload(m);
    init_search_task(m);
    init_op(m);
    init_measure(m);
    init_record(m);
    init_features(m);
    init_cost_model(m);
    init_search_space(m);
    init_tune(m);
    init_job(m);
}
