# `cpack -G DEB` in the build directory: a Debian package of what `cmake --install` installs, under /usr,
# versioned with the project (VERSION). tests/install/check_installed.sh builds, unpacks and runs it.
#
# Depends (MPSBENCH_DEB_DEPENDS overrides the whole line):
#   - openmpi-bin (mpirun, which mpsbench-sweep runs) and the Open MPI 4 shared libraries, which the programs
#     link (libmpi.so.40, libmpi_cxx.so.40): libopenmpi3t64 since the 64-bit time_t transition (Ubuntu 24.04,
#     Debian 13), libopenmpi3 before it (Debian 12). Debian 13's libopenmpi40 is Open MPI 5, without the
#     libmpi_cxx the C++ bindings need, so it is no alternative.
#   - the CUDA runtime and cuBLAS of the toolkit's major version (sonames libcudart.so.13, libcublas.so.13):
#     NVIDIA's repository names them per minor version, cuda-cudart-13-0 and libcublas-13-0 (as its
#     cuda-libraries-13-X meta-packages do), and any minor from the one built with on serves, so each is
#     a list of alternatives up to X-9; Debian's own packaging names them per soname (libcudart12 and
#     libcublas12 for CUDA 12 in non-free), so libcudart13 and libcublas13 close the lists. The driver
#     (libcuda.so.1, nvidia-cuda-mps-control) is not a dependency: it is often installed outside dpkg.
#   - python3 (>= 3.8): mpsbench-sweep (standard library only).
#   - libc6, libstdc++6 and libgcc-s1 at least as new as on the building machine where dpkg-query can
#     tell: dpkg-shlibdeps is off (CPACK_DEBIAN_PACKAGE_SHLIBDEPS) because it stops at the CUDA libraries,
#     which no Debian package here provides.
set(_cuda_major "${CUDAToolkit_VERSION_MAJOR}")
set(_cudart "")
set(_cublas "")
set(_last_minor 9)
if(CUDAToolkit_VERSION_MINOR GREATER _last_minor)
  set(_last_minor "${CUDAToolkit_VERSION_MINOR}")
endif()
foreach(_minor RANGE ${CUDAToolkit_VERSION_MINOR} ${_last_minor})
  list(APPEND _cudart "cuda-cudart-${_cuda_major}-${_minor}")
  list(APPEND _cublas "libcublas-${_cuda_major}-${_minor}")
endforeach()
list(APPEND _cudart "libcudart${_cuda_major}")
list(APPEND _cublas "libcublas${_cuda_major}")
list(JOIN _cudart " | " _cudart)
list(JOIN _cublas " | " _cublas)

set(_runtime "")
find_program(MPSBENCH_DPKG_QUERY dpkg-query)
mark_as_advanced(MPSBENCH_DPKG_QUERY)
foreach(_pkg IN ITEMS libc6 libstdc++6 libgcc-s1)
  set(_version "")
  if(MPSBENCH_DPKG_QUERY)
    execute_process(COMMAND "${MPSBENCH_DPKG_QUERY}" -W -f=\${Version} ${_pkg}
                    OUTPUT_VARIABLE _version ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  endif()
  # The upstream part: 2.36-9+deb12u14 -> 2.36, 12.2.0-14+deb12u1 -> 12.2.0, 1:... -> without the epoch.
  string(REGEX REPLACE "^[0-9]+:" "" _version "${_version}")
  string(REGEX REPLACE "-.*$" "" _version "${_version}")
  if(_version MATCHES "^[0-9][0-9.]*$")
    list(APPEND _runtime "${_pkg} (>= ${_version})")
  else()
    list(APPEND _runtime "${_pkg}")
  endif()
endforeach()
list(JOIN _runtime ", " _runtime)

set(MPSBENCH_DEB_DEPENDS "" CACHE STRING
    "Depends of the DEB package (cpack -G DEB); empty: the default that cmake/MpsbenchPackage.cmake explains")
set(MPSBENCH_DEB_MAINTAINER "mpsbench maintainers" CACHE STRING "Maintainer of the DEB package (Name <email>)")

set(CPACK_PACKAGE_NAME "mpsbench")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_VENDOR "mpsbench")
set(CPACK_PACKAGE_CONTACT "${MPSBENCH_DEB_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GPU sharing benchmark: MPS, time slicing and streams compared under MPI")
set(CPACK_PACKAGE_DESCRIPTION
    "mpsbench runs real kernels (cuBLAS matmul, nbody, a CPU-plus-GPU hybrid) as MPI ranks mapped several
per GPU, verifies every result against a CPU reference and writes self-describing JSON. mpsbench-sweep
compares the sharing modes (time slicing, MPS, streams) in one command; mpsbench-micro, bare-gemm and
mpsbench-probe come with it.")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_GENERATOR "DEB")
set(CPACK_SOURCE_GENERATOR "")

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # mpsbench_0.1.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION "science")
set(CPACK_DEBIAN_PACKAGE_PRIORITY "optional")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
if(MPSBENCH_DEB_DEPENDS)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "${MPSBENCH_DEB_DEPENDS}")
else()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS
      "openmpi-bin, libopenmpi3t64 | libopenmpi3, ${_cudart}, ${_cublas}, python3 (>= 3.8), ${_runtime}")
endif()

include(CPack)
