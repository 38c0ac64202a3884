// The gpulab command, run as a user would: exit codes, one-line errors, --help everywhere.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gpulab/core/class_summary.hpp"
#include "gpulab/core/files.hpp"
#include "gpulab/grader/manifest.hpp"
#include "gpulab/grader/process.hpp"
#include "run_command.hpp"

namespace {

using gpulab::testing::Outcome;

std::filesystem::path temp_path(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("gpulab_cli_test_" + std::to_string(::getpid()) + "_" + name);
}

// Runs `gpulab <args>` through the shell; stdout and stderr captured separately.
Outcome gpulab(const std::string& args, const std::string& env = "") {
  return gpulab::testing::run_command(env + " " + gpulab::testing::shell_quote(GPULAB_EXE) + " " +
                                      args);
}

std::size_t count_lines(const std::string& text) {
  std::size_t lines = 0;
  for (char c : text) {
    lines += c == '\n' ? 1 : 0;
  }
  return lines;
}

TEST(Cli, VersionPrintsVersionAndBackend) {
  const Outcome run = gpulab("--version");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("gpulab 0."), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("backend"), std::string::npos) << run.out;
}

TEST(Cli, EveryCommandHasHelp) {
  for (const char* command : {"", "device", "specs", "show"}) {
    SCOPED_TRACE(command);
    const Outcome run = gpulab(std::string(command) + " --help");
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_NE(run.out.find("Usage"), std::string::npos) << run.out;
  }
}

TEST(Cli, BadArgumentsGiveOneLineAndExitCode2) {
  for (const char* args :
       {"", "no-such-command", "device --no-such-flag", "specs a b", "show", "specs no-such-gpu"}) {
    SCOPED_TRACE(args);
    const Outcome run = gpulab(args);
    EXPECT_EQ(run.exit_code, 2);
    EXPECT_EQ(count_lines(run.err), 1u) << run.err;
    EXPECT_EQ(run.err.rfind("gpulab: error: ", 0), 0u) << run.err;
  }
}

TEST(Cli, DeviceExitsZeroAndNamesTheDeviceOrTheReason) {
  const Outcome run = gpulab("device");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const bool has_device = run.out.find("\ndevice 0: ") != std::string::npos;
  const bool explains = run.out.find("no CUDA device: ") != std::string::npos &&
                        run.out.find("the sim backend will be used") != std::string::npos;
  EXPECT_TRUE(has_device || explains) << run.out;
}

TEST(Cli, DeviceWithAnUnknownSimSpecFailsWithTheReasonWhenNoDevice) {
  const Outcome run = gpulab("device", "GPULAB_SIM_SPEC=no-such-gpu");
  if (run.out.find("no CUDA device: ") == std::string::npos) {
    GTEST_SKIP() << "this machine has a CUDA device: the sim backend is not used";
  }
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.out.find("sim backend unavailable: GPULAB_SIM_SPEC names an unknown GPU "
                         "'no-such-gpu'"),
            std::string::npos)
      << run.out;
}

TEST(Cli, DeviceJsonIsAValidResultsFileThatShowPrints) {
  const std::filesystem::path json = temp_path("device.json");
  const Outcome device = gpulab("device --json '" + json.string() + "'");
  ASSERT_EQ(device.exit_code, 0) << device.err;
  const Outcome show = gpulab("show '" + json.string() + "'");
  EXPECT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("backend"), std::string::npos) << show.out;
  std::filesystem::remove(json);
}

TEST(Cli, SpecsListsTheDatabaseWithH100Peaks) {
  const Outcome run = gpulab("specs");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_GE(count_lines(run.out), 2u + 11u) << run.out;
  std::istringstream lines(run.out);
  std::string line;
  bool found = false;
  while (std::getline(lines, line)) {
    if (line.rfind("h100-sxm ", 0) == 0) {
      found = true;
      EXPECT_NE(line.find(" 3350 "), std::string::npos) << line;
      EXPECT_NE(line.find(" 989."), std::string::npos) << line;
    }
  }
  EXPECT_TRUE(found) << run.out;
}

TEST(Cli, SpecsNameShowsOneGpuWithSources) {
  const Outcome run = gpulab("specs 'H100 SXM'");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("3350 GB/s"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("source:"), std::string::npos) << run.out;
}

TEST(Cli, ShowRejectsMalformedFilesWithOneLine) {
  const std::filesystem::path bad = temp_path("bad.json");
  for (const char* content : {"{\"context\": {", "not json at all", "[1, 2, 3]", ""}) {
    SCOPED_TRACE(content);
    std::ofstream(bad) << content;
    const Outcome run = gpulab("show '" + bad.string() + "'");
    EXPECT_NE(run.exit_code, 0);
    EXPECT_LT(run.exit_code, 128) << "crashed";
    EXPECT_EQ(count_lines(run.err), 1u) << run.err;
    EXPECT_NE(run.err.find(bad.filename().string()), std::string::npos) << run.err;
  }
  std::filesystem::remove(bad);
  const Outcome missing = gpulab("show /nonexistent/results.json");
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_EQ(count_lines(missing.err), 1u) << missing.err;
}

// ---------------------------------------------------------------------------------------------
// gpulab run / gpulab grade

bool has_solutions() {
  return std::filesystem::exists(GPULAB_SOURCE_DIR "/solutions");
}

TEST(CliRun, AnUnknownLabIsAUsageErrorListingTheLabs) {
  const Outcome run = gpulab("run lab99");
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_EQ(count_lines(run.err), 1u) << run.err;
  EXPECT_NE(run.err.find("no lab \"lab99\" (labs: lab01"), std::string::npos) << run.err;
}

TEST(CliRun, ArgumentsAfterDashesAreOnlyForRun) {
  const Outcome run = gpulab("device -- --help");
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("only for `gpulab run`"), std::string::npos) << run.err;
}

TEST(CliRun, PrintsTheReportWithItsCodeAndBackend) {
  if (!has_solutions()) {
    GTEST_SKIP() << "a student release has no solutions/";
  }
  const Outcome run = gpulab("run lab03 --backend sim --quick");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("gpulab lab03: Identifying the bottleneck"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("code:    solutions/"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("backend: sim"), std::string::npos) << run.out;
  // The report times with the modeled clock where the build can count, else the host clock.
  EXPECT_TRUE(run.out.find("timings: the sim's modeled clock") != std::string::npos ||
              run.out.find("timings: CPU time of the simulation, NOT GPU time") !=
                  std::string::npos)
      << run.out;
  // GPULAB_SIM_CLOCK=host chooses CPU time of the simulation, and the report says so.
  const Outcome host = gpulab("run lab03 --backend sim --quick", "GPULAB_SIM_CLOCK=host");
  EXPECT_EQ(host.exit_code, 0) << host.err;
  EXPECT_NE(host.out.find("timings: CPU time of the simulation, NOT GPU time"), std::string::npos)
      << host.out;
  EXPECT_NE(host.out.find("3. Measured profile: skipped"), std::string::npos) << host.out;
}

TEST(CliRun, TheUntouchedStubsSayWhatIsNotImplemented) {
  const Outcome run = gpulab("run lab03 --student --backend sim --quick");
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.err.find("is not implemented yet (fill in the TODO(lab03) region at labs/"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(run.err.rfind("gpulab lab03: ", 0), 0u) << run.err;
  EXPECT_EQ(run.err.find("lab03: lab03:"), std::string::npos) << "one prefix\n" << run.err;
}

TEST(CliRun, PassesArgumentsAfterDashesToTheLab) {
  const Outcome run = gpulab("run lab01 --student --backend sim -- --help");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("--max-log2"), std::string::npos) << run.out;
  const Outcome bad = gpulab("run lab01 --student --backend sim -- --max-log2 99");
  EXPECT_EQ(bad.exit_code, 2) << "the lab's exit code for a bad argument: " << bad.err;
}

TEST(CliRun, ABadSpecIsAUsageError) {
  const Outcome run = gpulab("run lab03 --student --backend sim --spec nosuchgpu");
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("no GPU named \"nosuchgpu\""), std::string::npos) << run.err;
}

// Every lab's report writes a results file that loads: a metric without a unit, a NaN or an
// invalid name fails the whole --json run, so each lab is run once here.
TEST(CliRun, EveryLabsJsonResultsCanBeShownAgain) {
  if (!has_solutions()) {
    GTEST_SKIP() << "a student release has no solutions/";
  }
  const std::filesystem::path path = temp_path("labs.json");
  const Outcome run =
      gpulab("run all --backend sim --quick --json " + gpulab::testing::shell_quote(path.string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // One file per lab, PATH's stem then the lab (labs.lab01.json), each shown again and removed.
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(path.parent_path())) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with(path.stem().string() + ".lab") && name.ends_with(".json")) {
      files.push_back(entry.path());
    }
  }
  EXPECT_GE(files.size(), 5U) << "labs 01 to 05 each write a file";
  for (const std::filesystem::path& file : files) {
    SCOPED_TRACE(file.string());
    const Outcome show = gpulab("show " + gpulab::testing::shell_quote(file.string()));
    EXPECT_EQ(show.exit_code, 0) << show.err;
    EXPECT_NE(show.out.find("backend"), std::string::npos) << show.out;
    std::filesystem::remove(file);
  }
}

TEST(CliGrade, AnUnknownLabOrBackendIsAUsageError) {
  EXPECT_EQ(gpulab("grade lab99").exit_code, 2);
  EXPECT_EQ(gpulab("grade --backend gpu").exit_code, 2);
  const Outcome help = gpulab("grade --help");
  EXPECT_EQ(help.exit_code, 0) << help.err;
  for (const char* option : {"--submission", "--gradescope", "--junit", "--timeout", "--reseal"}) {
    EXPECT_NE(help.out.find(option), std::string::npos) << option << "\n" << help.out;
  }
  EXPECT_EQ(gpulab("grade --submission /nonexistent/gpulab-submission").exit_code, 2);
  EXPECT_EQ(gpulab("grade --timeout 100000").exit_code, 2);  // above the build's limit
}

TEST(CliCheck, AnUnknownLabOrBackendIsAUsageErrorAndHelpNamesTheLoop) {
  EXPECT_EQ(gpulab("check lab99").exit_code, 2);
  EXPECT_EQ(gpulab("check --backend gpu").exit_code, 2);
  EXPECT_EQ(gpulab("check --submission x").exit_code, 2) << "check is for the tree's own labs/";
  const Outcome help = gpulab("check --help");
  EXPECT_EQ(help.exit_code, 0) << help.err;
  EXPECT_NE(help.out.find("--brief"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("--sanitize"), std::string::npos) << help.out;
  EXPECT_EQ(gpulab("grade --sanitize").exit_code, 2)
      << "a grade of record runs the tests as written";
  EXPECT_NE(gpulab("--help").out.find("check"), std::string::npos);
}

// The stubs of the tree's labs/ (a student who has not started): every failure says what the
// test checks, where the student's function is and why it failed; --brief one line each. Exit
// status 1: not every test passed.
TEST(CliCheck, EveryFailureSaysWhatItChecksWhereTheCodeIsAndWhy) {
  const Outcome full = gpulab("check lab03 --backend sim");
  EXPECT_EQ(full.exit_code, 1) << full.out << full.err;
  for (const std::string& said :
       {std::string("lab03  Identifying the bottleneck: 0/100 points, 0 of "),
        std::string("  failed  Lab03OpCost.GemmCountsTwoFlopsPerMultiplyAddAndMovesEachMatrixOnce  "
                    "0/4\n      checks:    a GEMM costs 2*m*n*k FLOP and moves A, B and C once\n"
                    "      your code: gemm_cost ("),
        std::string("bottleneck.cpp:"),
        std::string("      why:       exception: lab03: gemm_cost is not implemented yet (fill in "
                    "the TODO(lab03) region at labs/lab03_bottleneck/bottleneck.cpp:"),
        std::string("tests to fix. After an edit, run `gpulab check lab03` again")}) {
    EXPECT_NE(full.out.find(said), std::string::npos) << said << "\n---\n" << full.out;
  }
  EXPECT_EQ(full.out.find("sealed"), std::string::npos) << "check seals nothing\n" << full.out;
  const Outcome brief = gpulab("check lab03 --backend sim --brief");
  EXPECT_EQ(brief.exit_code, 1) << brief.out << brief.err;
  EXPECT_EQ(brief.out.find("checks:"), std::string::npos) << brief.out;
  EXPECT_NE(brief.out.find("  failed  Lab03Intensity.IsFlopsPerByteMoved  0/4\n      exception: "
                           "lab03: arithmetic_intensity is not implemented yet"),
            std::string::npos)
      << brief.out;
}

// With every grading slot of the build in use, `gpulab grade` says so and waits; it grades in the
// slot that comes free. (The submission has no files: nothing to build, so it is quick.)
TEST(CliGrade, WaitsForAFreeGradingSlotAndTakesIt) {
  namespace fs = std::filesystem;
  using gpulab::testing::shell_quote;
  const fs::path build = fs::path(GPULAB_EXE).parent_path().parent_path();
  const gpulab::LabManifest manifest =
      gpulab::load_lab_manifest(build / "grading" / "manifest.json");
  ASSERT_FALSE(manifest.grading_slots.empty());
  std::vector<std::optional<gpulab::FileLock>> held;  // waits for gradings running beside it
  for (const fs::path& slot : manifest.grading_slots) {
    held.emplace_back(std::in_place, slot / "grade.lock", true);
  }
  const fs::path submission = temp_path("empty-submission");
  fs::create_directories(submission);
  const fs::path log = temp_path("grade.log");
  Outcome graded;
  std::thread grading([&] {
    graded = gpulab("grade lab03 --backend sim --submission " + shell_quote(submission.string()) +
                    " --seal " + shell_quote((submission / "seal").string()) + " --reseal > " +
                    shell_quote(log.string()) + " 2>&1");
  });
  const std::string waiting = "grading slots of this build are in use";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  std::string said;
  while (said.find(waiting) == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    said = gpulab::read_file(log).value_or("");
  }
  EXPECT_NE(said.find(waiting), std::string::npos) << said;
  held.back().reset();  // the last slot comes free
  grading.join();
  said = gpulab::read_file(log).value_or("");
  EXPECT_EQ(graded.exit_code, 0) << said;
  const std::size_t last = manifest.grading_slots.size() - 1;
  EXPECT_NE(said.find("grading slot " + std::to_string(last) + " of " +
                      std::to_string(manifest.grading_slots.size())),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("the submission has no labs/lab03_bottleneck/"), std::string::npos) << said;
  fs::remove_all(submission);
  fs::remove(log);
}

// ---------------------------------------------------------------------------------------------
// gpulab grade --roster: a class of lab 03 submissions (host code: quick to build and grade)
// ---------------------------------------------------------------------------------------------

namespace fs = std::filesystem;

// A roster folder laid out as a Gradescope export: submission_<id> folders named by
// submission_metadata.yml, and one folder the metadata does not know (named after itself).
struct ClassRoster {
  fs::path root = temp_path("roster");
  fs::path out = temp_path("roster-grades");
  fs::path seal = temp_path("roster-seal");

  ClassRoster() {
    fs::remove_all(root);
    fs::remove_all(out);
    const fs::path source(GPULAB_SOURCE_DIR);
    const fs::path solution = source / "solutions" / "lab03_bottleneck" / "bottleneck.cpp";
    const fs::path stub = source / "labs" / "lab03_bottleneck" / "bottleneck.cpp";
    add("submission_101", solution);
    add("submission_102", stub);
    add("=late", stub);  // a name a spreadsheet would run as a formula
    add("submission_103", solution);
    gpulab::write_file_atomically(root / "submission_metadata.yml",
                                  "submission_101:\n"
                                  "  :submitters:\n"
                                  "  - :name: Ada Lovelace\n"
                                  "    :sid: '1'\n"
                                  "    :email: ada@example.edu\n"
                                  "submission_102:\n"
                                  "  :submitters:\n"
                                  "  - :name: Bob Stub\n"
                                  "submission_103:\n"
                                  "  :submitters:\n"
                                  "  - :email: 'cy@example.edu'\n");
  }
  ~ClassRoster() {
    fs::remove_all(root);
    fs::remove_all(out);
    fs::remove(seal);
  }
  ClassRoster(const ClassRoster&) = delete;
  ClassRoster& operator=(const ClassRoster&) = delete;

  void add(const std::string& folder, const fs::path& file) const {
    fs::create_directories(root / folder / "lab03_bottleneck");
    fs::copy_file(file, root / folder / "lab03_bottleneck" / "bottleneck.cpp",
                  fs::copy_options::overwrite_existing);
  }

  [[nodiscard]] std::string command(int jobs = 2) const {
    return "grade lab03 --backend sim --roster " + gpulab::testing::shell_quote(root.string()) +
           " --out " + gpulab::testing::shell_quote(out.string()) + " --seal " +
           gpulab::testing::shell_quote(seal.string()) + " -j " + std::to_string(jobs);
  }

  [[nodiscard]] std::string gradebook() const {
    return gpulab::read_file(out / "gradebook.csv").value_or("(no gradebook)");
  }
};

const char* const kClassGradebook =
    "student,lab03,total,possible,status\n"
    "'=late,0,0,100,graded\n"
    "Bob Stub,0,0,100,graded\n"
    "ada@example.edu,100,100,100,graded\n"
    "cy@example.edu,100,100,100,graded\n";

TEST(CliRoster, GradesAClassInParallelIntoAGradebookEqualToEachGradeAlone) {
  const ClassRoster roster;
  const Outcome graded = gpulab(roster.command());
  ASSERT_EQ(graded.exit_code, 0) << graded.out << graded.err;
  EXPECT_NE(graded.out.find("4 submission(s), 1 lab(s), sim backend; 0 already graded"),
            std::string::npos)
      << graded.out;
  EXPECT_NE(graded.out.find("] 4/4  "), std::string::npos) << "a progress line per submission";
  EXPECT_EQ(roster.gradebook(), kClassGradebook);
  for (const char* file : {"grade.txt", "grade.json", "results.json", "stamp"}) {
    EXPECT_TRUE(fs::exists(roster.out / "ada@example.edu" / file)) << file;
  }
  const std::string summary = gpulab::read_file(roster.out / "summary.txt").value_or("");
  EXPECT_NE(summary.find("4 of 4 submission(s) graded"), std::string::npos) << summary;
  EXPECT_NE(summary.find("90-100%: 2"), std::string::npos) << summary;
  EXPECT_NE(summary.find("0-9%: 2"), std::string::npos) << summary;
  EXPECT_NE(summary.find("Tests failed most often:\n  2  lab03 "), std::string::npos) << summary;
  // summary.json, for `gpulab view`: the same figures.
  const gpulab::ClassSummary read = gpulab::class_summary_from_json(
      gpulab::load_results_json(roster.out / "summary.json"), "summary.json");
  EXPECT_EQ(read.context.backend, "sim");
  EXPECT_EQ(read.students, 4u);
  EXPECT_EQ(read.graded, 4u);
  ASSERT_EQ(read.labs.size(), 1u);
  EXPECT_EQ(read.labs[0].histogram, (std::array<std::size_t, 10>{2, 0, 0, 0, 0, 0, 0, 0, 0, 2}));
  ASSERT_FALSE(read.failed_most.empty());
  EXPECT_EQ(read.failed_most[0].students, 2u);
  const Outcome shown =
      gpulab("show " + gpulab::testing::shell_quote((roster.out / "summary.json").string()));
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_EQ(shown.out, summary) << "gpulab show prints what summary.txt says";
  // The two copies of the solution look alike, to each other and to the solution; the stubs
  // (nothing but the starter code) look like nothing.
  const std::string similar = gpulab::read_file(roster.out / "similarity.txt").value_or("");
  EXPECT_NE(similar.find("lab03 bottleneck.cpp: 3 pair(s)"), std::string::npos) << similar;
  EXPECT_NE(similar.find("100%  ada@example.edu  ~  cy@example.edu"), std::string::npos) << similar;
  EXPECT_NE(similar.find("ada@example.edu  ~  solutions/lab03_bottleneck/bottleneck.cpp"),
            std::string::npos)
      << similar;
  EXPECT_EQ(similar.find("Bob Stub"), std::string::npos) << similar;
  EXPECT_NE(graded.out.find("similarity.txt"), std::string::npos) << graded.out;

  // Each grade equals the same submission graded alone.
  const fs::path alone = temp_path("alone.json");
  const Outcome single = gpulab(
      "grade lab03 --backend sim --seal " + gpulab::testing::shell_quote(roster.seal.string()) +
      " --submission " + gpulab::testing::shell_quote((roster.root / "submission_102").string()) +
      " --json " + gpulab::testing::shell_quote(alone.string()));
  ASSERT_EQ(single.exit_code, 0) << single.out;
  const auto verdicts = [](const fs::path& file) {
    std::vector<std::string> tests;
    const std::string text = gpulab::read_file(file).value_or("");
    for (std::size_t at = text.find("\"disposition\""); at != std::string::npos;
         at = text.find("\"disposition\"", at + 1)) {
      tests.push_back(text.substr(at, text.find(',', at) - at));
    }
    return tests;
  };
  EXPECT_EQ(verdicts(alone), verdicts(roster.out / "Bob Stub" / "grade.json"));
  EXPECT_FALSE(verdicts(alone).empty());
  fs::remove(alone);

  // Graded and unchanged: kept. A changed submission is graded again, alone.
  const Outcome again = gpulab(roster.command());
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_NE(again.out.find("4 already graded and unchanged (kept; --regrade grades them again), "
                           "0 to grade"),
            std::string::npos)
      << again.out;
  EXPECT_EQ(roster.gradebook(), kClassGradebook);
  roster.add("submission_102",
             fs::path(GPULAB_SOURCE_DIR) / "solutions" / "lab03_bottleneck" / "bottleneck.cpp");
  const Outcome changed = gpulab(roster.command());
  ASSERT_EQ(changed.exit_code, 0) << changed.out;
  EXPECT_NE(changed.out.find("3 already graded and unchanged"), std::string::npos) << changed.out;
  EXPECT_NE(changed.out.find("Bob Stub  lab03 100  total 100/100"), std::string::npos)
      << changed.out;
}

TEST(CliRoster, AnInterruptedRunKillsItsGradingsAndTheSameCommandFinishesIt) {
  const ClassRoster roster;
  const fs::path log = temp_path("roster.log");
  const fs::path pid_file = temp_path("roster.pid");
  Outcome interrupted;
  std::thread run([&] {
    interrupted = gpulab::testing::run_command(
        "sh -c 'echo $$ > " + gpulab::testing::shell_quote(pid_file.string()) + "; exec " +
        gpulab::testing::shell_quote(GPULAB_EXE) + " " + roster.command(1) + "' > " +
        gpulab::testing::shell_quote(log.string()) + " 2>&1");
  });
  // Interrupted once the first submission is graded, while the second is.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  std::string said;
  while (said.find("] 1/4") == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    said = gpulab::read_file(log).value_or("");
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const int pid = std::stoi(gpulab::read_file(pid_file).value_or("0"));
  ASSERT_GT(pid, 0);
  ::kill(pid, SIGINT);
  run.join();
  said = gpulab::read_file(log).value_or("");
  EXPECT_EQ(interrupted.exit_code, 130) << said;
  EXPECT_NE(said.find("interrupted: 1 of 4 graded this run and kept"), std::string::npos) << said;
  // Nothing it started is left: no process has the roster in its arguments (the bracket keeps
  // the pattern from matching the shell that runs pgrep).
  const std::string path = roster.root.string();
  const Outcome left = gpulab::testing::run_command(
      "pgrep -af -- " +
      gpulab::testing::shell_quote("[" + path.substr(0, 1) + "]" + path.substr(1)) + " || true");
  EXPECT_TRUE(left.out.empty()) << "still running: " << left.out;

  const Outcome resumed = gpulab(roster.command());
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  EXPECT_NE(resumed.out.find("1 already graded and unchanged (kept; --regrade grades them "
                             "again), 3 to grade"),
            std::string::npos)
      << resumed.out;
  EXPECT_EQ(roster.gradebook(), kClassGradebook);

  // --regrade forgets every grade first: interrupted, the plain command grades the rest.
  const Outcome regraded = gpulab(roster.command() + " --regrade");
  ASSERT_EQ(regraded.exit_code, 0) << regraded.out;
  EXPECT_NE(regraded.out.find("0 already graded and unchanged"), std::string::npos) << regraded.out;
  EXPECT_EQ(roster.gradebook(), kClassGradebook);
  fs::remove(log);
  fs::remove(pid_file);
}

// On a GPU: one grading per GPU, and each grading's tests one at a time, whatever -j asks (about
// 30 s a grading on an H100). Lab
// 01's timing tests fail a correct solution whose samples share the GPU with other tests (an
// H100 roster that ran a grading's tests 16 at a time gave copies of the solution 90 of 100).
TEST(CliRosterCuda, EveryCopyOfTheSolutionGetsFullMarksOneGradingPerGpu) {
  const fs::path root = temp_path("cuda-roster");
  const fs::path out = temp_path("cuda-roster-grades");
  const fs::path seal = temp_path("cuda-roster-seal");
  fs::remove_all(root);
  fs::remove_all(out);
  const fs::path solution =
      fs::path(GPULAB_SOURCE_DIR) / "solutions" / "lab01_benchmarking" / "benchmark.cu";
  const std::vector<std::string> students = {"ann", "ben"};
  for (const std::string& student : students) {
    fs::create_directories(root / student / "lab01_benchmarking");
    fs::copy_file(solution, root / student / "lab01_benchmarking" / "benchmark.cu");
  }
  const Outcome graded =
      gpulab("grade lab01 --backend cuda --roster " + gpulab::testing::shell_quote(root.string()) +
             " --out " + gpulab::testing::shell_quote(out.string()) + " --seal " +
             gpulab::testing::shell_quote(seal.string()) + " -j 64");
  const std::string said = graded.out + graded.err;
  fs::remove_all(root);
  fs::remove(seal);
  if (said.find("no usable CUDA device") != std::string::npos ||
      said.find("no cuda backend") != std::string::npos) {
    fs::remove_all(out);
    GTEST_SKIP() << "no GPU: " << said;
  }
  EXPECT_EQ(graded.exit_code, 0) << said;
  EXPECT_NE(said.find(" at a time, a GPU each"), std::string::npos) << said;
  if (said.find(" 1 at a time, a GPU each") != std::string::npos) {  // one GPU: -j 64 capped
    EXPECT_NE(said.find("1 GPU(s), and two gradings on one GPU would time each other's kernels"),
              std::string::npos)
        << said;
  }
  const std::string gradebook = gpulab::read_file(out / "gradebook.csv").value_or("");
  for (const std::string& student : students) {
    EXPECT_NE(gradebook.find(student + ",100,100,100,graded"), std::string::npos) << gradebook;
    const std::string text = gpulab::read_file(out / student / "grade.txt").value_or("");
    EXPECT_NE(text.find("graded tests, 1 at a time"), std::string::npos) << text;
  }
  fs::remove_all(out);
}

TEST(CliRoster, TheAutomaticBackendIsAcceptedAsForOneSubmission) {
  // --collect grades nothing: it only reads what a Slurm round left (none here).
  const fs::path roster = temp_path("auto-roster");
  fs::create_directories(roster / "alice");
  const Outcome collected = gpulab(
      "grade lab01 --backend auto --roster " + gpulab::testing::shell_quote(roster.string()) +
      " --out " + gpulab::testing::shell_quote((roster.string() + "-out")) + " --collect");
  const std::string said = collected.out + collected.err;
  EXPECT_EQ(collected.exit_code, 1) << said;
  EXPECT_NE(said.find("alice: not graded"), std::string::npos) << said;
  fs::remove_all(roster);
  fs::remove_all(roster.string() + "-out");
}

TEST(CliRoster, BadRostersAreUsageErrors) {
  EXPECT_EQ(gpulab("grade --roster /nonexistent/gpulab-roster").exit_code, 2);
  const fs::path roster = temp_path("bad-roster");
  fs::create_directories(roster);
  const Outcome none = gpulab("grade --roster " + gpulab::testing::shell_quote(roster.string()));
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("no submission in it"), std::string::npos) << none.err;
  fs::create_directories(roster / "alice");
  const Outcome both = gpulab("grade --roster " + gpulab::testing::shell_quote(roster.string()) +
                              " --submission " + gpulab::testing::shell_quote(roster.string()));
  EXPECT_EQ(both.exit_code, 2) << both.out;
  const Outcome inside = gpulab("grade --roster " + gpulab::testing::shell_quote(roster.string()) +
                                " --out " + gpulab::testing::shell_quote((roster / "x").string()));
  EXPECT_EQ(inside.exit_code, 2) << inside.out;
  EXPECT_NE(inside.err.find("inside the roster"), std::string::npos) << inside.err;
  EXPECT_EQ(gpulab("grade --out x").exit_code, 2) << "--out needs --roster";
  EXPECT_EQ(gpulab("grade --roster x --collect --slurm").exit_code, 2) << "one or the other";
  EXPECT_EQ(gpulab("grade --roster x --slurm --time 1h").exit_code, 2) << "not a Slurm time";
  EXPECT_EQ(gpulab("grade --wait").exit_code, 2) << "--wait needs --slurm";
  fs::create_directories(roster / "bob\nmallory");
  const Outcome newline = gpulab("grade --roster " + gpulab::testing::shell_quote(roster.string()));
  EXPECT_EQ(newline.exit_code, 2) << newline.out;
  EXPECT_NE(newline.err.find("control character"), std::string::npos) << newline.err;
  fs::remove_all(roster);
}

}  // namespace
