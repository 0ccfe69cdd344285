# Every third-party dependency is found here, once. Only the folder that owns a
# dependency links it (see ARCHITECTURE.md): libgit2 → tracker, libpqxx → db,
# LLVM → evaluator, LibTorch → policy.
find_package(PkgConfig REQUIRED)
pkg_check_modules(LIBGIT2 REQUIRED IMPORTED_TARGET libgit2)
pkg_check_modules(PQXX REQUIRED IMPORTED_TARGET libpqxx libpq)
find_package(OpenSSL REQUIRED)
find_package(fmt REQUIRED)
find_package(CLI11 REQUIRED)
find_package(tomlplusplus REQUIRED)
find_package(nlohmann_json REQUIRED)
find_package(doctest REQUIRED)
find_package(LLVM 19.1 CONFIG REQUIRED HINTS /usr/lib/llvm-19/lib/cmake/llvm)
find_package(CURL REQUIRED)
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)  # sweep/report_server: report --serve
