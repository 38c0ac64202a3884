// Counts follow the source, not the build type (cmake/GpulabBackend.cmake,
// GPULAB_SIM_KERNEL_OPTIMIZATION): in a counting build every file of a sim target, its translated
// kernel files and its precompiled header among them, is compiled at one optimization level, given
// after the build type's own flags so that it wins whatever the build type is. Read from this
// build's compile_commands.json (tests/sim/CMakeLists.txt passes its path, the level and the build
// type's flags). With GCC each also bounds its variable tracking (GPULAB_SIM_DEBUG_LIMIT).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string word; in >> word;) {
    out.push_back(word);
  }
  return out;
}

bool is_optimization(const std::string& word) {
  return word.size() <= 3 && word.starts_with("-O");
}

TEST(SimKernelOptimization, EverySimFileCompilesAtTheOneLevelAfterTheBuildTypesFlags) {
  std::ifstream in(GPULAB_COMPILE_COMMANDS);
  ASSERT_TRUE(in) << "cannot read " << GPULAB_COMPILE_COMMANDS;
  const nlohmann::json commands = nlohmann::json::parse(in);
  const std::string level = GPULAB_KERNEL_OPTIMIZATION;
  const std::vector<std::string> build_type = words(GPULAB_BUILD_TYPE_FLAGS);
  int translated = 0;
  int precompiled_headers = 0;
  for (const nlohmann::json& entry : commands) {
    const std::vector<std::string> command = words(entry.value("command", ""));
    const std::string file = entry.value("file", "");
    if (std::find(command.begin(), command.end(), "-DGPULAB_BACKEND_SIM=1") == command.end()) {
      continue;  // not a sim target's file
    }
    SCOPED_TRACE(file);
    // Where the build type's flags end: the level must come after them.
    auto after = command.begin();
    if (!build_type.empty()) {
      after = std::search(command.begin(), command.end(), build_type.begin(), build_type.end());
      ASSERT_NE(after, command.end()) << "the build type's flags are not in the command";
      after += static_cast<std::ptrdiff_t>(build_type.size());
    }
    EXPECT_NE(std::find(after, command.end(), level), command.end())
        << level << " is not given after the build type's flags";
    const auto last = std::find_if(command.rbegin(), command.rend(), is_optimization);
    ASSERT_NE(last, command.rend());
    EXPECT_EQ(*last, level) << "the last optimization flag wins";
    // GCC's variable tracking is bounded (cmake/GpulabBackend.cmake, GPULAB_SIM_DEBUG_LIMIT).
#if defined(__GNUC__) && !defined(__clang__)
    ASSERT_FALSE(std::string(GPULAB_SIM_DEBUG_LIMIT).empty()) << "a GCC build sets the limit";
#endif
    if (const std::string limit = GPULAB_SIM_DEBUG_LIMIT; !limit.empty()) {
      EXPECT_NE(std::find(command.begin(), command.end(), limit), command.end())
          << limit << " is not in the command";
    }
    translated += file.find("/sim_sources/") != std::string::npos ? 1 : 0;
    precompiled_headers += file.ends_with("cmake_pch.hxx.cxx") ? 1 : 0;
  }
  EXPECT_GT(translated, 0) << "no translated kernel file among the sim targets' files";
  EXPECT_GT(precompiled_headers, 0) << "no precompiled header among the sim targets' files";
}

}  // namespace
