# What `cmake --install BUILD --prefix P` puts where (GNUInstallDirs; P/usr for the DEB package):
#   bin/                        mpsbench, mpsbench-probe, mpsbench-meter (harness/), mpsbench-micro, bare-gemm (benchmarks/),
#                               mpsbench-sweep (below)
#   share/mpsbench/presets/     the --preset files: mpsbench looks for them relative to its own path
#                               (presets.cpp), before the source tree's and after $MPSBENCH_PRESET_DIR
#   share/mpsbench/schema/      the JSON Schema of the results file
#   share/mpsbench/sweep/       mpsbench-sweep's Python package (mpsbench_sweep/), the core package it shares
#                               with the analysis (mpsbench_core/) and app-rank-gpu: bin/mpsbench-sweep finds
#                               them relative to its own path
#   share/mpsbench/examples/    the example applications' sources and scripts (examples/CMakeLists.txt)
#   libexec/mpsbench/           small-kernels, the example application built here (examples/CMakeLists.txt)
#   share/doc/mpsbench/         README.md, docs/, the sweep's README and Slurm example
# Nothing installed refers to the source or build tree, so both can be deleted afterwards
# (tests/install/check_installed.sh checks it).
include(GNUInstallDirs)

set(MPSBENCH_INSTALL_DATADIR "${CMAKE_INSTALL_DATADIR}/mpsbench")

# Installed programs find the CUDA and MPI libraries they were linked with where ld.so.conf does not
# list them (a toolkit under /opt, an MPI from a module system): the link directories outside the
# system ones become their RUNPATH. -DCMAKE_INSTALL_RPATH_USE_LINK_PATH=OFF leaves it out.
if(NOT DEFINED CMAKE_INSTALL_RPATH_USE_LINK_PATH)
  set(CMAKE_INSTALL_RPATH_USE_LINK_PATH ON)
endif()

# Directories relative to the bin directory, so an installed tree works wherever it lies (any --prefix,
# dpkg's /usr, a copy): compiled into mpsbench (harness/CMakeLists.txt) and written into the installed
# mpsbench-sweep.
file(RELATIVE_PATH MPSBENCH_PRESET_DIR_FROM_BINDIR
     "${CMAKE_INSTALL_FULL_BINDIR}" "${CMAKE_INSTALL_FULL_DATADIR}/mpsbench/presets")
file(RELATIVE_PATH MPSBENCH_SWEEP_DIR_FROM_BINDIR
     "${CMAKE_INSTALL_FULL_BINDIR}" "${CMAKE_INSTALL_FULL_DATADIR}/mpsbench/sweep")

install(DIRECTORY "${PROJECT_SOURCE_DIR}/presets/" DESTINATION "${MPSBENCH_INSTALL_DATADIR}/presets"
        FILES_MATCHING PATTERN "*.json")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/schema/" DESTINATION "${MPSBENCH_INSTALL_DATADIR}/schema"
        FILES_MATCHING PATTERN "*.json")

# mpsbench-sweep: the launcher with the package's directory written in (harness/mpsbench-sweep says how),
# the package (standard library only) and the rank wrapper it expects beside the package.
configure_file("${PROJECT_SOURCE_DIR}/harness/mpsbench-sweep" "${PROJECT_BINARY_DIR}/install/mpsbench-sweep"
               @ONLY)
install(PROGRAMS "${PROJECT_BINARY_DIR}/install/mpsbench-sweep" DESTINATION "${CMAKE_INSTALL_BINDIR}")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/harness/sweep/mpsbench_sweep" DESTINATION "${MPSBENCH_INSTALL_DATADIR}/sweep"
        PATTERN "__pycache__" EXCLUDE PATTERN "*.pyc" EXCLUDE)
# The core package the sweep shares with the analysis (core/mpsbench_core), beside the sweep's: the installed
# mpsbench-sweep puts that one directory on sys.path, its helpers get it as PYTHONPATH.
install(DIRECTORY "${PROJECT_SOURCE_DIR}/core/mpsbench_core" DESTINATION "${MPSBENCH_INSTALL_DATADIR}/sweep"
        PATTERN "__pycache__" EXCLUDE PATTERN "*.pyc" EXCLUDE)
install(PROGRAMS "${PROJECT_SOURCE_DIR}/harness/sweep/app-rank-gpu" DESTINATION "${MPSBENCH_INSTALL_DATADIR}/sweep")

# The example applications' sources and scripts (small-kernels itself: examples/CMakeLists.txt).
install(FILES "${PROJECT_SOURCE_DIR}/examples/README.md" "${PROJECT_SOURCE_DIR}/examples/small_kernels/small_kernels.cu"
        DESTINATION "${MPSBENCH_INSTALL_DATADIR}/examples")
install(PROGRAMS "${PROJECT_SOURCE_DIR}/examples/check_output.sh" "${PROJECT_SOURCE_DIR}/examples/torch_matmul_cpu.py"
        DESTINATION "${MPSBENCH_INSTALL_DATADIR}/examples")

# Documents: the README's links into docs/ keep working.
install(FILES "${PROJECT_SOURCE_DIR}/README.md" DESTINATION "${CMAKE_INSTALL_DOCDIR}")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/docs/" DESTINATION "${CMAKE_INSTALL_DOCDIR}/docs")
install(FILES "${PROJECT_SOURCE_DIR}/harness/sweep/README.md" "${PROJECT_SOURCE_DIR}/harness/sweep/slurm-example.sbatch"
        DESTINATION "${CMAKE_INSTALL_DOCDIR}/sweep")
