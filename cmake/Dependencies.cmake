# Every dependency comes from a Debian 12 package (scripts/install-deps.sh installs them).
find_package(nlohmann_json 3.10 REQUIRED)
find_package(Boost 1.74 REQUIRED)          # header-only parts: Graph, Math
find_package(Eigen3 3.4 REQUIRED NO_MODULE)
find_package(CLI11 2.1 REQUIRED)
if(WAKESIM_BUILD_TESTS)
  find_package(Catch2 2.13 REQUIRED)
endif()
if(WAKESIM_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
