// LD_PRELOAD library for benchmarks/experiments/cublas_after_tune.py --stack: prints a backtrace
// (library + offset, symbol where exported) at each of the process's first 40 C++ throws, by
// wrapping libgcc's _Unwind_RaiseException, which every throw goes through, also in libraries
// that link libstdc++ statically (a __cxa_throw wrapper does not see those).
#include <dlfcn.h>
#include <execinfo.h>

#include <cstdio>

extern "C" int _Unwind_RaiseException(void* exception) {
    using Raise = int (*)(void*);
    static Raise real = reinterpret_cast<Raise>(dlsym(RTLD_NEXT, "_Unwind_RaiseException"));
    static int throws = 0;
    if (++throws <= 40) {
        void* frames[40];
        int n = backtrace(frames, 40);
        std::fprintf(stderr, "=== throw %d\n", throws);
        for (int i = 1; i < n; ++i) {
            Dl_info info{};
            if (!dladdr(frames[i], &info) || !info.dli_fname) continue;
            std::fprintf(stderr, "  #%d %s+0x%lx %s\n", i, info.dli_fname,
                         static_cast<unsigned long>(static_cast<char*>(frames[i]) -
                                                    static_cast<char*>(info.dli_fbase)),
                         info.dli_sname ? info.dli_sname : "");
        }
    }
    return real(exception);
}
