# Defines tessel::xgboost: XGBoost's C API (Debian's libxgboost-dev), for the cost model
# (auto_schedule/cost_model/CostModel.h). Sets TESSEL_XGBOOST_FOUND.
#
# Why not find_package(xgboost CONFIG): Debian's config package (1.7.4) also imports the `xgboost`
# command-line program, which is in another package, and CMake refuses a package whose imported
# files are missing. Only the header and the shared library are needed.
#
# Included by TesselDependencies.cmake (the build) and by the installed tesselConfig.cmake (the
# exported libtessel names tessel::xgboost). CMAKE_PREFIX_PATH finds an unpacked bundle (the GPU
# host's .deps/usr, scripts/fetch-gpu-deps.sh).
if(NOT TARGET tessel::xgboost)
  find_path(TESSEL_XGBOOST_INCLUDE_DIR xgboost/c_api.h)
  find_library(TESSEL_XGBOOST_LIBRARY NAMES xgboost)
  if(TESSEL_XGBOOST_INCLUDE_DIR AND TESSEL_XGBOOST_LIBRARY)
    add_library(tessel::xgboost UNKNOWN IMPORTED)
    set_target_properties(tessel::xgboost PROPERTIES
                          IMPORTED_LOCATION "${TESSEL_XGBOOST_LIBRARY}"
                          INTERFACE_INCLUDE_DIRECTORIES "${TESSEL_XGBOOST_INCLUDE_DIR}")
    # libxgboost needs libdmlc from the same folder: let the linker find it there (a bundle is
    # not in the linker's default search path).
    get_filename_component(_tessel_xgboost_dir "${TESSEL_XGBOOST_LIBRARY}" DIRECTORY)
    set_target_properties(tessel::xgboost PROPERTIES
                          INTERFACE_LINK_OPTIONS "LINKER:-rpath-link,${_tessel_xgboost_dir}")
    unset(_tessel_xgboost_dir)
  endif()
endif()
if(TARGET tessel::xgboost)
  set(TESSEL_XGBOOST_FOUND ON)
else()
  set(TESSEL_XGBOOST_FOUND OFF)
endif()
