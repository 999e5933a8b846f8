// ts.auto_schedule's tuning jobs (auto_schedule/tuner/Job.h): the check a job written from Python
// (extract_tasks, python/tessel/_tasks.py) passes before it is saved.
#include "PyFeatures.h"
#include "tessel/auto_schedule/tuner/Job.h"

namespace tessel::python {

void init_job(py::module_& m) {
    py::module_ a = auto_schedule_module(m);
    a.def(
        "check_job",
        [](const std::string& text, const std::string& source) {
            return job_to_json(parse_job(text, source));
        },
        py::arg("text"), py::arg("source") = "job",
        "Checks a job's JSON as tessel-tune does (auto_schedule/tuner/Job.h) and returns it in "
        "full "
        "(every field, a network's layers as tasks); a TesselRuntimeError lists every problem.");
}

}  // namespace tessel::python
