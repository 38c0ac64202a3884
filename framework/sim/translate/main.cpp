// gpulab-sim-translate INPUT.cu OUTPUT.cpp: turns a .cu file into the .cpp that the sim backend
// compiles (translate.hpp says what changes). cmake/GpulabBackend.cmake runs it for every .cu file
// of a sim target. Errors are printed as INPUT:LINE:COLUMN: error: MESSAGE, as compilers print
// them, so IDEs jump to the line.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "translate.hpp"

namespace {

namespace fs = std::filesystem;

constexpr int kSuccess = 0;
constexpr int kFailure = 1;
constexpr int kUsage = 2;
constexpr const char* kUsageLine = "usage: gpulab-sim-translate INPUT.cu OUTPUT.cpp";

int fail(const std::string& message) {
  std::fprintf(stderr, "gpulab-sim-translate: error: %s\n", message.c_str());
  return kFailure;
}

int usage_error(const std::string& message) {
  std::fprintf(stderr, "gpulab-sim-translate: error: %s (%s)\n", message.c_str(), kUsageLine);
  return kUsage;
}

// The whole file, or the reason it cannot be read in `reason`.
std::string read_file(const std::string& path, std::string& reason) {
  std::string text;
  FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    reason = std::strerror(errno);
    return text;
  }
  char buffer[1 << 16];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) {
    text.append(buffer, n);
  }
  if (std::ferror(file) != 0) {
    reason = std::strerror(errno);  // EISDIR for a directory
  }
  std::fclose(file);
  return text;
}

// Writes through a temporary file in the same directory and a rename, so neither a reader nor an
// interrupted build ever sees half a file. Returns the reason of a failure, empty on success.
std::string write_atomically(const fs::path& path, const std::string& text) {
  const fs::path directory = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(directory, ec);
  if (ec) {
    return "cannot create " + directory.string() + ": " + ec.message();
  }
  // mkstemp replaces the six trailing X characters with a unique suffix.
  std::string temp =
      (directory / ("." + path.filename().string() + "." + std::string(6, 'X'))).string();
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) {
    return "cannot create a temporary file in " + directory.string() + ": " + std::strerror(errno);
  }
  std::string reason;
  for (std::size_t written = 0; written < text.size() && reason.empty();) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n >= 0) {
      written += static_cast<std::size_t>(n);
    } else if (errno != EINTR) {
      reason = std::strerror(errno);
    }
  }
  if (reason.empty() && ::fchmod(fd, 0644) != 0) {  // mkstemp creates files readable by no one else
    reason = std::strerror(errno);
  }
  if (::close(fd) != 0 && reason.empty()) {
    reason = std::strerror(errno);
  }
  if (reason.empty() && std::rename(temp.c_str(), path.c_str()) != 0) {
    reason = std::strerror(errno);
  }
  if (!reason.empty()) {
    ::unlink(temp.c_str());
    return "cannot write " + path.string() + ": " + reason;
  }
  return "";
}

// `path` as the inside of a C string literal, for #line (which reads escape sequences).
std::string c_string_body(std::string_view path) {
  std::string body;
  for (const char c : path) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\\' || c == '"') {
      body += '\\';
      body += c;
    } else if (byte < 0x20 || byte == 0x7f) {
      char octal[8];
      std::snprintf(octal, sizeof octal, "\\%03o", static_cast<unsigned>(byte));
      body += octal;
    } else {
      body += c;
    }
  }
  return body;
}

// `text` with control characters replaced, so it cannot end the comment line it is put in.
std::string printable(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      c = '?';
    }
  }
  return out;
}

int run(int argc, char** argv) {
  const std::vector<std::string_view> args(argv + 1, argv + argc);
  for (const std::string_view arg : args) {
    if (arg == "--help" || arg == "-h") {
      std::printf(
          "Usage: gpulab-sim-translate INPUT.cu OUTPUT.cpp\n"
          "Rewrites the kernel launches (<<<...>>>) and extern __shared__ declarations of INPUT.cu "
          "for the sim backend's host compiler and writes OUTPUT.cpp, keeping every line number.\n"
          "Errors are printed as INPUT:LINE:COLUMN: error: MESSAGE. Exit codes: 0 success, "
          "1 errors in INPUT or a file that cannot be read or written, 2 bad arguments.\n");
      return kSuccess;
    }
    if (arg.size() > 1 && arg[0] == '-') {
      return usage_error("unknown option '" + std::string(arg) + "'");
    }
  }
  if (args.size() != 2) {
    return usage_error("expected 2 arguments, got " + std::to_string(args.size()));
  }
  const std::string input(args[0]);
  const fs::path output(args[1]);

  std::string reason;
  std::string source = read_file(input, reason);
  if (!reason.empty()) {
    return fail("cannot read " + input + ": " + reason);
  }
  if (source.starts_with("\xEF\xBB\xBF")) {
    source.erase(0, 3);  // a UTF-8 byte order mark is only valid at the very start of a file
  }

  const gpulab::sim::Translation translation = gpulab::sim::translate_cuda_source(source);
  if (!translation.errors.empty()) {
    for (const gpulab::sim::TranslateError& e : translation.errors) {
      std::fprintf(stderr, "%s:%d:%d: error: %s\n", input.c_str(), e.line, e.column,
                   e.message.c_str());
    }
    return kFailure;
  }

  const std::string absolute = fs::absolute(input).lexically_normal().string();
  // nvcc includes cuda_runtime.h in every .cu file without being asked; the host compiler does not.
  const std::string text = "// Generated by gpulab-sim-translate from " + printable(input) +
                           ": the sim backend's build of that file. Do not edit.\n"
                           "#include <cuda_runtime.h>\n"
                           "#line 1 \"" +
                           c_string_body(absolute) + "\"\n" + translation.text;
  if (const std::string failure = write_atomically(output, text); !failure.empty()) {
    return fail(failure);
  }
  return kSuccess;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
}
