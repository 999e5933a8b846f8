# Finds tessel's dependencies. Every message names the Debian package that provides what is missing;
# scripts/install-deps.sh installs them all.

# Resolves an AUTO/ON/OFF option: sets ${var}_ENABLED.
function(tessel_resolve_optional option found package)
  if(${option} STREQUAL "OFF")
    set(${option}_ENABLED OFF PARENT_SCOPE)
  elseif(${found})
    set(${option}_ENABLED ON PARENT_SCOPE)
  elseif(${option} STREQUAL "ON")
    message(FATAL_ERROR "${option}=ON but its dependency was not found: install ${package} "
                        "(scripts/install-deps.sh does), or configure with -D${option}=OFF")
  else()
    message(STATUS "${option}: ${package} not found, building without it (install ${package} to enable)")
    set(${option}_ENABLED OFF PARENT_SCOPE)
  endif()
endfunction()

if(NOT TESSEL_USE_LLVM STREQUAL "OFF")
  # LLVM's version file accepts only an exact major.minor ("19" asks for 19.0), so find it
  # without a version and check the major version ourselves.
  find_package(LLVM CONFIG QUIET PATHS /usr/lib/llvm-19/lib/cmake/llvm NO_DEFAULT_PATH)
  if(NOT LLVM_FOUND)
    find_package(LLVM CONFIG QUIET)
  endif()
  if(LLVM_FOUND AND NOT LLVM_VERSION_MAJOR EQUAL 19)
    message(STATUS "tessel: found LLVM ${LLVM_PACKAGE_VERSION}, but the backend needs LLVM 19")
    set(LLVM_FOUND OFF)
  endif()
endif()
tessel_resolve_optional(TESSEL_USE_LLVM LLVM_FOUND "llvm-19-dev")

if(NOT TESSEL_USE_CUDA STREQUAL "OFF")
  find_package(CUDAToolkit QUIET)
  include(TesselNVRTC)  # tessel::nvrtc: CUDA::nvrtc without the driver's stub
  if(CUDAToolkit_FOUND AND TARGET tessel::nvrtc)
    set(TESSEL_NVRTC_FOUND ON)
  endif()
endif()
tessel_resolve_optional(TESSEL_USE_CUDA TESSEL_NVRTC_FOUND "the CUDA toolkit (nvrtc)")

message(STATUS "tessel: LLVM backend ${TESSEL_USE_LLVM_ENABLED}, CUDA backend ${TESSEL_USE_CUDA_ENABLED}, "
               "tests ${TESSEL_BUILD_TESTS}, python ${TESSEL_BUILD_PYTHON}")

if(TESSEL_BUILD_TESTS)
  find_package(GTest QUIET)
  if(NOT GTest_FOUND)
    message(FATAL_ERROR "TESSEL_BUILD_TESTS=ON needs GoogleTest: install libgtest-dev "
                        "(scripts/install-deps.sh does), or configure with -DTESSEL_BUILD_TESTS=OFF")
  endif()
endif()

# Schedules and tuning records serialise to JSON.
find_package(nlohmann_json 3.10 QUIET)
if(NOT nlohmann_json_FOUND)
  message(FATAL_ERROR "tessel needs nlohmann_json: install nlohmann-json3-dev (scripts/install-deps.sh does)")
endif()

# tools/tessel-measure's command line.
find_package(CLI11 CONFIG QUIET)
if(NOT CLI11_FOUND)
  message(FATAL_ERROR "tessel needs CLI11: install libcli11-dev (scripts/install-deps.sh does)")
endif()

# The cost model's gradient boosting (auto_schedule/cost_model/CostModel.h): without it the cost
# model throws RuntimeError saying so, and everything else works.
if(NOT TESSEL_USE_XGBOOST STREQUAL "OFF")
  include(TesselXGBoost)
endif()
tessel_resolve_optional(TESSEL_USE_XGBOOST TESSEL_XGBOOST_FOUND "libxgboost-dev")
message(STATUS "tessel: XGBoost cost model ${TESSEL_USE_XGBOOST_ENABLED}")
