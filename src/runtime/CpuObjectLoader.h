// The built-in loader of "cpu-object" payloads: a relocatable ELF object file for this machine,
// as the LLVM backend emits it, linked into memory by the runtime itself, without LLVM
// (docs/design.md, decision 4: measurement workers and GPU hosts link only libtessel_runtime).
//
// What it accepts: an x86-64 ELF64 little-endian ET_REL object whose allocated sections are code,
// read-only data, data and zero-filled data (.eh_frame is not loaded: no exception crosses a
// kernel), with the relocations position-independent code uses (64-bit absolute, 32-bit and 64-bit
// PC-relative, PLT calls, GOT loads). Undefined symbols resolve to tessel's runtime entry points
// (tessel_parallel_for, workspace memory, error reports), then to the process (libc, libm), then to
// libmvec. External calls go through 14-byte stubs and GOT slots placed next to the code, so the
// object may be mapped anywhere. Anything else (TLS, constructors, another machine, a truncated or
// inconsistent file) is a RuntimeError, never a crash of the loading process.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "tessel/runtime/Module.h"

namespace tessel::internal {

/// The payload format name of relocatable CPU object code.
inline constexpr const char* kCpuObjectFormat = "cpu-object";

/// True when this machine's objects can be loaded (x86-64 Linux).
bool cpu_object_loader_supported();

/// Links `object` into executable memory (see the file comment); RuntimeError when it cannot.
std::shared_ptr<const LoadedCode> load_cpu_object(const std::vector<uint8_t>& object);

/// load_cpu_object as a PayloadLoader (registered built in for kCpuObjectFormat).
PayloadLoader cpu_object_payload_loader();

}  // namespace tessel::internal
