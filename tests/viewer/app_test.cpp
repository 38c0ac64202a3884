// Tests of the viewer (gpulab-view.sim, and `gpulab view`): its command line, its behaviour
// without a display, and headless screenshots under xvfb-run (a virtual X server; Mesa renders
// OpenGL on the CPU).
//
// The screenshot tests skip, with the reason, when xvfb-run or xauth is not installed: a GUI test
// that cannot run must never count as passed.
#include <gtest/gtest.h>
#include <stb_image.h>  // libstb.so holds the implementation
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const std::string kViewer = GPULAB_VIEW_EXE;
const std::string kGpulab = GPULAB_EXE;
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
    // One folder, which TearDown removes: a parameterized test's name has a '/'.
    std::string name = info->name();
    std::replace(name.begin(), name.end(), '/', '-');
    dir_ =
        fs::temp_directory_path() / ("gpulab-view-test-" + std::to_string(getpid()) + "-" + name);
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
      // xvfb-run's own failures, not the viewer's: its server did not start, or its clean-up
      // (rm -r of its folder, racing xauth's lock files under load) failed, and it exits 5 in
      // place of the viewer's status.
      if (result.err.find("Xvfb failed to start") == std::string::npos &&
          result.err.find("problem while cleaning up temporary directory") == std::string::npos) {
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

// The share of pixels that differ from the image's most common colour (the background): a panel
// with text and a chart covers a few percent of its window at least, an empty one almost nothing.
double drawn_fraction(const fs::path& png) {
  int w = 0;
  int h = 0;
  int channels = 0;
  unsigned char* pixels = stbi_load(png.c_str(), &w, &h, &channels, 3);
  if (pixels == nullptr) {
    return 0;
  }
  std::map<unsigned, std::size_t> counts;
  const std::size_t count = static_cast<std::size_t>(w) * static_cast<std::size_t>(h);
  for (std::size_t i = 0; i < count; ++i) {
    const unsigned char* p = pixels + 3 * i;
    ++counts[(unsigned{p[0]} << 16) | (unsigned{p[1]} << 8) | unsigned{p[2]}];
  }
  stbi_image_free(pixels);
  std::size_t background = 0;
  for (const auto& [colour, n] : counts) {
    background = std::max(background, n);
  }
  return count == 0 ? 0 : 1.0 - static_cast<double>(background) / static_cast<double>(count);
}

// --- command line (no display needed) ---------------------------------------------------------

TEST_F(ViewerApp, HelpExitsZeroAndNamesTheOptions) {
  const Outcome r = run_viewer({"--help"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* option :
       {"--spec", "--screenshot", "--frames", "--width", "--height", "--headless", "--panel",
        "--run", "--quick", "--kernel", "--save", "--frame-stats", "--run-timeout"}) {
    EXPECT_NE(r.out.find(option), std::string::npos) << option << " missing from\n" << r.out;
  }
}

TEST_F(ViewerApp, UnknownOptionIsOneLineAndExitCode2) {
  const Outcome r = run_viewer({"--no-such-option"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(count_lines(r.err), 1u) << r.err;
  EXPECT_EQ(r.err.rfind("gpulab view: error: ", 0), 0u) << r.err;
}

TEST_F(ViewerApp, UnknownPanelRunOrKernelIsOneLineAndExitCode2) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--panel", "no-such-panel"},
                                             {"--run", "everything"},
                                             {"--kernel", "no_such_kernel", "--headless"}}) {
    const Outcome r = run_viewer(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.err;
    EXPECT_EQ(count_lines(r.err), 1u) << r.err;
    EXPECT_EQ(r.err.rfind("gpulab view: error: ", 0), 0u) << r.err;
  }
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

TEST_F(ViewerApp, WithoutADisplayPrintsOneLineAndExitCode2) {
  // Interactive, and headless (which still renders through X): both need a display.
  for (const std::string& args :
       {std::string(), " --headless --screenshot " + quote((dir_ / "never.png").string())}) {
    const Outcome r = run("env -u DISPLAY -u WAYLAND_DISPLAY " + quote(kViewer) + args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(count_lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find("gpulab view: no display to open a window on"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("xvfb-run"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir_ / "never.png"));
}

// --- `gpulab view` runs gpulab-view ------------------------------------------------------------

TEST_F(ViewerApp, GpulabViewPassesEveryArgumentToTheViewer) {
  Outcome r = run(quote(kGpulab) + " view --help");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("--screenshot"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--panel"), std::string::npos) << r.out;
  r = run(quote(kGpulab) + " view --panel no-such-panel");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("gpulab view: error: ", 0), 0u) << r.err;
}

TEST_F(ViewerApp, GpulabViewBackendChoosesTheBuildAndRejectsOthers) {
  Outcome r = run(quote(kGpulab) + " view --backend sim --help");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("--backend cuda|sim"), std::string::npos) << r.out;
  r = run(quote(kGpulab) + " view --backend=tpu");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(count_lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("expected cuda or sim"), std::string::npos) << r.err;
  r = run(quote(kGpulab) + " view --backend");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--backend needs a value"), std::string::npos) << r.err;
}

TEST_F(ViewerApp, GpulabViewInABuildThatDidNotBuildTheViewerSaysHowToBuildIt) {
  // A build folder configured with the viewer (this one's gpulab) whose bin/ holds gpulab alone,
  // as after the README's `cmake --build --preset sim-only --target gpulab`.
  fs::create_directories(dir_ / "bin");
  fs::copy_file(kGpulab, dir_ / "bin" / "gpulab");
  std::ofstream(dir_ / "CMakeCache.txt").put('\n');
  const Outcome r = run(quote((dir_ / "bin" / "gpulab").string()) + " view --backend sim");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(count_lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("the sim viewer is not built yet"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" --build " + dir_.string() + " --target gpulab-view.sim"),
            std::string::npos)
      << r.err;
}

TEST_F(ViewerApp, GpulabViewInABuildWithoutTheViewerSaysHowToGetIt) {
  // A folder whose bin/ holds gpulab alone and that is no build folder (no CMakeCache.txt): as a
  // build with GPULAB_BUILD_VIEWER=OFF, it has no viewer to build.
  fs::create_directories(dir_ / "bin");
  fs::copy_file(kGpulab, dir_ / "bin" / "gpulab");
  const Outcome r = run(quote((dir_ / "bin" / "gpulab").string()) + " view");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(count_lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("this build has no viewer"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("GPULAB_BUILD_VIEWER=ON"), std::string::npos) << r.err;
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

// --- every panel, live on this backend and from a saved file ----------------------------------

// The panels and, for each, the live run that gives it something to draw, and the least share
// of its window a panel with data covers (drawn_fraction). With no data, the benchmark,
// components, sweep and results panels cover about 3% (title and a hint): their floor of 20%
// fails a panel that draws nothing (see EmptyPanelsAreMostlyBackground). The run panel is mostly
// text whatever happens.
struct PanelCase {
  const char* panel;
  const char* run;
  double min_drawn;
};

class ViewerPanel : public ViewerApp, public ::testing::WithParamInterface<PanelCase> {};

TEST_P(ViewerPanel, RendersLiveResults) {
  require_xvfb();
  if (IsSkipped()) {
    return;
  }
  const fs::path png = dir_ / "live.png";
  const fs::path saved = dir_ / "live.json";
  const Outcome r =
      run_headless({"--panel", GetParam().panel, "--run", GetParam().run, "--quick", "--frames",
                    "3", "--save", saved.string(), "--screenshot", png.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_viewer_png(png, 1280, 800);
  EXPECT_GE(drawn_fraction(png), GetParam().min_drawn) << GetParam().panel << ": nearly empty";
  EXPECT_TRUE(fs::is_regular_file(saved));
}

TEST_P(ViewerPanel, RendersASavedFile) {
  require_xvfb();
  if (IsSkipped()) {
    return;
  }
  // live_sim.json: `gpulab view --headless --run all --quick --save` on the sim backend;
  // lab01_sim.json: `gpulab run lab01 --quick --json` (with samples), lab03 the modeled roofline.
  const fs::path png = dir_ / "saved.png";
  const Outcome r = run_headless({"--panel", GetParam().panel, "--frames", "3", "--screenshot",
                                  png.string(), kData + "/live_sim.json", kData + "/lab01_sim.json",
                                  kData + "/lab03_sim.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  expect_viewer_png(png, 1280, 800);
  EXPECT_GE(drawn_fraction(png), GetParam().min_drawn) << GetParam().panel << ": nearly empty";
}

INSTANTIATE_TEST_SUITE_P(
    EveryPanel, ViewerPanel,
    ::testing::Values(PanelCase{"device", "bandwidth", 0.2}, PanelCase{"results", "bandwidth", 0.2},
                      PanelCase{"run", "bandwidth", 0.04}, PanelCase{"benchmark", "bandwidth", 0.2},
                      PanelCase{"components", "components", 0.2},
                      PanelCase{"roofline", "components", 0.2},
                      PanelCase{"occupancy", "sweep", 0.2}, PanelCase{"sweep", "sweep", 0.2}),
    [](const ::testing::TestParamInfo<PanelCase>& param) {
      return std::string(param.param.panel);
    });

TEST_F(ViewerApp, MemoryPanelDrawsTheCountedKernelsOfAProfileFile) {
  require_xvfb();
  if (IsSkipped()) {
    return;
  }
  // profile_sim.json: `gpulab profile lab02 --solution --json FILE -- --quick` on sim. The panel
  // without it draws one hint line; with it, the flow table and the figures below it.
  const fs::path empty = dir_ / "memory_empty.png";
  const fs::path loaded = dir_ / "memory.png";
  Outcome r = run_headless({"--panel", "memory", "--screenshot", empty.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_headless(
      {"--panel", "memory", "--screenshot", loaded.string(), kData + "/profile_sim.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  expect_viewer_png(loaded, 1280, 800);
  EXPECT_GT(drawn_fraction(loaded), 3 * drawn_fraction(empty));
}

TEST_F(ViewerApp, SourcePanelDrawsTheLinesOfAProfileBySourceLine) {
  require_xvfb();
  if (IsSkipped()) {
    return;
  }
  // profile_source_sim.json: `gpulab profile` of the catalog's transposes with --source on sim.
  // Without it the panel draws one hint line; with it, the first kernel's problems, its lines
  // with their heat bars and figures, and its code.
  const fs::path empty = dir_ / "source_empty.png";
  const fs::path loaded = dir_ / "source.png";
  Outcome r = run_headless({"--panel", "source", "--screenshot", empty.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_headless(
      {"--panel", "source", "--screenshot", loaded.string(), kData + "/profile_source_sim.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  expect_viewer_png(loaded, 1280, 800);
  EXPECT_GT(drawn_fraction(loaded), 3 * drawn_fraction(empty));
}

TEST_F(ViewerApp, LevelsPanelDrawsTheLevelsOfALab04File) {
  require_xvfb();
  if (IsSkipped()) {
    return;
  }
  // lab04_sim.json: `gpulab run lab04 --quick --json FILE` on sim. Without it the panel draws one
  // hint line; with it, the bars of five levels and the memory of each against seq_len.
  const fs::path empty = dir_ / "levels_empty.png";
  const fs::path loaded = dir_ / "levels.png";
  Outcome r = run_headless({"--panel", "levels", "--screenshot", empty.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_headless(
      {"--panel", "levels", "--screenshot", loaded.string(), kData + "/lab04_sim.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  expect_viewer_png(loaded, 1280, 800);
  EXPECT_GE(drawn_fraction(loaded), 0.2);
  EXPECT_LT(drawn_fraction(empty), 0.1);
}

TEST_F(ViewerApp, HistoryPanelDrawsTheTimelineOfAMemoryHistoryFile) {
  require_xvfb();
  if (IsSkipped()) {
    return;
  }
  // history_sim.json: `gpulab run lab04 --quick --memory-history FILE` on sim.
  const fs::path empty = dir_ / "history_empty.png";
  const fs::path loaded = dir_ / "history.png";
  Outcome r = run_headless({"--panel", "history", "--screenshot", empty.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_headless(
      {"--panel", "history", "--screenshot", loaded.string(), kData + "/history_sim.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  expect_viewer_png(loaded, 1280, 800);
  EXPECT_GE(drawn_fraction(loaded), 0.2);
  EXPECT_LT(drawn_fraction(empty), 0.1);
}

TEST_F(ViewerApp, ClassPanelDrawsTheScoresAndFailedTestsOfAClassSummary) {
  require_xvfb();
  if (IsSkipped()) {
    return;
  }
  // class_sim.json: the summary.json of the 50-submission class test (gpulab grade --roster).
  const fs::path empty = dir_ / "class_empty.png";
  const fs::path loaded = dir_ / "class.png";
  Outcome r = run_headless({"--panel", "class", "--screenshot", empty.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_headless(
      {"--panel", "class", "--screenshot", loaded.string(), kData + "/class_sim.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  expect_viewer_png(loaded, 1280, 800);
  EXPECT_GE(drawn_fraction(loaded), 0.2);
  EXPECT_LT(drawn_fraction(empty), 0.1);
}

TEST_F(ViewerApp, EmptyPanelsAreMostlyBackground) {
  require_xvfb();
  if (IsSkipped()) {
    return;
  }
  // What the 20% floor above tells apart: a data panel with nothing loaded draws a hint only.
  for (const char* panel : {"benchmark", "components", "sweep"}) {
    const fs::path png = dir_ / (std::string(panel) + ".png");
    const Outcome r = run_headless({"--panel", panel, "--screenshot", png.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_LT(drawn_fraction(png), 0.1) << panel;
  }
}

// The frame time with every panel open and three files loaded, on whatever renders here (Mesa's
// llvmpipe under Xvfb: the CPU draws every pixel), as a ratio to the frame time of an empty window
// measured in the same run: how fast the machine is, and how busy, cancels out; work the panels
// do per frame does not (a chart that re-reads its file every frame, a table that re-sorts). An
// absolute budget (60 frames a second) is a benchmark figure, not a test: docs/viewer.md. The
// test runs alone (RUN_SERIAL) so that both figures see the same machine.
TEST_F(ViewerApp, FrameTime_AllPanelsCostAtMostTwoAndAHalfEmptyWindows) {
  require_xvfb();
  if (IsSkipped()) {
    return;
  }
  const auto median_ms = [this](std::vector<std::string> files) {
    std::vector<std::string> args = {"--frames", "120", "--frame-stats"};
    args.insert(args.end(), files.begin(), files.end());
    const Outcome r = run_headless(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::smatch match;
    EXPECT_TRUE(std::regex_search(r.out, match, std::regex(R"(median ([0-9.]+) ms)"))) << r.out;
    std::printf("%s", r.out.c_str());  // the figures, for the log
    return match.empty() ? 0.0 : std::stod(match[1].str());
  };
  const double empty_ms = median_ms({});
  const double loaded_ms = median_ms({kData + "/live_sim.json", kData + "/lab01_sim.json",
                                      kData + "/lab03_sim.json", kData + "/profile_sim.json"});
  ASSERT_GT(empty_ms, 0.0);
  ASSERT_GT(loaded_ms, 0.0);
  RecordProperty("empty_frame_ms", std::to_string(empty_ms));
  RecordProperty("loaded_frame_ms", std::to_string(loaded_ms));
  EXPECT_LT(loaded_ms / empty_ms, 2.5)
      << "empty " << empty_ms << " ms, loaded " << loaded_ms << " ms";
}

TEST_F(ViewerApp, AllLiveRunsFillEveryPanelAndSaveAFileThatLoadsBack) {
  require_xvfb();
  if (IsSkipped()) {
    return;
  }
  const fs::path png = dir_ / "all.png";
  const fs::path saved = dir_ / "all.json";
  Outcome r = run_headless(
      {"--run", "all", "--quick", "--save", saved.string(), "--screenshot", png.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("saved the live results to"), std::string::npos) << r.out;
  expect_viewer_png(png, 1280, 800);
  const std::string text = read_file(saved);
  for (const char* name :
       {"\"vector_add\"", "\"attention_component\"", "\"block_size_sweep\"", "\"samples_ms\""}) {
    EXPECT_NE(text.find(name), std::string::npos) << name << " missing from the saved file";
  }
  r = run_headless({"--screenshot", (dir_ / "reload.png").string(), saved.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
}

}  // namespace
