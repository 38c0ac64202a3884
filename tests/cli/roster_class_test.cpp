// `gpulab grade --roster` on a class of 16 synthetic lab 03 submissions: correct, partly correct,
// crashing, hanging and cheating ones (the planted submissions of tests/grading/planted), graded
// two at a time on two cores, interrupted half-way and resumed. Every grade must equal the same
// submission graded alone, and nothing the interrupted run started may survive it. The class and
// its gradebook stay in GPULAB_ROSTER_CLASS_DIR for the Slurm test (tests/cli/slurm_roster.sh),
// which grades part of it through sbatch and compares.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "planted.hpp"
#include "run_command.hpp"

namespace {

namespace fs = std::filesystem;
using gpulab::testing::Outcome;
using gpulab::testing::shell_quote;
using nlohmann::json;

// The kinds of submission in the class; each student gets kind i % 8, so every kind twice.
struct Kind {
  const char* name;
  const char* planted;  // a folder of tests/grading/planted, or nullptr: `base` as it is
  const char* base;
};
constexpr Kind kKinds[] = {
    {"correct", nullptr, "solutions"},
    {"untouched-stub", nullptr, "labs"},
    {"partly-correct", "delegates-the-roofline", nullptr},
    {"crashing", "segfault", nullptr},
    {"hanging", "host-infinite-loop", nullptr},
    {"cheating-exit-zero", "exit-zero", nullptr},
    {"cheating-reads-the-answers", "reads-the-answers", nullptr},
    {"cheating-fake-gtest-lines", "fake-gtest-lines", nullptr},
};
constexpr int kStudents = 16;
constexpr int kTimeoutS = 4;  // per graded test: the hanging kind's tests are killed at it

std::string student_name(int i) {
  return "student-" + std::string(i < 10 ? "0" : "") + std::to_string(i);
}

const Kind& kind_of(int i) {
  return kKinds[static_cast<std::size_t>(i) % std::size(kKinds)];
}

void make_submission(const Kind& kind, const fs::path& folder) {
  const fs::path source = GPULAB_SOURCE_DIR;
  fs::remove_all(folder);
  if (kind.planted == nullptr) {
    fs::create_directories(folder);
    fs::copy(source / kind.base / "lab03_bottleneck", folder / "lab03_bottleneck",
             fs::copy_options::recursive);
    return;
  }
  const fs::path dir = source / "tests" / "grading" / "planted" / kind.planted;
  gpulab::testing::make_planted_submission(
      json::parse(gpulab::testing::read_text(dir / "planted.json")), dir, source, folder);
}

// Each test's name and disposition in a grade.json, in order.
std::vector<std::string> verdicts(const fs::path& grade) {
  std::vector<std::string> tests;
  const json report = json::parse(gpulab::testing::read_text(grade));
  for (const json& lab : report.at("labs")) {
    for (const json& test : lab.at("tests")) {
      tests.push_back(test.at("name").get<std::string>() + " " +
                      test.at("disposition").get<std::string>());
    }
  }
  return tests;
}

int earned(const fs::path& grade) {
  return json::parse(gpulab::testing::read_text(grade)).at("earned").get<int>();
}

TEST(CliRosterClass, AClassInterruptedAndResumedGradesAsEachAlone) {
  const fs::path root = GPULAB_ROSTER_CLASS_DIR;
  const fs::path roster = root / "class";
  const fs::path out = root / "class-grades";
  const fs::path alone = root / "alone";
  const fs::path seal = root / "seal.sha256";
  fs::remove_all(root);
  for (int i = 0; i < kStudents; ++i) {
    make_submission(kind_of(i), roster / student_name(i));  // throws what went wrong
  }
  const std::string common = " lab03 --backend sim --timeout " + std::to_string(kTimeoutS) +
                             " --seal " + shell_quote(seal.string());

  // Each kind graded alone, two at a time.
  std::map<std::string, fs::path> alone_grade;
  std::vector<std::thread> gradings;
  std::vector<Outcome> outcomes(std::size(kKinds));
  for (std::size_t k = 0; k < std::size(kKinds); ++k) {
    const fs::path folder = alone / kKinds[k].name;
    make_submission(kKinds[k], folder);
    alone_grade[kKinds[k].name] = alone / (std::string(kKinds[k].name) + ".json");
  }
  for (std::size_t first = 0; first < std::size(kKinds); first += 2) {
    for (std::size_t k = first; k < first + 2 && k < std::size(kKinds); ++k) {
      gradings.emplace_back([&, k] {
        outcomes[k] = gpulab::testing::run_command(
            shell_quote(GPULAB_EXE) + " grade" + common + " -j 1 --submission " +
            shell_quote((alone / kKinds[k].name).string()) + " --json " +
            shell_quote(alone_grade[kKinds[k].name].string()));
      });
    }
    for (std::thread& grading : gradings) {
      grading.join();
    }
    gradings.clear();
  }
  for (std::size_t k = 0; k < std::size(kKinds); ++k) {
    ASSERT_EQ(outcomes[k].exit_code, 0) << kKinds[k].name << "\n" << outcomes[k].out;
  }
  // The kinds are what they claim: all points, none, some, a timeout among the verdicts.
  EXPECT_EQ(earned(alone_grade["correct"]), 100);
  EXPECT_EQ(earned(alone_grade["untouched-stub"]), 0);
  EXPECT_EQ(earned(alone_grade["cheating-exit-zero"]), 0);
  EXPECT_EQ(earned(alone_grade["cheating-reads-the-answers"]), 0);
  for (const char* partial : {"partly-correct", "crashing", "hanging"}) {
    EXPECT_GT(earned(alone_grade[partial]), 0) << partial;
    EXPECT_LT(earned(alone_grade[partial]), 100) << partial;
  }
  const std::vector<std::string> hanging = verdicts(alone_grade["hanging"]);
  EXPECT_TRUE(std::any_of(hanging.begin(), hanging.end(),
                          [](const std::string& v) { return v.ends_with(" timed_out"); }));

  // The class, two at a time, interrupted (SIGINT) once half of it is graded.
  const std::string command = shell_quote(GPULAB_EXE) + " grade" + common + " -j 2 --roster " +
                              shell_quote(roster.string()) + " --out " + shell_quote(out.string());
  const fs::path log = root / "interrupted.log";
  const fs::path pid_file = root / "roster.pid";
  Outcome interrupted;
  std::thread run([&] {
    interrupted = gpulab::testing::run_command(
        "sh -c 'echo $$ > " + shell_quote(pid_file.string()) + "; exec " + command + "' > " +
        shell_quote(log.string()) + " 2>&1");
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(400);
  std::string said;
  const std::string half = "] " + std::to_string(kStudents / 2) + "/" + std::to_string(kStudents);
  while (said.find(half) == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    said = gpulab::testing::read_text(log);
  }
  const int pid = std::stoi("0" + gpulab::testing::read_text(pid_file));
  ASSERT_GT(pid, 0);
  ::kill(pid, SIGINT);
  run.join();
  said = gpulab::testing::read_text(log);
  EXPECT_EQ(interrupted.exit_code, 130) << said;
  std::smatch kept;
  ASSERT_TRUE(std::regex_search(said, kept,
                                std::regex("interrupted: ([0-9]+) of " + std::to_string(kStudents) +
                                           " graded this run and kept")))
      << said;
  const int graded_first = std::stoi(kept[1]);
  EXPECT_GE(graded_first, kStudents / 2);
  EXPECT_LT(graded_first, kStudents);
  // Nothing it started is left: no process has the roster in its arguments (the gradings), and
  // none runs from the build's grading slots, build/grading/slotN (the test runners and the tests
  // they started; this test holds every slot, while ctest's own graded tests run from
  // build/grading/results). The brackets keep the patterns from matching the shell of pgrep.
  for (const std::string& path :
       {roster.string(),
        (fs::path(GPULAB_EXE).parent_path().parent_path() / "grading" / "slot").string()}) {
    const Outcome left = gpulab::testing::run_command(
        "pgrep -af -- " + shell_quote("[" + path.substr(0, 1) + "]" + path.substr(1)) + " || true");
    EXPECT_TRUE(left.out.empty()) << "still running: " << left.out;
  }

  // The same command grades the rest.
  const Outcome resumed = gpulab::testing::run_command(command);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  EXPECT_NE(resumed.out.find(std::to_string(graded_first) + " already graded and unchanged"),
            std::string::npos)
      << resumed.out;

  // The gradebook: every student's points are their kind's graded alone, every verdict too.
  std::ostringstream expected;
  expected << "student,lab03,total,possible,status\n";
  for (int i = 0; i < kStudents; ++i) {
    const int points = earned(alone_grade[kind_of(i).name]);
    expected << student_name(i) << "," << points << "," << points << ",100,graded\n";
    EXPECT_EQ(verdicts(out / student_name(i) / "grade.json"),
              verdicts(alone_grade[kind_of(i).name]))
        << student_name(i) << " (" << kind_of(i).name << ")";
  }
  EXPECT_EQ(gpulab::testing::read_text(out / "gradebook.csv"), expected.str());
  const std::string summary = gpulab::testing::read_text(out / "summary.txt");
  const std::string all = std::to_string(kStudents);
  EXPECT_NE(summary.find(all + " of " + all + " submission(s) graded"), std::string::npos)
      << summary;
  fs::remove_all(alone);
  fs::remove(log);
  fs::remove(pid_file);
}

}  // namespace
