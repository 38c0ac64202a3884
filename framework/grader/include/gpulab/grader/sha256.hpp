// SHA-256 (FIPS 180-4), for the grader's manifest of instructor files: a submission's copy of a
// test, or a grading tree changed by the code it ran, shows up as a different digest.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace gpulab {

/// How the digest is computed: with the CPU's SHA instructions where it has them (x86-64 SHA-NI),
/// else in portable C++ (`portable`: always; the tests check that both agree).
enum class Sha256Engine { automatic, portable };

/// The SHA-256 digest of `data` as 64 lowercase hex digits.
[[nodiscard]] std::string sha256_hex(std::string_view data,
                                     Sha256Engine engine = Sha256Engine::automatic);

/// The SHA-256 digest of a file's bytes; throws std::runtime_error when it cannot be read.
[[nodiscard]] std::string sha256_file(const std::filesystem::path& path,
                                      Sha256Engine engine = Sha256Engine::automatic);

}  // namespace gpulab
