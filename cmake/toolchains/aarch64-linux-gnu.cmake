# Cross-compiling gpulab's sim backend for ARM64 Linux on an x86-64 Debian machine, run under
# qemu-user (scripts/check-arm64 uses it). Debian packages: g++-aarch64-linux-gnu, qemu-user,
# gcc-12-plugin-dev-aarch64-linux-gnu, and with the arm64 architecture added (dpkg
# --add-architecture arm64) libgtest-dev:arm64 and libgmock-dev:arm64.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# The programs the build runs (the sim's translator, the kernel table's generator) and the tests.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu)
