# Installation and the CMake package: a consumer writes
#
#   find_package(tessel REQUIRED)
#   target_link_libraries(my_program PRIVATE tessel::runtime)   # exported kernels, NDArray, Module
#   target_link_libraries(my_generator PRIVATE tessel::tessel)  # the compiler (DSL, schedules, build)
#
# tessel::runtime needs no LLVM; tessel::tessel is defined when the package was built with the
# LLVM backend and LLVM 19 is found, or was built without it.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TESSEL_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/tessel)

install(TARGETS tessel_runtime EXPORT tesselRuntimeTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS tessel EXPORT tesselTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tessel DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The shipped tuning logs (auto_schedule/records/ShippedLogs.h; a wheel carries them in tessel/
# instead).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/tuning_logs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/tessel/tuning_logs
        FILES_MATCHING PATTERN "*.jsonl" PATTERN "README.md")
install(EXPORT tesselRuntimeTargets NAMESPACE tessel:: DESTINATION ${TESSEL_INSTALL_CMAKEDIR}
        FILE tesselRuntimeTargets.cmake)
install(EXPORT tesselTargets NAMESPACE tessel:: DESTINATION ${TESSEL_INSTALL_CMAKEDIR}
        FILE tesselTargets.cmake)
# The targets carry their names without the library prefix (tessel::runtime, tessel::tessel).
set_target_properties(tessel_runtime PROPERTIES EXPORT_NAME runtime)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tesselConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/tesselConfig.cmake
                              INSTALL_DESTINATION ${TESSEL_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tesselConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tesselConfig.cmake ${PROJECT_BINARY_DIR}/tesselConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/TesselNVRTC.cmake
              ${PROJECT_SOURCE_DIR}/cmake/TesselXGBoost.cmake
        DESTINATION ${TESSEL_INSTALL_CMAKEDIR})
