// Tests of the gpulab-view executable: its command line, its behaviour without a display, and
// headless screenshots under xvfb-run (a virtual X server; Mesa renders OpenGL on the CPU).
//
// The screenshot tests skip, with the reason, when xvfb-run or xauth is not installed: a GUI test
// that cannot run must never count as passed.
#include <gtest/gtest.h>
#include <stb_image.h>  // libstb.so holds the implementation
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const std::string kViewer = GPULAB_VIEW_EXE;
const std::string kData = GPULAB_VIEWER_TEST_DATA_DIR;

struct Outcome {
  int exit_code = -1;  // -1 when the process did not exit normally (a crash)
  std::string out;
  std::string err;
};

// Quotes one argument for /bin/sh.
std::string quote(const std::string& arg) {
  std::string quoted = "'";
  for (const char c : arg) {
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return quoted + "'";
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::size_t count_lines(const std::string& text) {
  std::size_t lines = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    lines += line.empty() ? 0 : 1;
  }
  return lines;
}

// The directory of PATH holding `program`, or empty when none does.
std::string find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / program;
    if (access(candidate.c_str(), X_OK) == 0) {
      return candidate.string();
    }
  }
  return "";
}

class ViewerApp : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("gpulab-view-test-" + std::to_string(getpid()) + "-" + info->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  // Runs a shell command line with stdout and stderr captured.
  Outcome run(const std::string& command) const {
    const fs::path out = dir_ / "stdout.txt";
    const fs::path err = dir_ / "stderr.txt";
    const int status =
        std::system((command + " >" + quote(out.string()) + " 2>" + quote(err.string())).c_str());
    Outcome result;
    result.exit_code = (status != -1 && WIFEXITED(status)) ? WEXITSTATUS(status) : -1;
    result.out = read_file(out);
    result.err = read_file(err);
    return result;
  }

  Outcome run_viewer(const std::vector<std::string>& args) const {
    std::string command = quote(kViewer);
    for (const std::string& arg : args) {
      command += " " + quote(arg);
    }
    return run(command);
  }

  // Runs the viewer under xvfb-run. `-a` picks a free display number, but two xvfb-runs
  // starting at once (ctest -j) can pick the same one and the second X server fails to start:
  // that is retried, it is not the viewer's fault.
  Outcome run_headless(const std::vector<std::string>& args) const {
    std::string command =
        quote(xvfb_run_) + " -a -s " + quote("-screen 0 1280x800x24") + " " + quote(kViewer);
    for (const std::string& arg : args) {
      command += " " + quote(arg);
    }
    Outcome result;
    for (int attempt = 0; attempt < 3; ++attempt) {
      result = run(command);
      if (result.err.find("Xvfb failed to start") == std::string::npos) {
        break;
      }
    }
    return result;
  }

  // Skips (never passes) when the headless display cannot be made.
  void require_xvfb() {
    xvfb_run_ = find_on_path("xvfb-run");
    if (xvfb_run_.empty()) {
      GTEST_SKIP() << "xvfb-run is not installed (apt-get install xvfb xauth): cannot test the "
                      "viewer without a display";
    }
    if (find_on_path("xauth").empty()) {
      GTEST_SKIP() << "xauth is not installed (apt-get install xauth): xvfb-run needs it";
    }
  }

  fs::path dir_;
  std::string xvfb_run_;
};

// Decodes a PNG and checks it is an image of the viewer, not a blank frame: the expected size
// and many distinct colours (text, table borders and coloured values are drawn).
void expect_viewer_png(const fs::path& png, int width, int height) {
  ASSERT_TRUE(fs::is_regular_file(png)) << png;
  const std::string bytes = read_file(png);
  ASSERT_GE(bytes.size(), 8u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8)) << "not a PNG signature";
  int w = 0;
  int h = 0;
  int channels = 0;
  unsigned char* pixels = stbi_load(png.c_str(), &w, &h, &channels, 3);
  ASSERT_NE(pixels, nullptr) << "stb_image cannot decode " << png << ": " << stbi_failure_reason();
  EXPECT_EQ(w, width);
  EXPECT_EQ(h, height);
  std::set<unsigned> colours;
  const std::size_t count = static_cast<std::size_t>(w) * static_cast<std::size_t>(h);
  for (std::size_t i = 0; i < count; ++i) {
    const unsigned char* p = pixels + 3 * i;
    colours.insert((unsigned{p[0]} << 16) | (unsigned{p[1]} << 8) | unsigned{p[2]});
  }
  stbi_image_free(pixels);
  EXPECT_GE(colours.size(), 16u) << "the screenshot is (nearly) a single colour";
}

// --- command line (no display needed) ---------------------------------------------------------

TEST_F(ViewerApp, HelpExitsZeroAndNamesTheOptions) {
  const Outcome r = run_viewer({"--help"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* option : {"--spec", "--screenshot", "--frames", "--width", "--height"}) {
    EXPECT_NE(r.out.find(option), std::string::npos) << option << " missing from\n" << r.out;
  }
}

TEST_F(ViewerApp, UnknownOptionIsOneLineAndExitCode2) {
  const Outcome r = run_viewer({"--no-such-option"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(count_lines(r.err), 1u) << r.err;
  EXPECT_EQ(r.err.rfind("gpulab-view: error: ", 0), 0u) << r.err;
}

TEST_F(ViewerApp, OutOfRangeFramesIsOneLineAndExitCode2) {
  const Outcome r = run_viewer({"--frames", "0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(count_lines(r.err), 1u) << r.err;
}

TEST_F(ViewerApp, UnknownSpecIsOneLineNamingTheKnownOnesAndExitCode2) {
  const Outcome r = run_viewer({"--spec", "no-such-gpu"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(count_lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("h100-sxm"), std::string::npos) << r.err;
}

TEST_F(ViewerApp, WithoutADisplayPrintsOneLineAndExitCode1) {
  const Outcome r = run("env -u DISPLAY -u WAYLAND_DISPLAY " + quote(kViewer) + " --screenshot " +
                        quote((dir_ / "never.png").string()));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(count_lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("gpulab-view: cannot open a window: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("xvfb-run"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "never.png"));
}

// --- headless (xvfb-run) ------------------------------------------------------------------------

TEST_F(ViewerApp, ScreenshotIsANonTrivialPngOfTheWindow) {
  require_xvfb();
  if (IsSkipped()) {
    return;
  }
  const fs::path png = dir_ / "viewer.png";
  const Outcome r =
      run_headless({"--screenshot", png.string(), "--frames", "3", kData + "/results_valid.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  expect_viewer_png(png, 1280, 800);
}

TEST_F(ViewerApp, ScreenshotHasTheRequestedSize) {
  require_xvfb();
  if (IsSkipped()) {
    return;
  }
  const fs::path png = dir_ / "small.png";
  const Outcome r = run_headless(
      {"--screenshot", png.string(), "--width", "800", "--height", "600", "--spec", "a100"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_viewer_png(png, 800, 600);
}

TEST_F(ViewerApp, MalformedResultsFileIsReportedAndTheViewerCarriesOn) {
  require_xvfb();
  if (IsSkipped()) {
    return;
  }
  const fs::path png = dir_ / "malformed.png";
  const Outcome r = run_headless({"--screenshot", png.string(), kData + "/results_malformed.json",
                                  kData + "/results_valid.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count_lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("results_malformed.json"), std::string::npos) << r.err;
  expect_viewer_png(png, 1280, 800);
}

TEST_F(ViewerApp, UnwritableScreenshotPathFailsWithExitCode1) {
  require_xvfb();
  if (IsSkipped()) {
    return;
  }
  const Outcome r = run_headless({"--screenshot", (dir_ / "no-such-dir" / "x.png").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot write screenshot"), std::string::npos) << r.err;
}

}  // namespace
