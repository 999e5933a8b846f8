include(GoogleTest)

# tessel_add_test(<kind> [LIBRARY <target>] [UNITY <n>]): one GoogleTest executable per test
# folder (tests/<kind>/*.cpp), each TEST registered with ctest under the label <kind>. It links
# libtessel, or <target> instead (the runtime tests link tessel_runtime alone). Its sources compile
# at -O0 unless TESSEL_OPTIMIZE_TESTS is ON; the support libraries (tests/fuzz/support, tests/gpu:
# the fuzzers' generators and checkers, which run many cases) keep the build type's flags.
# UNITY <n> compiles the folder's files <n> to a translation unit (CMake's unity build): for
# folders of many small files, whose compile time is mostly the parsing of the same headers
# (docs/perf/ci-time.md). Files whose file-local names clash with another's are listed after
# ALONE and compile on their own.
function(tessel_add_test kind)
  cmake_parse_arguments(ARG "" "LIBRARY;UNITY" "ALONE" ${ARGN})
  if(NOT ARG_LIBRARY)
    set(ARG_LIBRARY tessel)
  endif()
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${kind}/*.cpp)
  if(NOT sources)
    return()
  endif()
  set(target tessel_test_${kind})
  add_executable(${target} ${sources})
  target_link_libraries(${target} PRIVATE ${ARG_LIBRARY} GTest::gtest GTest::gtest_main tessel_warnings)
  target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  # Sanitized builds: a test skips what a sanitizer forbids (an RLIMIT_AS limit, a plain C consumer
  # of the instrumented runtime archive) under TESSEL_SANITIZED_BUILD.
  if(TESSEL_SANITIZE)
    target_compile_definitions(${target} PRIVATE TESSEL_SANITIZED_BUILD)
  endif()
  if(ARG_UNITY)
    list(TRANSFORM ARG_ALONE PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/${kind}/)
    tessel_unity_build(${target} ${ARG_UNITY} ALONE ${ARG_ALONE})
  endif()
  if(NOT TESSEL_OPTIMIZE_TESTS)  # TesselOptions.cmake: the last -O on the command line wins
    target_compile_options(${target} PRIVATE -O0)
  endif()
  gtest_discover_tests(${target} TEST_PREFIX "${kind}." PROPERTIES LABELS ${kind}
                       DISCOVERY_TIMEOUT 60)
endfunction()
