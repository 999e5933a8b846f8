// A program linked with libtessel_runtime alone (no LLVM, no compiler): loads a module saved by
// Module::save(), runs its kernel on arguments read from files, and writes the outputs back.
// tests/codegen/saved_module_runtime_only_test.cpp drives it.
//
//   tessel_run_saved_module <module> <kernel> <arg0.bin> <arg1.bin> ...
// Each argument file holds the argument's bytes; written arguments are overwritten.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#include "tessel/runtime/Module.h"
#include "tessel/runtime/NDArray.h"

using namespace tessel;

namespace {

std::vector<uint8_t> read_file(const char* path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: tessel_run_saved_module <module> <kernel> <args...>\n");
        return 2;
    }
    try {
        Module m = Module::load(read_file(argv[1]));
        Kernel k = m.get(argv[2]);
        const KernelSignature& sig = k.signature();
        std::vector<NDArray> args;
        for (size_t i = 0; i < sig.args.size(); ++i) {
            std::vector<int64_t> shape;
            for (const Dim& d : sig.args[i].shape) shape.push_back(d.value);
            NDArray a = NDArray::empty(shape, sig.args[i].dtype);
            std::vector<uint8_t> bytes = read_file(argv[3 + i]);
            a.copy_from(bytes.data(), static_cast<int64_t>(bytes.size()));
            args.push_back(a);
        }
        k(args);
        for (size_t i = 0; i < sig.args.size(); ++i) {
            if (!sig.args[i].is_written()) continue;
            std::vector<uint8_t> bytes(static_cast<size_t>(args[i].nbytes()));
            args[i].copy_to(bytes.data(), args[i].nbytes());
            std::ofstream(argv[3 + i], std::ios::binary)
                .write(reinterpret_cast<const char*>(bytes.data()),
                       static_cast<std::streamsize>(bytes.size()));
        }
        std::printf("%s: ran kernel '%s' (payload %s)\n", argv[0], argv[2],
                    m.payload_format().c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tessel_run_saved_module: %s\n", e.what());
        return 1;
    }
    return 0;
}
