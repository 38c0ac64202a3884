// The version compiled into gpulab: the project version and the git revision of the build.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "gpulab/core/version.hpp"

namespace {

TEST(Version, IsSemanticVersion) {
  EXPECT_TRUE(std::regex_match(std::string(gpulab::version()), std::regex(R"(\d+\.\d+\.\d+)")))
      << gpulab::version();
}

TEST(Version, StringNamesVersionAndRevisionWhenKnown) {
  const std::string text = gpulab::version_string();
  EXPECT_EQ(text.rfind("gpulab " + std::string(gpulab::version()), 0), 0u) << text;
  if (gpulab::git_revision().empty()) {
    EXPECT_EQ(text, "gpulab " + std::string(gpulab::version()));
  } else {
    EXPECT_NE(text.find("(rev " + std::string(gpulab::git_revision()) + ")"), std::string::npos)
        << text;
    // `git describe --always` gives at least an abbreviated hash.
    EXPECT_TRUE(std::regex_search(std::string(gpulab::git_revision()), std::regex("[0-9a-f]{7,}")))
        << gpulab::git_revision();
  }
}

}  // namespace
