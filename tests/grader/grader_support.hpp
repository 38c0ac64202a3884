// What the grader's tests of the manifest, the student's files and the seal share
// (manifest_test.cpp, staging_test.cpp, seal_test.cpp): the message of an expected
// std::runtime_error, and files written for a test.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <typeinfo>

namespace gpulab::testing {

namespace fs = std::filesystem;

// The message of the std::runtime_error `f` throws ("" and a test failure when it throws nothing
// or something else).
template <typename F>
std::string runtime_error_of(F&& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected std::runtime_error, got " << typeid(e).name() << ": " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected std::runtime_error, nothing was thrown";
  return "";
}

/// Writes `contents` to `path`, creating its folders.
inline void write_file(const fs::path& path, const std::string& contents) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
}

}  // namespace gpulab::testing
