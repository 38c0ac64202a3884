// Grading the grader: one planted submission (tests/grading/planted/<name>/planted.json) graded by
// `gpulab grade` as an instructor would, and its report compared with the verdicts and score the
// submission must receive.
//
//   gpulab.test.grading.planted <planted.json>
//
// planted.json:
//   "description"  what the submission does wrong
//   "labs"         the labs graded, e.g. ["lab03"]
//   "base"         "solutions" or "labs": the code the submission starts from (copied into a
//                  temporary folder; "layout": "tree" puts it under labs/ of a tree-shaped copy)
//   "edits"        [{"file": "lab03_bottleneck/bottleneck.cpp", "find": "...", "replace": [lines]}]
//                  each "find" must occur exactly once in the base file; "replace_file" names a
//                  file of the planted folder to insert instead of "replace"
//   "files"        {"tests/labs/...": [lines]}: extra files of the submission (tree layout)
//   "copies"       {"extra/answer.cpp": "${source}/solutions/..."}: copies of files in it
//   "links"        {"lab03_bottleneck/bottleneck.cpp": "${source}/solutions/..."}: a path of the
//                  submission made a symbolic link
//                  ("${source}": the instructor's tree, "${submission}": the submission's folder,
//                  "${planted}": the planted folder, in replacements, copies and links)
//   "backends"     where the expectations hold: "sim" always runs; "cuda" only with a GPU
//   "timeout_s"    each test's time limit for this grading
//   "score"        the total points it must get
//   "default"      the disposition of every test not in "verdicts"
//   "verdicts"     {"Suite.Name": "timed_out", ...}
//   "modeled_clock_only"  ["Suite.Name", ...]: verdicts that hold on the sim's modeled clock only
//                  (a time that the CPU clock of a build that cannot count does not resolve); in
//                  such a build their verdicts are not checked and the score may be up to their
//                  points higher
//   "detail_contains"  {"Suite.Name": "SIGSEGV"}: text the test's detail or failure lines must
//                  contain (on sim)
//   "ignored_contains" text one of the report's "ignored" lines must contain
//   "build_error_contains" {"lab03": "expected"}: text among the lab's compiler errors
//   "build_warning_contains" {"lab03": "old-style cast"}: text among the lab's compiler warnings
//   "rejected_for_contains" {"lab03": "calls fork"}: text among what the code checks found
//   "report_excludes" [text, ...]: text that must appear nowhere in the report or the console
//   "tamper_seal"  an instructor file whose digest is changed in the seal before grading:
//                  grading must report an integrity failure
//   "exit_code"    gpulab grade's exit code (default 0)
//   "needs_sandbox" true: runs only where the grader's sandbox works (skipped, with the reason,
//                  elsewhere: unsandboxed, such a submission would damage this build)
//   "then"         {"base": "solutions", "score": 100}: graded next in the same build against
//                  the same seal (no --reseal), it must get this score: what the submission did
//                  changed nothing of the grading
// The seal is kept in the submission's temporary folder (gpulab grade --seal), not the user's.
// After grading, no test program of the submission and no process it started may be left.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpulab/grader/sandbox.hpp"
#include "planted.hpp"
#include "run_command.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path g_planted;  // the planted.json of this run

std::string read(const fs::path& path) {
  return gpulab::testing::read_text(path);
}

void write(const fs::path& path, const std::string& text) {
  gpulab::testing::write_text(path, text);
}

// spec[key], or `fallback` when absent.
json member(const json& spec, const char* key, json fallback) {
  return spec.contains(key) ? spec.at(key) : std::move(fallback);
}

// The pids of live processes whose command line contains `marker`.
std::vector<std::string> processes_with(const std::string& marker) {
  std::vector<std::string> found;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    std::string cmdline = read(entry.path() / "cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(marker) != std::string::npos) {
      found.push_back(name + ": " + cmdline);
    }
  }
  return found;
}

TEST(Planted, GetsExactlyItsExpectedVerdictsAndScore) {
  ASSERT_FALSE(g_planted.empty()) << "usage: gpulab.test.grading.planted <planted.json>";
  const json spec = json::parse(read(g_planted));
  const std::string name = g_planted.parent_path().filename().string();
  const fs::path source = GPULAB_SOURCE_DIR;

  std::string backend = "sim";
  const json backends = member(spec, "backends", json::array({"sim"}));
  if (std::find(backends.begin(), backends.end(), "sim") == backends.end()) {
    GTEST_SKIP() << name << " needs a CUDA device (backends: " << backends.dump() << ")";
  }

  if (spec.value("needs_sandbox", false)) {
    if (const std::optional<std::string> why = gpulab::sandbox_unavailable()) {
      GTEST_SKIP() << name << " needs the grader's sandbox: " << *why;
    }
  }

  // The submission: a copy of the base with the edits applied.
  const fs::path work =
      fs::temp_directory_path() / ("gpulab-planted-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(work);
  try {
    gpulab::testing::make_planted_submission(spec, g_planted.parent_path(), source, work);
  } catch (const std::exception& e) {
    FAIL() << name << ": " << e.what();
  }

  // The seal: written by this grading (--reseal), or first written and then tampered with, so
  // that it no longer matches the tree: the grading must stop with an integrity failure.
  const fs::path seal = work / "seal.sha256";
  const std::string sealed_by = " --seal " + gpulab::testing::shell_quote(seal.string());
  const std::string tampered = spec.value("tamper_seal", "");
  if (!tampered.empty()) {
    const gpulab::testing::Outcome sealing = gpulab::testing::run_command(
        gpulab::testing::shell_quote(GPULAB_EXE) + " grade lab03 --reseal --timeout 1" + sealed_by +
        " --submission " + gpulab::testing::shell_quote(work.string()));
    ASSERT_EQ(sealing.exit_code, 0) << sealing.out << sealing.err;
    std::string changed = read(seal);
    const std::size_t at = changed.find("  " + tampered + "\n");
    ASSERT_NE(at, std::string::npos) << tampered << " is not in " << seal;
    changed[at - 64] = changed[at - 64] == '0' ? '1' : '0';
    write(seal, changed);
  }

  const auto grade_command = [&](const fs::path& submission, const fs::path& report, bool reseal) {
    std::string command = gpulab::testing::shell_quote(GPULAB_EXE) + " grade";
    for (const json& lab : spec.at("labs")) {
      command += " " + lab.get<std::string>();
    }
    return command + " --submission " + gpulab::testing::shell_quote(submission.string()) +
           " --backend " + backend + sealed_by + (reseal ? " --reseal" : "") + " -j2 --timeout " +
           std::to_string(spec.at("timeout_s").get<int>()) + " --json " +
           gpulab::testing::shell_quote(report.string());
  };
  const fs::path report_path = work / "report.json";
  const std::string command = grade_command(work, report_path, tampered.empty());
  const auto start = std::chrono::steady_clock::now();
  const gpulab::testing::Outcome run = gpulab::testing::run_command(command);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << name << ": graded in " << seconds << " s\n";
  ASSERT_EQ(run.exit_code, spec.value("exit_code", 0)) << command << "\n" << run.out << run.err;
  const json report = json::parse(read(report_path));
  if (!tampered.empty()) {
    EXPECT_NE(report.at("integrity").at("changed").dump().find(tampered), std::string::npos)
        << report.at("integrity");
  }

  // Nothing the grading started survives it: not the test programs (killed at their time limit
  // when they hang) and not what they started.
  // (The programs this grading built, in its grading slot: not another grading's.)
  std::vector<std::string> markers = {"gpulab-planted-stray"};
  for (const json& lab : report.at("labs")) {
    markers.push_back(lab.at("program").get<std::string>());
  }
  for (const std::string& marker : markers) {
    EXPECT_TRUE(processes_with(marker).empty()) << "processes started by grading survived it:\n"
                                                << ::testing::PrintToString(processes_with(marker));
  }

  const std::string fallback = spec.at("default").get<std::string>();
  const json verdicts = member(spec, "verdicts", json::object());
  const json details = member(spec, "detail_contains", json::object());
  std::set<std::string> unresolved;  // verdicts this build's clock cannot decide
  if (!GPULAB_MODELED_CLOCK) {
    for (const json& test : member(spec, "modeled_clock_only", json::array())) {
      unresolved.insert(test.get<std::string>());
    }
  }
  std::set<std::string> seen;
  int unresolved_points = 0;
  for (const json& lab : report.at("labs")) {
    for (const json& test : lab.at("tests")) {
      const std::string test_name = test.at("name").get<std::string>();
      seen.insert(test_name);
      if (unresolved.contains(test_name)) {
        unresolved_points += test.at("points").get<int>();
        continue;
      }
      const std::string expected = verdicts.value(test_name, fallback);
      EXPECT_EQ(test.at("disposition").get<std::string>(), expected)
          << name << ": " << test_name << " (" << test.at("detail").get<std::string>() << ")";
      if (details.contains(test_name)) {
        const std::string said = test.at("detail").get<std::string>() + "\n" +
                                 test.at("excerpt").dump();  // what a student reads of it
        EXPECT_NE(said.find(details[test_name].get<std::string>()), std::string::npos)
            << name << ": " << test_name << " detail and excerpt: " << said;
      }
    }
    for (const auto& [key, spec_key] : {std::pair{"build_errors", "build_error_contains"},
                                        std::pair{"build_warnings", "build_warning_contains"},
                                        std::pair{"rejected_for", "rejected_for_contains"}}) {
      const json wanted = member(spec, spec_key, json::object());
      if (wanted.contains(lab.at("lab").get<std::string>())) {
        const std::string text = lab.at(key).dump();
        EXPECT_NE(text.find(wanted[lab.at("lab").get<std::string>()].get<std::string>()),
                  std::string::npos)
            << name << ": " << key << " of " << lab.at("lab") << ": " << text;
      }
    }
  }
  for (const auto& [test_name, verdict] : verdicts.items()) {
    EXPECT_TRUE(seen.contains(test_name)) << name << ": no test " << test_name << " in the report";
  }
  const int earned = report.at("earned").get<int>();
  const int score = spec.at("score").get<int>();
  EXPECT_TRUE(earned >= score && earned <= score + unresolved_points)
      << name << ": score " << earned << ", expected " << score
      << (unresolved_points > 0 ? " to " + std::to_string(score + unresolved_points) : "") << "\n"
      << run.out;
  if (spec.contains("ignored_contains")) {
    EXPECT_NE(report.at("ignored").dump().find(spec["ignored_contains"].get<std::string>()),
              std::string::npos)
        << name << ": ignored files: " << report.at("ignored");
  }
  for (const json& text : member(spec, "report_excludes", json::array())) {
    for (const std::string& said : {report.dump(), run.out + run.err}) {
      EXPECT_EQ(said.find(text.get<std::string>()), std::string::npos)
          << name << ": \"" << text.get<std::string>() << "\" reached the report:\n"
          << said;
    }
  }

  // The next submission, graded in the same build against the same seal.
  if (spec.contains("then")) {
    const json& then = spec.at("then");
    const fs::path next = work / "next";
    fs::create_directories(next);
    fs::copy(source / then.at("base").get<std::string>(), next, fs::copy_options::recursive);
    const fs::path next_report = work / "next-report.json";
    const std::string next_command = grade_command(next, next_report, false);
    const gpulab::testing::Outcome graded = gpulab::testing::run_command(next_command);
    ASSERT_EQ(graded.exit_code, 0) << "the next submission: " << next_command << "\n"
                                   << graded.out << graded.err;
    EXPECT_EQ(json::parse(read(next_report)).at("earned").get<int>(), then.at("score").get<int>())
        << name << ": the next submission's score\n"
        << graded.out;
  }
  if (!HasFailure()) {
    fs::remove_all(work);
  }
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc > 1) {
    g_planted = argv[1];
  }
  return RUN_ALL_TESTS();
}
