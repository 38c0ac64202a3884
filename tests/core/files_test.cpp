// Unit tests of gpulab/core/files.hpp: the whole-file reader and the one atomic writer that the
// results writer, the grader, its runner and the build tools share, and the lock file of `gpulab
// grade`.
#include "gpulab/core/files.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using gpulab::ParentFolders;
using gpulab::read_file;
using gpulab::write_file_atomically;
using gpulab::testing::TempDir;

std::string error_of(const fs::path& path, ParentFolders parents) {
  try {
    write_file_atomically(path, "x", parents);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(Files, ExecutablePathIsThisTestProgramsFile) {
  const std::filesystem::path self = gpulab::executable_path();
  EXPECT_TRUE(self.is_absolute()) << self;
  EXPECT_TRUE(std::filesystem::is_regular_file(self)) << self;
  EXPECT_TRUE(self.filename().string().starts_with("gpulab.test.")) << self;
}

TEST(Files, WriteCreatesFoldersReplacesTheFileAndReadGivesItsBytes) {
  const TempDir dir;
  const fs::path file = dir.path() / "a" / "b.txt";
  const std::string bytes("line\n\0binary\xff", 13);
  write_file_atomically(file, bytes);
  EXPECT_EQ(read_file(file), bytes);
  write_file_atomically(file, "shorter");  // replaces the whole file
  EXPECT_EQ(read_file(file), "shorter");
  write_file_atomically(file, "");
  EXPECT_EQ(read_file(file), "");
  // Readable by others (mkstemp alone makes 0600), and no temporary file left beside it.
  struct stat info {};
  ASSERT_EQ(::stat(file.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0644u);
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(file.parent_path())) {
    left.push_back(entry.path().filename().string());
  }
  EXPECT_EQ(left, std::vector<std::string>{"b.txt"});
}

TEST(Files, ReadSaysWhyItCannot) {
  const TempDir dir;
  std::string why;
  EXPECT_EQ(read_file(dir.path() / "missing", &why), std::nullopt);
  EXPECT_EQ(why, "No such file or directory");
  EXPECT_EQ(read_file(dir.path(), &why), std::nullopt);
  EXPECT_EQ(why, "Is a directory");
  EXPECT_EQ(read_file(dir.path() / "missing"), std::nullopt);  // the reason is optional
}

TEST(Files, AFailedWriteNamesTheFileAndTheStepAndLeavesNothing) {
  const TempDir dir;
  const fs::path missing = dir.path() / "no" / "such" / "run.json";
  const std::string no_folder = error_of(missing, ParentFolders::must_exist);
  EXPECT_EQ(no_folder.rfind(missing.string() + ": cannot create a temporary file in ", 0), 0u)
      << no_folder;
  EXPECT_NE(no_folder.find("No such file or directory"), std::string::npos) << no_folder;
  EXPECT_FALSE(fs::exists(dir.path() / "no"));

  // Under a file: the folder cannot be created.
  const fs::path plain = dir.path() / "plain";
  write_file_atomically(plain, "text");
  const std::string under_file = error_of(plain / "x.txt", ParentFolders::create);
  EXPECT_NE(under_file.find("cannot create the folder"), std::string::npos) << under_file;

  // The target is a folder: the rename fails and the temporary file is removed.
  const fs::path taken = dir.path() / "taken";
  fs::create_directory(taken);
  const std::string replaced = error_of(taken, ParentFolders::must_exist);
  EXPECT_EQ(replaced.rfind(taken.string() + ": cannot replace the file: ", 0), 0u) << replaced;
  std::vector<std::string> entries = dir.entries();
  std::ranges::sort(entries);
  EXPECT_EQ(entries, (std::vector<std::string>{"plain", "taken"}));
  EXPECT_EQ(read_file(plain), "text");

  EXPECT_NE(error_of(dir.path() / "", ParentFolders::create).find("expected a file name"),
            std::string::npos);
}

TEST(FileLock, OneHolderAtATimeAndFreeAgainWhenReleased) {
  const TempDir dir;
  const fs::path path = dir.path() / "locks" / "grade.lock";
  std::optional<gpulab::FileLock> first(std::in_place, path, false);
  EXPECT_TRUE(first->held());
  EXPECT_TRUE(fs::is_regular_file(path));  // created, with its folder
  EXPECT_FALSE(gpulab::FileLock(path, false).held());
  gpulab::FileLock moved(std::move(*first));
  EXPECT_TRUE(moved.held());
  EXPECT_FALSE(first->held());
  first.reset();  // the moved-from lock releases nothing
  EXPECT_FALSE(gpulab::FileLock(path, false).held());
}

TEST(FileLock, WaitingTakesItWhenTheHolderLetsGo) {
  const TempDir dir;
  const fs::path path = dir.path() / "build.lock";
  std::optional<gpulab::FileLock> holder(std::in_place, path, false);
  ASSERT_TRUE(holder->held());
  std::atomic<bool> released{false};
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    released = true;
    holder.reset();
  });
  const gpulab::FileLock waited(path, true);
  EXPECT_TRUE(waited.held());
  EXPECT_TRUE(released.load());
  release.join();
}

TEST(FileLock, AFileThatCannotBeOpenedIsARuntimeErrorNamingIt) {
  const TempDir dir;
  const fs::path path = dir.path() / "a-folder";
  fs::create_directories(path);
  try {
    const gpulab::FileLock lock(path, false);  // a folder cannot be opened for writing
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
}

}  // namespace
