// Ahead-of-time export: a built CPU module as an object file or a shared library, with a C header
// declaring its kernels, for programs that call them with raw pointers.
//
//   Module m = build(s, {A, B, C}, "llvm -mcpu=skylake-avx512", "matmul");
//   export_object(m, "matmul.o");        // or export_library(m, "libmatmul.so")
//   export_header(m, "matmul.h");
//
// The code is generated for the target the module was built for (build()'s target string; the
// default "llvm" means the features of the machine that builds). Exported kernels call a few
// functions of tessel's runtime library (parallel loops, workspace memory, error reports), which
// a consumer links as `tessel::runtime` — that library links no LLVM — plus libmvec and libm.
// The header (see c_header) documents each kernel's arguments and the calling contract.
#pragma once

#include <string>

#include "tessel/runtime/Module.h"

namespace tessel {

/// Writes the module's kernels as a relocatable, position-independent ELF object file. Throws
/// CompileError if the module is not a CPU module built by this tessel, or a kernel's name is
/// not a C identifier (or is `main`); RuntimeError if the file cannot be written.
void export_object(const Module& m, const std::string& path);

/// Writes the module's kernels as a shared library: the object of export_object linked with
/// the system C compiler (`$CC`, default `cc`) and `-lmvec -lm`. The tessel_* runtime symbols
/// stay undefined and are resolved from the process, which links tessel::runtime. Throws as
/// export_object, and CompileError when the compiler fails (with its exit status).
void export_library(const Module& m, const std::string& path);

/// A C header declaring every kernel of `m`: its entry point
/// `int32_t name(void* const* args, const int64_t* shape_vars)` and a typed convenience
/// function `name_call(const float* A, ..., float* C, int64_t n)` taking one pointer per argument
/// (const for inputs) and one int64_t per symbolic extent, with comments giving shapes, access and
/// the contract (contiguous row-major, aligned to the element size, non-overlapping unless
/// in-place; 0 on success).
std::string c_header(const Module& m);

/// Writes c_header(m) to `path`; RuntimeError if the file cannot be written.
void export_header(const Module& m, const std::string& path);

}  // namespace tessel
