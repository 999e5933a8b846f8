# Defines tessel::nvrtc: NVRTC as CUDA::nvrtc (FindCUDAToolkit) finds it, without the CUDA driver.
#
# Why: FindCUDAToolkit makes CUDA::nvrtc depend on CUDA::cuda_driver, which is the toolkit's stub
# libcuda.so on a machine without a driver. Debian's GCC links with --as-needed, so the unused stub
# usually vanishes from the binaries; under -fsanitize=... (and with toolchains that do not default
# to --as-needed) it stays as a DT_NEEDED entry for libcuda.so.1, and then no test, tool or Python
# module starts where there is no driver. NVRTC needs no driver and the runtime opens it with
# dlopen (docs/design.md, decision 4), so nothing of tessel may link it. tests/link checks the build.
#
# Included by TesselDependencies.cmake (the build) and by the installed tesselConfig.cmake (the
# exported libtessel names tessel::nvrtc); both call find_package(CUDAToolkit) first.
if(TARGET CUDA::nvrtc AND NOT TARGET tessel::nvrtc)
  get_target_property(_tessel_nvrtc_location CUDA::nvrtc IMPORTED_LOCATION)
  get_target_property(_tessel_nvrtc_includes CUDA::nvrtc INTERFACE_INCLUDE_DIRECTORIES)
  add_library(tessel::nvrtc INTERFACE IMPORTED)
  set_target_properties(tessel::nvrtc PROPERTIES INTERFACE_LINK_LIBRARIES "${_tessel_nvrtc_location}")
  if(_tessel_nvrtc_includes)
    set_target_properties(tessel::nvrtc PROPERTIES
                          INTERFACE_INCLUDE_DIRECTORIES "${_tessel_nvrtc_includes}")
  endif()
  unset(_tessel_nvrtc_location)
  unset(_tessel_nvrtc_includes)
endif()
