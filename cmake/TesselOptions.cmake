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
set(TESSEL_SANITIZE "" CACHE STRING "Sanitizers, e.g. 'address,undefined' or 'thread'")

add_library(tessel_warnings INTERFACE)
target_compile_options(tessel_warnings INTERFACE -Wall -Wextra $<$<BOOL:${TESSEL_WERROR}>:-Werror>)
# GCC 12 at -O2/-O3 reports a false -Wrestrict inside libstdc++ for `"literal" + std::string`
# (GCC bug 105651, fixed in GCC 13).
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(tessel_warnings INTERFACE -Wno-restrict)
endif()

if(TESSEL_SANITIZE)
  add_compile_options(-fsanitize=${TESSEL_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${TESSEL_SANITIZE})
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
