// Ahead-of-time export (codegen/Export.h): the module's object code payload is written as it is
// (an "llvm-ir" payload is compiled to an object file for the target recorded in its functions'
// attributes); a shared library is that object linked by the system compiler; the header is written
// from the kernel signatures.
#include "tessel/codegen/Export.h"

#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "codegen/llvm/LLVMJIT.h"
#include "runtime/CpuObjectLoader.h"
#include "tessel/Error.h"

extern char** environ;

namespace tessel {

namespace {

bool is_c_identifier(const std::string& s) {
    if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
    for (char c : s) {
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
    }
    return true;
}

void check_exportable(const Module& m) {
    if (m.payload_format() != "llvm-ir" && m.payload_format() != internal::kCpuObjectFormat) {
        TESSEL_THROW(CompileError) << "export: the module's payload is '" << m.payload_format()
                                   << "'; only CPU modules built with target 'llvm' export";
    }
    for (const KernelSignature& sig : m.signatures()) {
        if (!is_c_identifier(sig.name) || sig.name == "main") {
            TESSEL_THROW(CompileError)
                << "export: kernel '" << sig.name
                << "' needs a C identifier other than 'main' as its name (build(s, args, "
                   "target, \"my_kernel\"))";
        }
    }
}

// The module's object code: its payload as it is, or its IR (a module saved by a tessel that
// JIT-compiled) compiled for the target its functions were generated for.
std::vector<char> compile_object(const Module& m) {
    check_exportable(m);
    const std::vector<uint8_t>& payload = m.payload();
    if (m.payload_format() == internal::kCpuObjectFormat)
        return std::vector<char>(payload.begin(), payload.end());
    internal::initialize_llvm();
    llvm::LLVMContext context;
    llvm::SMDiagnostic diag;
    std::unique_ptr<llvm::MemoryBuffer> buffer = llvm::MemoryBuffer::getMemBufferCopy(
        llvm::StringRef(reinterpret_cast<const char*>(payload.data()), payload.size()), "payload");
    std::unique_ptr<llvm::Module> module = llvm::parseIR(buffer->getMemBufferRef(), diag, context);
    if (!module) TESSEL_THROW(CompileError) << "export: " << diag.getMessage().str();
    internal::LLVMTarget target{module->getTargetTriple(), "generic", ""};
    for (const llvm::Function& f : *module) {
        if (f.isDeclaration()) continue;
        target.cpu = f.getFnAttribute("target-cpu").getValueAsString().str();
        target.features = f.getFnAttribute("target-features").getValueAsString().str();
        break;
    }
    std::unique_ptr<llvm::TargetMachine> tm = internal::make_target_machine(target);
    module->setDataLayout(tm->createDataLayout());
    llvm::SmallVector<char, 0> object;
    llvm::raw_svector_ostream os(object);
    llvm::legacy::PassManager pm;
    if (tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile)) {
        TESSEL_THROW(CompileError) << "export: the target cannot emit object files";
    }
    pm.run(*module);
    return std::vector<char>(object.begin(), object.end());
}

void write_file(const std::string& path, const char* data, size_t size) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(data, static_cast<std::streamsize>(size));
    out.close();
    if (!out) TESSEL_THROW(RuntimeError) << "export: cannot write '" << path << "'";
}

// Runs `argv` (searched in PATH) and waits; its exit status, or -1 if it could not start.
int run_program(const std::vector<std::string>& argv) {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = 0;
    if (posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), environ) != 0) return -1;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

const char* c_type(const DataType& t) {
    switch (t.code) {
        case DataTypeCode::Float:
            return t.bits == 64 ? "double" : t.bits == 32 ? "float" : "uint16_t";
        case DataTypeCode::BFloat: return "uint16_t";
        case DataTypeCode::Bool: return "uint8_t";
        case DataTypeCode::Int:
            return t.bits == 8    ? "int8_t"
                   : t.bits == 16 ? "int16_t"
                   : t.bits == 32 ? "int32_t"
                                  : "int64_t";
        case DataTypeCode::UInt:
            return t.bits == 8    ? "uint8_t"
                   : t.bits == 16 ? "uint16_t"
                   : t.bits == 32 ? "uint32_t"
                                  : "uint64_t";
        default: break;
    }
    return "void";
}

std::string shape_text(const ArgSpec& a) {
    std::string s = "[";
    for (size_t i = 0; i < a.shape.size(); ++i) {
        if (i) s += ", ";
        s += a.shape[i].is_symbolic() ? a.shape[i].name : std::to_string(a.shape[i].value);
    }
    return s + "]";
}

const char* access_text(ArgAccess a) {
    return a == ArgAccess::Read ? "read" : a == ArgAccess::Write ? "written" : "read and written";
}

void declare_kernel(std::ostream& os, const KernelSignature& sig) {
    os << "/* Kernel '" << sig.name << "':\n";
    for (size_t i = 0; i < sig.args.size(); ++i) {
        const ArgSpec& a = sig.args[i];
        os << " *   args[" << i << "] " << a.name << ": " << a.dtype.str() << shape_text(a) << ", "
           << access_text(a.access) << (a.in_place ? ", in-place" : "") << "\n";
    }
    std::vector<std::string> shape_vars = sig.shape_vars();
    for (size_t i = 0; i < shape_vars.size(); ++i)
        os << " *   shape_vars[" << i << "] " << shape_vars[i] << "\n";
    os << " * Returns 0 on success, non-zero when a check inside the kernel failed. */\n"
       << "int32_t " << sig.name << "(void* const* args, const int64_t* shape_vars);\n"
       << "static inline int32_t " << sig.name << "_call(";
    for (size_t i = 0; i < sig.args.size(); ++i) {
        const ArgSpec& a = sig.args[i];
        std::string name = is_c_identifier(a.name) ? a.name : "arg" + std::to_string(i);
        os << (i ? ", " : "") << (a.is_written() ? "" : "const ") << c_type(a.dtype) << "* "
           << name;
    }
    for (const std::string& v : shape_vars) os << ", int64_t " << v;
    os << ") {\n    void* const args[] = {";
    for (size_t i = 0; i < sig.args.size(); ++i) {
        const ArgSpec& a = sig.args[i];
        std::string name = is_c_identifier(a.name) ? a.name : "arg" + std::to_string(i);
        os << (i ? ", " : "") << "(void*)" << name;
    }
    os << "};\n";
    if (shape_vars.empty()) {
        os << "    return " << sig.name << "(args, 0);\n}\n\n";
        return;
    }
    os << "    const int64_t shape_vars[] = {";
    for (size_t i = 0; i < shape_vars.size(); ++i) os << (i ? ", " : "") << shape_vars[i];
    os << "};\n    return " << sig.name << "(args, shape_vars);\n}\n\n";
}

}  // namespace

void export_object(const Module& m, const std::string& path) {
    std::vector<char> object = compile_object(m);
    write_file(path, object.data(), object.size());
}

void export_library(const Module& m, const std::string& path) {
    std::vector<char> object = compile_object(m);
    char dir_template[] = "/tmp/tessel-export-XXXXXX";
    const char* dir = mkdtemp(dir_template);
    if (!dir) TESSEL_THROW(RuntimeError) << "export: cannot create a temporary folder";
    std::string object_path = std::string(dir) + "/kernels.o";
    write_file(object_path, object.data(), object.size());
    const char* cc = std::getenv("CC");
    std::vector<std::string> argv = {cc && *cc ? cc : "cc", "-shared", "-o", path,
                                     object_path,           "-lmvec",  "-lm"};
    int status = run_program(argv);
    std::remove(object_path.c_str());
    rmdir(dir);
    if (status != 0) {
        TESSEL_THROW(CompileError)
            << "export: linking '" << path << "' with '" << argv[0] << "' failed ("
            << (status < 0 ? "could not run it" : "exit status " + std::to_string(status)) << ")";
    }
}

std::string c_header(const Module& m) {
    check_exportable(m);
    std::ostringstream os;
    os << "/* Generated by tessel. Kernels compiled ahead of time; link their object file or\n"
          " * shared library with tessel's runtime library (CMake: tessel::runtime), libmvec and\n"
          " * libm. Every pointer argument must point to contiguous row-major data aligned to its\n"
          " * element size; arguments must not overlap unless marked in-place. */\n"
          "#pragma once\n#include <stdint.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
    for (const KernelSignature& sig : m.signatures()) declare_kernel(os, sig);
    os << "#ifdef __cplusplus\n}\n#endif\n";
    return os.str();
}

void export_header(const Module& m, const std::string& path) {
    std::string text = c_header(m);
    write_file(path, text.data(), text.size());
}

}  // namespace tessel
