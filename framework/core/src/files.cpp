#include "gpulab/core/files.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__APPLE__)
#include <mach-o/dyld.h>
#endif

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

namespace gpulab {

namespace fs = std::filesystem;

std::optional<std::string> read_file(const fs::path& path, std::string* why_not) {
  const auto failed = [&](int code) -> std::optional<std::string> {
    if (why_not != nullptr) {
      *why_not = std::error_code(code, std::generic_category()).message();
    }
    return std::nullopt;
  };
  const auto close = [](std::FILE* f) { std::fclose(f); };
  const std::unique_ptr<std::FILE, decltype(close)> file(std::fopen(path.c_str(), "rb"), close);
  if (!file) {
    return failed(errno);
  }
  std::string text;
  std::array<char, 1 << 16> chunk{};
  std::size_t got = 0;
  while ((got = std::fread(chunk.data(), 1, chunk.size(), file.get())) > 0) {
    text.append(chunk.data(), got);
  }
  if (std::ferror(file.get()) != 0) {
    return failed(errno);  // EISDIR for a folder
  }
  return text;
}

void write_file_atomically(const fs::path& path, std::string_view text, ParentFolders parents) {
  const auto error = [&](const std::string& what) {
    return std::runtime_error(path.string() + ": " + what);
  };
  if (path.filename().empty()) {
    throw error("expected a file name, found a folder");
  }
  const fs::path directory = path.has_parent_path() ? path.parent_path() : fs::path(".");
  if (parents == ParentFolders::create) {
    std::error_code code;
    fs::create_directories(directory, code);
    if (code) {
      throw error("cannot create the folder " + directory.string() + ": " + code.message());
    }
  }
  // mkstemp replaces the template's trailing six 'X' with a unique suffix.
  std::string temporary =
      (directory / ("." + path.filename().string() + ".tmp-" + std::string(6, 'X'))).string();
  const int fd = ::mkstemp(temporary.data());
  if (fd < 0) {
    throw error("cannot create a temporary file in " + directory.string() + ": " +
                std::error_code(errno, std::generic_category()).message());
  }
  const auto give_up = [&](const char* step, int code, bool open) {
    if (open) {
      ::close(fd);
    }
    ::unlink(temporary.c_str());
    throw error(std::string("cannot ") + step + ": " +
                std::error_code(code, std::generic_category()).message());
  };
  for (std::size_t written = 0; written < text.size();) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      give_up("write the file", n < 0 ? errno : EIO, true);
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fchmod(fd, 0644) != 0) {  // mkstemp creates 0600: readable by no one else
    give_up("set the file permissions", errno, true);
  }
  if (::fsync(fd) != 0) {
    give_up("flush the file to disk", errno, true);
  }
  if (::close(fd) != 0) {
    give_up("close the file", errno, false);
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    give_up("replace the file", errno, false);
  }
}

FileLock::FileLock(const fs::path& path, bool wait) {
  std::error_code code;
  if (path.has_parent_path()) {
    fs::create_directories(path.parent_path(), code);
  }
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw std::runtime_error(path.string() + ": cannot open the lock file: " +
                             std::error_code(errno, std::generic_category()).message());
  }
  int result = 0;
  do {
    result = ::flock(fd_, LOCK_EX | (wait ? 0 : LOCK_NB));
  } while (result != 0 && errno == EINTR);
  if (result != 0 && errno != EWOULDBLOCK) {
    const int error = errno;
    ::close(fd_);
    throw std::runtime_error(path.string() + ": cannot lock: " +
                             std::error_code(error, std::generic_category()).message());
  }
  held_ = result == 0;
}

FileLock::FileLock(FileLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), held_(std::exchange(other.held_, false)) {}

FileLock::~FileLock() {
  if (fd_ >= 0) {
    ::close(fd_);  // releases the lock
  }
}

std::filesystem::path executable_path() {
#if defined(__APPLE__)
  std::uint32_t bytes = 0;
  _NSGetExecutablePath(nullptr, &bytes);
  std::string path(bytes, '\0');
  if (_NSGetExecutablePath(path.data(), &bytes) != 0) {
    throw std::runtime_error("cannot find this program's own file (_NSGetExecutablePath)");
  }
  path.resize(std::strlen(path.c_str()));
  return std::filesystem::canonical(path);
#else
  std::error_code error;
  std::filesystem::path path = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) {
    throw std::runtime_error("cannot find this program's own file (/proc/self/exe): " +
                             error.message());
  }
  return path;
#endif
}

}  // namespace gpulab
