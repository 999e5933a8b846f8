# Build options. The backends are AUTO by default: used when their dependency is found, skipped
# with a message naming the package otherwise. ON makes a missing dependency a configure error.
set(TESSEL_USE_LLVM AUTO CACHE STRING "LLVM 19 CPU backend: ON, OFF or AUTO (package llvm-19-dev)")
set_property(CACHE TESSEL_USE_LLVM PROPERTY STRINGS ON OFF AUTO)
set(TESSEL_USE_CUDA AUTO CACHE STRING "CUDA backend through NVRTC: ON, OFF or AUTO (CUDA toolkit)")
set_property(CACHE TESSEL_USE_CUDA PROPERTY STRINGS ON OFF AUTO)
option(TESSEL_BUILD_TESTS "Build the C++ tests (package libgtest-dev)" ON)
option(TESSEL_BUILD_PYTHON "Build the Python extension (pybind11)" OFF)
option(TESSEL_WERROR "Treat warnings as errors" OFF)
# The test executables' own sources (tests/<kind>/*.cpp) are glue: they build DAGs and schedules
# and call the library, whose code runs at the build type's optimisation either way. At -O0 they
# compile in about half the time (GoogleTest's and nlohmann_json's templates dominate), which is
# most of the CI run's build time; their run time barely moves. ON compiles them as the library.
option(TESSEL_OPTIMIZE_TESTS "Compile the tests' own sources at the build type's -O (OFF: -O0)" OFF)
# Unity builds (CMake's UNITY_BUILD): the library, tessel-tune, the Python extension and the test
# folders compile a few files to a translation unit. Most of a file's compile time is parsing the
# same headers and instantiating the same templates (nlohmann_json, CLI11, pybind11, GoogleTest):
# a third to a half of the build's CPU time on the CI machines (docs/perf/ci-time.md). OFF
# compiles file by file: an edit then recompiles one file instead of its batch.
option(TESSEL_UNITY_BUILD "Compile a few source files to a translation unit" ON)
# tessel_unity_build(<target> <n> [ALONE <files>...]): <target>'s sources <n> to a translation
# unit. A file whose file-local names clash with another's (a helper of the same name in an
# anonymous namespace) is listed after ALONE and compiles on its own. Sources with their own
# COMPILE_OPTIONS or COMPILE_DEFINITIONS always compile alone (CMake).
function(tessel_unity_build target batch)
  cmake_parse_arguments(ARG "" "" "ALONE" ${ARGN})
  if(TESSEL_UNITY_BUILD)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${batch})
    if(ARG_ALONE)
      set_source_files_properties(${ARG_ALONE} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
    endif()
  endif()
endfunction()
set(TESSEL_SANITIZE "" CACHE STRING "Sanitizers, e.g. 'address,undefined' or 'thread'")

add_library(tessel_warnings INTERFACE)
target_compile_options(tessel_warnings INTERFACE -Wall -Wextra $<$<BOOL:${TESSEL_WERROR}>:-Werror>)
# GCC 12 at -O2/-O3 reports a false -Wrestrict inside libstdc++ for `"literal" + std::string`
# (GCC bug 105651, fixed in GCC 13).
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(tessel_warnings INTERFACE -Wno-restrict)
endif()

# UBSan's checks left out when ASan runs beside it: null and object-size (ASan reports the same
# accesses), and alignment, vptr and pointer-overflow, which instrument every access, member call
# and pointer step: together they were 40 % of the asan build's compile time (docs/perf/ci-time.md).
# Empty restores all of -fsanitize=undefined.
set(TESSEL_UBSAN_EXCLUDE "null,alignment,object-size,vptr,pointer-overflow" CACHE STRING
    "UBSan checks left out of a TESSEL_SANITIZE=address,undefined build (empty: none)")
if(TESSEL_SANITIZE)
  add_compile_options(-fsanitize=${TESSEL_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${TESSEL_SANITIZE})
  if(TESSEL_SANITIZE MATCHES "address" AND TESSEL_SANITIZE MATCHES "undefined"
     AND TESSEL_UBSAN_EXCLUDE)
    add_compile_options(-fno-sanitize=${TESSEL_UBSAN_EXCLUDE})
  endif()
  # GCC's -Wmaybe-uninitialized is unreliable under the sanitizers' instrumentation (the GCC manual
  # says so for -fsanitize=address); GCC 12 reports LLVM 19's own headers (std::optional<ConstantRange>
  # inside IRBuilder::CreateGlobalStringPtr) in every sanitized build. The unsanitized builds keep it.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(tessel_warnings INTERFACE -Wno-maybe-uninitialized)
  endif()
endif()
set(TESSEL_USE_XGBOOST AUTO CACHE STRING
    "XGBoost for the auto-scheduler's cost model: ON, OFF or AUTO (package libxgboost-dev)")
set_property(CACHE TESSEL_USE_XGBOOST PROPERTY STRINGS ON OFF AUTO)
