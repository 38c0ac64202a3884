// One grading of lab code (gpulab/grader/session.hpp).
#include "gpulab/grader/session.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "gpulab/core/exit_codes.hpp"
#include "gpulab/core/files.hpp"
#include "gpulab/core/results.hpp"
#include "gpulab/grader/grades.hpp"
#include "gpulab/grader/lab_code_check.hpp"
#include "gpulab/grader/lockdown.hpp"
#include "gpulab/grader/manifest.hpp"
#include "gpulab/grader/process.hpp"
#include "gpulab/grader/report.hpp"
#include "gpulab/grader/sandbox.hpp"
#include "gpulab/grader/seal.hpp"
#include "gpulab/grader/sha256.hpp"
#include "gpulab/grader/staging.hpp"
#include "gpulab/grader/workspace.hpp"

namespace gpulab {

namespace {

namespace fs = std::filesystem;

// How long past a test's time limit its runner may take to kill it and write the verdict.
constexpr double kRunnerGraceS = 30;

// Submitted files that are instructor files and differ from the instructor's copy: they are not
// used, and the report says so. A submission is either a copy of the tree (it has labs/) or a
// folder of lab folders, which can only hold copies of labs/ files.
std::vector<std::string> changed_instructor_copies(const fs::path& root,
                                                   const std::vector<SealedFile>& seal) {
  const bool whole_tree = fs::is_directory(root / "labs");
  std::vector<std::string> ignored;
  for (const SealedFile& file : seal) {
    fs::path candidate;
    if (whole_tree) {
      candidate = root / file.path;
    } else if (file.path.starts_with("labs/") && file.path.find('/', 5) != std::string::npos) {
      candidate = root / file.path.substr(5);  // labs/<lab folder>/<file>
    } else {
      continue;
    }
    std::error_code error;
    if (!fs::path(file.path).is_absolute() &&
        fs::is_regular_file(fs::symlink_status(candidate, error)) &&
        sha256_file(candidate) != file.sha256) {
      ignored.push_back(file.path + ": differs from the instructor's copy (not used)");
    }
  }
  return ignored;
}

void print_integrity(const IntegrityCheck& check, const fs::path& seal) {
  std::cout << "gpulab grade: INTEGRITY FAILURE: the instructor files differ from the seal ("
            << seal.string() << ")\n";
  const auto list = [](const char* what, const std::vector<std::string>& files) {
    for (std::size_t i = 0; i < files.size() && i < 20; ++i) {
      std::cout << "  " << what << ": " << files[i] << "\n";
    }
    if (files.size() > 20) {
      std::cout << "  ... and " << files.size() - 20 << " more " << what << "\n";
    }
  };
  list("changed", check.changed);
  list("missing", check.missing);
  list("added", check.added);
  std::cout << "Restore them (e.g. git checkout), or accept the current files with --reseal.\n";
}

// The seal's file: --seal, or the user's state folder.
fs::path seal_path(const GradeOptions& options, const fs::path& build) {
  if (!options.seal.empty()) {
    return fs::absolute(options.seal);
  }
  const char* state = std::getenv("XDG_STATE_HOME");
  const char* home = std::getenv("HOME");
  return default_seal_path(build, state == nullptr ? "" : state, home == nullptr ? "" : home);
}

// One grading, as steps: the seal is checked (or written), each lab's student files are staged
// and its graded suite built, the graded tests run (each through the test runner) and graded from
// their verdicts, and the seal is checked once more. Every step fills `report_`; finish()
// totals, prints and saves it whatever happened.
class Grading {
 public:
  explicit Grading(const GradeOptions& options)
      : options_(options),
        prefix_("gpulab " + options.command + ": "),
        manifest_(build_manifest()),
        labs_(select_labs(manifest_, options.labs)),
        backend_(choose_backend(manifest_, options.backend, options.cuda)),
        root_(options.submission.empty() ? manifest_.source_dir / "labs"
                                         : fs::path(options.submission)),
        build_(build_dir()),
        grading_(build_ / "grading"),
        seal_path_(options.for_record ? seal_path(options, build_) : fs::path()),
        jobs_(options.jobs > 0
                  ? options.jobs
                  : std::max(1, static_cast<int>(std::thread::hardware_concurrency()))),
        // On a GPU the graded tests time kernels, and two test processes sharing the GPU take
        // turns on it: each would time the other's work too (seen on an H200: samples 1.5 to 6x
        // their launches' length with 16 at a time). One at a time unless --jobs says otherwise.
        test_jobs_(options.test_jobs > 0 ? options.test_jobs
                   : options.jobs > 0    ? options.jobs
                   : backend_ == "cuda"  ? 1
                                         : jobs_) {
    if (options.timeout_s > manifest_.test_timeout_s) {
      throw UsageError("--timeout " + std::to_string(options.timeout_s) +
                       " is above the build's limit of " +
                       std::to_string(manifest_.test_timeout_s) +
                       " s (reconfigure with -DGPULAB_LAB_TEST_TIMEOUT=...)");
    }
    if (!fs::is_directory(root_)) {
      throw UsageError("--submission " + root_.string() + ": no such directory");
    }
    (void)graded_test_environment(LabRun{}, backend_, options_);  // --sanitize's problems first
    take_slot();
    const ResultsContext context = make_context(backend_, "", "");
    report_.submission = fs::absolute(root_).lexically_normal().string();
    report_.backend = backend_;
    report_.date = context.date;
    report_.gpulab_version = context.gpulab_version;
    for (const LabEntry* lab : labs_) {
      const LabRun* run = find_run(*lab, "submission", backend_, slot_);
      if (run == nullptr || run->tests.empty()) {
        throw std::runtime_error(lab->id + " has no graded tests in this build (configured " +
                                 "with GPULAB_BUILD_TESTS=OFF?)");
      }
      runs_.push_back(run);
      // On cuda, the counted tests run from the sim build of the same files (grading_run).
      const LabRun* sim = nullptr;
      for (const GradedTest& test : run->tests) {
        if (const LabRun* other = grading_run(*lab, test, backend_, slot_); other != run) {
          sim = other;
        }
      }
      sim_runs_.push_back(sim);
      LabGrade grade{lab->id, lab->title, 0, 0, run->tests_program.string(), {}, {}, {}, {}, {}};
      for (const GradedTest& test : run->tests) {
        grade.tests.push_back(grade_test(test, TestOutcome::missing, std::nullopt));
      }
      report_.labs.push_back(std::move(grade));
    }
  }

  Grading(const Grading&) = delete;
  Grading& operator=(const Grading&) = delete;

  [[nodiscard]] std::size_t lab_count() const { return labs_.size(); }

  // 1. The instructor files against the seal; the seal written instead on the first grading of
  // this build or with --reseal. False (every test not run) when they differ.
  bool check_seal() {
    // What grading runs of the build is sealed too: built first, so that a rebuild (after an
    // edit or a commit: the version it reports) happens before the seal, not during the grading.
    if (const ProcessResult built = build(fs::path(manifest_.grade_runner).filename().string());
        !built.started || built.timed_out || built.exit_code != 0) {
      throw std::runtime_error("the test runner did not build:\n" +
                               (built.started ? built.output : built.start_error));
    }
    if (!options_.for_record) {
      say_what_is_graded();
      return true;
    }
    if (const std::optional<std::string> text = read_file(seal_path_); text && !options_.reseal) {
      seal_ = parse_seal(*text, seal_path_.string());
      report_.integrity = check_integrity(manifest_, seal_);
      if (!report_.integrity.ok()) {
        print_integrity(report_.integrity, seal_path_);
        mark_all(Disposition::not_run, "integrity failure: the instructor files changed");
        report_.problems.push_back("integrity failure before grading; nothing was graded");
        return false;
      }
    } else {
      seal_ = seal_files(manifest_, instructor_files(manifest_));
      write_file_atomically(seal_path_, format_seal(seal_));
      report_.integrity.checked = true;
      std::cout << prefix_ << "sealed " << seal_.size() << " instructor files in "
                << seal_path_.string()
                << " (later gradings check them; --reseal after editing them; the labs' student "
                   "files are never sealed)\n";
    }
    report_.ignored = changed_instructor_copies(root_, seal_);
    say_what_is_graded();
    return true;
  }

  // 1b. Whether the graded tests run in the sandbox (sandbox.hpp): where bubblewrap works,
  // unless --no-sandbox; said once either way.
  void choose_sandbox() {
    const std::optional<std::string> unavailable =
        options_.no_sandbox ? std::optional<std::string>("--no-sandbox") : sandbox_unavailable();
    sandboxed_ = !unavailable;
    report_.sandbox = sandboxed_ ? "bubblewrap" : "none: " + *unavailable;
    if (sandboxed_) {
      std::cout << prefix_
                << "the tests run in a sandbox (bubblewrap): the system's programs and libraries "
                   "read-only, each test's own program and results folder, nothing else of the "
                   "machine, no network"
                << std::endl;
    } else {
      std::cout << prefix_ << "WARNING: the tests run UNSANDBOXED (" << *unavailable
                << "): the code under test can write the build and read solutions/ and the "
                   "hidden suites; not for grades of record"
                << std::endl;
    }
    // The test programs lock themselves down (lockdown.hpp); whether they can here.
    const std::optional<std::string> unlocked = lockdown_unavailable();
    report_.lockdown = unlocked ? "none: " + *unlocked : "seccomp";
    if (unlocked) {
      std::cout << prefix_ << "WARNING: the test processes cannot be locked down here ("
                << *unlocked << "): lab code could start programs and processes" << std::endl;
    }
  }

  // 2. Lab `i`'s student files staged into the build and its graded suite built. False (every
  // test of the lab build_failed) when a file is missing or the build fails.
  bool build_lab(std::size_t i) {
    const LabEntry& lab = *labs_[i];
    std::cout << "  building " << lab.id << " ... " << std::flush;
    std::vector<std::string> missing;
    std::vector<std::string> refused;
    for (const std::string& file : lab.student_files) {
      const std::optional<fs::path> found = find_student_file(root_, lab, file);
      if (!found) {
        missing.push_back("the submission has no labs/" + lab.dir + "/" + file);
        continue;
      }
      if (std::optional<std::string> problem = submitted_file_problem(root_, *found)) {
        refused.push_back(std::move(*problem));
        continue;
      }
      locate_functions(i, root_ / *found);
      const fs::path staged = runs_[i]->files_dir / file;
      stage_student_file(root_ / *found, staged);
      // Compiled again even when unchanged, so the report lists its warnings every time.
      fs::last_write_time(staged, fs::file_time_type::clock::now());
    }
    if (!refused.empty()) {
      std::cout << "refused\n";
      reject(i, std::move(refused));
      return false;
    }
    if (!missing.empty()) {
      std::cout << "missing files\n";
      build_failed(i, missing);
      return false;
    }
    const ProcessResult built = build(runs_[i]->tests_target);
    const fs::path log = slot_dir_ / "build" / (lab.id + ".log");
    write_file_atomically(log, built.output);
    if (std::vector<std::string> failure = build_failure(built); !failure.empty()) {
      std::cout << "did not compile (" << log.string() << ")\n";
      // Compiler errors quote the files they are in: not shown for a file it must not include.
      std::vector<std::string> findings;
      try {
        findings = check_lab_sources(manifest_, lab, *runs_[i], build_, runs_[i]->files_dir);
      } catch (const std::exception&) {
        // Its includes cannot be listed (one is missing): the compiler's errors say which.
      }
      if (!findings.empty()) {
        reject(i, std::move(findings));
        return false;
      }
      build_failed(i, std::move(failure));
      return false;
    }
    report_.labs[i].build_warnings = compiler_warnings(built.output);
    std::cout << "ok (" << static_cast<int>(built.duration_s) << " s"
              << (report_.labs[i].build_warnings.empty() ? "" : ", with warnings") << ")"
              << std::endl;
    if (!check_code(i, *runs_[i])) {
      return false;
    }
    prepare_to_run(*runs_[i]);
    return sim_runs_[i] == nullptr || build_sim_run(i);
  }

  // 2c. In a cuda grading, lab `i`'s sim build, which runs its counted tests: when it does not
  // compile, those tests fail and the others are graded; code that breaks a rule in it rejects
  // the lab, as in the cuda build. False when the lab is rejected.
  bool build_sim_run(std::size_t i) {
    const LabRun& run = *sim_runs_[i];
    std::cout << "  building " << labs_[i]->id << " for the sim (its counted tests) ... "
              << std::flush;
    const ProcessResult built = build(run.tests_target);
    const fs::path log = slot_dir_ / "build" / (labs_[i]->id + ".sim.log");
    write_file_atomically(log, built.output);
    if (const std::vector<std::string> failure = build_failure(built); !failure.empty()) {
      std::cout << "did not compile (" << log.string() << ")\n";
      for (std::size_t k = 0; k < runs_[i]->tests.size(); ++k) {
        Verdict& verdict = report_.labs[i].tests[k].verdict;
        if (runs_[i]->tests[k].counted && verdict.disposition != Disposition::rejected) {
          verdict = {
              Disposition::build_failed,
              "its sim build (which runs the counted tests) did not compile: " + failure.front(),
              {}};
        }
      }
      return true;
    }
    std::cout << "ok (" << static_cast<int>(built.duration_s) << " s)" << std::endl;
    if (!check_code(i, run)) {
      return false;
    }
    prepare_to_run(run);
    return true;
  }

  // No verdict of an earlier grading can count, and the program under test is sealed too: a
  // test that rewrote it could pass the next test.
  void prepare_to_run(const LabRun& run) {
    fs::remove_all(run.results_dir);
    programs_.push_back({run.tests_program.string(), sha256_file(run.tests_program)});
  }

  // Where the functions lab `i`'s tests cover are defined in the student's `file`, for the
  // feedback: "labs/lab01_benchmarking/benchmark.cu:27", relative to the current folder when
  // inside it.
  void locate_functions(std::size_t i, const fs::path& file) {
    const std::optional<std::string> text = read_file(file);
    if (!text) {
      return;  // staging says why
    }
    std::error_code error;
    fs::path shown = fs::absolute(file, error).lexically_normal();
    if (const fs::path relative = shown.lexically_relative(fs::current_path(error));
        !relative.empty() && *relative.begin() != "..") {
      shown = relative;
    }
    LabGrade& grade = report_.labs[i];
    for (const TestGrade& test : grade.tests) {
      for (const std::string& function : test.covers) {
        if (grade.defined_at.contains(function)) {
          continue;
        }
        if (const std::optional<int> line = definition_line(*text, function)) {
          grade.defined_at[function] = shown.string() + ":" + std::to_string(*line);
        }
      }
    }
  }

  // 2b. The object code and includes of lab `i`'s student files, as `run` built them, against
  // what lab code must not do (code_checks.hpp). False (every test of the lab rejected, none run)
  // when it breaks a rule.
  bool check_code(std::size_t i, const LabRun& run) {
    const LabEntry& lab = *labs_[i];
    LabGrade& grade = report_.labs[i];
    std::vector<std::string> findings;
    try {
      LabCodeCheck checked = check_lab_code(manifest_, lab, run, build_, run.files_dir);
      findings = std::move(checked.findings);
      for (std::string& line : reject_forbidden_calls(grade, lab, checked.forbidden_calls)) {
        findings.push_back(std::move(line));
      }
    } catch (const std::exception& e) {
      findings = {std::string("its code could not be checked: ") + e.what()};
      report_.problems.push_back(lab.id + ": " + findings.front());
    }
    if (findings.empty()) {
      for (const TestGrade& test : grade.tests) {
        if (test.verdict.disposition == Disposition::rejected) {
          std::cout << "  " << lab.id << " " << test.name << " rejected: " << test.verdict.detail
                    << std::endl;
        }
      }
      return true;
    }
    reject(i, std::move(findings));
    return false;
  }

  // Lab `i` graded no further: every test rejected for the first of `findings`, all listed.
  void reject(std::size_t i, std::vector<std::string> findings) {
    std::cout << "  " << labs_[i]->id << " rejected: " << findings.front() << std::endl;
    LabGrade& grade = report_.labs[i];
    grade.rejected_for = std::move(findings);
    for (TestGrade& test : grade.tests) {
      test.verdict = {Disposition::rejected, grade.rejected_for.front(), {}};
    }
  }

  // 3. and 4. Every graded test of the labs `built`, `jobs_` at a time, each through the test
  // runner as ctest runs it; each graded from the runner's exit and its verdict file. The
  // runners' output goes to one log, test by test.
  void run_graded_tests(const std::vector<std::size_t>& built) {
    struct Case {
      std::size_t lab;
      std::size_t test;
    };
    std::vector<Case> cases;
    for (const std::size_t i : built) {
      for (std::size_t k = 0; k < runs_[i]->tests.size(); ++k) {
        const Disposition already = report_.labs[i].tests[k].verdict.disposition;
        if (already != Disposition::rejected && already != Disposition::build_failed) {
          cases.push_back({i, k});  // not those failed for a forbidden call or a sim build
        }
      }
    }
    const double timeout_s =
        options_.timeout_s > 0 ? options_.timeout_s : static_cast<double>(manifest_.test_timeout_s);
    const fs::path log = slot_dir_ / "tests.log";
    // On a GPU the tests of two gradings would time each other's kernels, as two tests would:
    // a lock per GPU (by UUID: the same whatever CUDA_VISIBLE_DEVICES calls it, and unique
    // across the nodes of a cluster sharing this build), so gradings on other GPUs go on.
    std::optional<FileLock> gpu;
    if (backend_ == "cuda" && !cases.empty()) {
      const DeviceQuery query = options_.cuda();  // choose_backend chose cuda: it is there
      const std::string uuid = query.usable() ? query.devices.front().uuid : "unknown";
      gpu.emplace(wait_for_lock(
          grading_ / ("gpu-" + uuid + ".lock"),
          prefix_ + "waiting for another grading's tests on this GPU (" + uuid + ") to finish"));
    }
    std::cout << "  running " << cases.size() << " graded tests, " << test_jobs_
              << (test_jobs_ == 1 && backend_ == "cuda" ? " at a time (the GPU is shared by all)"
                                                        : " at a time")
              << " (their output: " << log.string() << ")" << std::endl;
    std::vector<std::string> outputs(cases.size());
    std::mutex mutex;  // guards `next`, `done` and the console
    std::size_t next = 0;
    std::size_t done = 0;
    const auto work = [&] {
      for (;;) {
        std::size_t c = 0;
        {
          const std::lock_guard lock(mutex);
          if (next == cases.size()) {
            return;
          }
          c = next++;
        }
        const GradedTest& test = runs_[cases[c].lab]->tests[cases[c].test];
        const LabRun* graded_by = grading_run(*labs_[cases[c].lab], test, backend_, slot_);
        const LabRun& run = graded_by != nullptr ? *graded_by : *runs_[cases[c].lab];
        ProcessSpec spec;
        spec.argv = runner_command(manifest_, run, test, timeout_s, sandboxed_ ? "on" : "off");
        spec.env = graded_test_environment(run, backend_, options_);
        spec.timeout_s = timeout_s + kRunnerGraceS;  // the runner's own limit comes first
        const ProcessResult ran = run_process(spec);
        report_.labs[cases[c].lab].tests[cases[c].test] =
            grade_test(test, runner_outcome(ran), read_verdict(run, test));
        const Verdict& verdict = report_.labs[cases[c].lab].tests[cases[c].test].verdict;
        const std::lock_guard lock(mutex);
        if (!ran.started && report_.problems.empty()) {
          report_.problems.push_back("the test runner did not start: " + ran.start_error);
        }
        outputs[c] = "==== " + labs_[cases[c].lab]->id + " " + test.name + ": " +
                     std::string(to_string(verdict.disposition)) + "\n" + ran.output + "\n";
        ++done;
        if (options_.each_test) {
          std::cout << "  [" << done << "/" << cases.size() << "] " << labs_[cases[c].lab]->id
                    << " " << test.name << ": " << display_name(verdict.disposition) << std::endl;
        }
      }
    };
    std::vector<std::thread> workers;
    for (int w = 0; w < std::min<int>(test_jobs_, static_cast<int>(cases.size())); ++w) {
      workers.emplace_back(work);
    }
    for (std::thread& worker : workers) {
      worker.join();
    }
    std::string text;
    for (const std::string& output : outputs) {
      text += output;
    }
    write_file_atomically(log, text);
  }

  // 5. The instructor files and the graded programs once more: false (no points) when the
  // graded code changed them.
  bool recheck_seal() {
    if (!options_.for_record) {
      return true;
    }
    std::vector<SealedFile> sealed = seal_;
    sealed.insert(sealed.end(), programs_.begin(), programs_.end());
    const IntegrityCheck after = check_integrity(manifest_, sealed);
    if (after.ok()) {
      return true;
    }
    report_.integrity = after;
    print_integrity(after, seal_path_);
    mark_all(Disposition::failed,
             "integrity failure: instructor files changed while this submission was graded");
    report_.problems.push_back("the instructor files changed during grading; no points given");
    return false;
  }

  // The report totalled, with `code`, or kFailure for a grading with problems that would
  // otherwise succeed.
  GradingResult finish(int code) {
    for (LabGrade& lab : report_.labs) {
      total_lab(lab);
    }
    // The staged copies of the submission go: the next grading in this slot finds none of them.
    for (std::size_t i = 0; i < labs_.size(); ++i) {
      for (const std::string& file : labs_[i]->student_files) {
        std::error_code error;
        fs::remove(runs_[i]->files_dir / file, error);
      }
    }
    const int exit_code = code == kSuccess && !report_.problems.empty() ? kFailure : code;
    return {std::move(report_), exit_code};
  }

 private:
  void say_what_is_graded() const {
    std::cout << prefix_ << report_.submission << ", " << labs_.size() << " lab(s), " << backend_
              << " backend, grading slot " << slot_ << " of " << manifest_.grading_slots.size()
              << std::endl;
  }

  ProcessResult build(const std::string& target) const {
    return build_target(target, jobs_, kBuildTimeoutS,
                        prefix_ + "waiting for another build in this build folder");
  }

  // A free grading slot of the build, waited for when every slot is grading: its lock held in
  // slot_lock_ until this grading ends.
  void take_slot() {
    if (manifest_.grading_slots.empty()) {
      throw std::runtime_error(
          "this build has no grading slots (configured with "
          "GPULAB_BUILD_TESTS=OFF?)");
    }
    bool said = false;
    for (;;) {
      for (std::size_t s = 0; s < manifest_.grading_slots.size(); ++s) {
        FileLock lock(manifest_.grading_slots[s] / "grade.lock", false);
        if (lock.held()) {
          slot_lock_.emplace(std::move(lock));
          slot_ = static_cast<int>(s);
          slot_dir_ = manifest_.grading_slots[s];
          return;
        }
      }
      if (!said) {
        std::cout << prefix_ << "all " << manifest_.grading_slots.size()
                  << " grading slots of this build are in use (GPULAB_GRADING_SLOTS); waiting "
                     "for one"
                  << std::endl;
        said = true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }

  // The runner's verdict of `test`; nullopt when it wrote none.
  static std::optional<Verdict> read_verdict(const LabRun& run, const GradedTest& test) {
    const fs::path file = run.results_dir / (test.name + ".verdict.json");
    const std::optional<std::string> text = read_file(file);
    if (!text) {
      return std::nullopt;
    }
    try {
      return parse_verdict_json(*text, file.string());
    } catch (const std::exception& e) {
      return Verdict{Disposition::failed, e.what(), {}};
    }
  }

  void build_failed(std::size_t i, std::vector<std::string> errors) {
    LabGrade& grade = report_.labs[i];
    grade.build_errors = std::move(errors);
    for (TestGrade& test : grade.tests) {
      test.verdict = {Disposition::build_failed, grade.build_errors.front(), {}};
    }
  }

  void mark_all(Disposition disposition, const std::string& detail) {
    for (LabGrade& lab : report_.labs) {
      for (TestGrade& test : lab.tests) {
        test.earned = 0;
        test.verdict = {disposition, detail, {}};
      }
    }
  }

  const GradeOptions& options_;
  std::string prefix_;  // of every line this grading prints
  LabManifest manifest_;
  std::vector<const LabEntry*> labs_;
  std::string backend_;
  fs::path root_;
  fs::path build_;
  fs::path grading_;
  fs::path seal_path_;
  int jobs_;       // builds
  int test_jobs_;  // graded tests at a time
  std::optional<FileLock> slot_lock_;
  int slot_ = 0;
  fs::path slot_dir_;
  std::vector<const LabRun*> runs_;
  std::vector<const LabRun*> sim_runs_;  // per lab: the sim run of its counted tests, or nullptr
  std::vector<SealedFile> seal_;
  std::vector<SealedFile> programs_;  // the graded test programs, as built
  bool sandboxed_ = false;
  GradeReport report_;
};

}  // namespace

std::vector<std::pair<std::string, std::string>> graded_test_environment(
    const LabRun& run, const std::string& backend, const GradeOptions& options) {
  std::vector<std::pair<std::string, std::string>> environment = run.environment;
  if (options.sanitize) {
    if (options.for_record) {
      throw UsageError(
          "--sanitize is for `gpulab check`: a grade of record runs the tests as "
          "they are written");
    }
    if (backend != "sim") {
      throw UsageError(
          "--sanitize checks launches on the sim backend (on a GPU, run the program "
          "under compute-sanitizer)");
    }
    std::erase_if(environment,
                  [](const auto& entry) { return entry.first == "GPULAB_SIM_SANITIZE"; });
    environment.emplace_back("GPULAB_SIM_SANITIZE", "1");
  }
  return environment;
}

GradingResult grade_submission(const GradeOptions& options) {
  Grading grading(options);
  if (!grading.check_seal()) {
    return grading.finish(kIntegrityFailure);
  }
  grading.choose_sandbox();
  std::vector<std::size_t> built;
  for (std::size_t i = 0; i < grading.lab_count(); ++i) {
    if (grading.build_lab(i)) {
      built.push_back(i);
    }
  }
  grading.run_graded_tests(built);
  if (!grading.recheck_seal()) {
    return grading.finish(kIntegrityFailure);
  }
  return grading.finish(kSuccess);
}

void print_failures(std::ostream& out, const LabGrade& lab, bool brief) {
  if (!lab.build_errors.empty()) {
    out << "  did not compile; the compiler's first errors:\n";
    for (const std::string& line : lab.build_errors) {
      out << "    " << line << "\n";
    }
  }
  if (!lab.rejected_for.empty()) {
    out << "  rejected before any test ran (lab code must not do this):\n";
    for (const std::string& line : lab.rejected_for) {
      out << "    " << line << "\n";
    }
  }
  if (!lab.build_warnings.empty() && !brief) {
    out << "  compiler warnings (worth fixing; no points lost):\n";
    for (const std::string& line : lab.build_warnings) {
      out << "    " << line << "\n";
    }
  }
  if (!lab.build_errors.empty() || !lab.rejected_for.empty()) {
    return;  // every test says "build failed" or "rejected"; the reasons are above
  }
  for (const TestGrade& test : lab.tests) {
    if (test.verdict.disposition == Disposition::passed) {
      continue;
    }
    out << "  " << display_name(test.verdict.disposition) << "  " << test.name << "  "
        << test.earned << "/" << test.points << (test.hidden ? " (hidden)" : "") << "\n";
    if (brief) {
      out << "      " << test.verdict.detail << "\n";
      continue;
    }
    out << "      checks:    " << test.checks << "\n";
    std::string code;
    for (const std::string& function : test.covers) {
      const auto at = lab.defined_at.find(function);
      code += (code.empty() ? "" : ", ") + function + " (" +
              (at == lab.defined_at.end() ? std::string("not found in your files") : at->second) +
              ")";
    }
    out << "      your code: " << code << "\n";
    if (!test.verdict.detail.empty()) {
      out << "      why:       " << test.verdict.detail << "\n";
    }
    // The failure's lines, without gtest's locations (in the test's file, which is not where the
    // student looks), unless they only repeat the exception the detail names.
    std::vector<std::string> lines;
    for (const std::string& line : test.verdict.excerpt) {
      if (!is_failure_location(line)) {
        lines.push_back(line);
      }
    }
    const bool only_the_exception = test.verdict.detail.starts_with("exception: ") &&
                                    std::ranges::all_of(lines, [](const std::string& line) {
                                      return line.starts_with("C++ exception with description");
                                    });
    for (const std::string& line : only_the_exception ? std::vector<std::string>{} : lines) {
      out << "        | " << line << "\n";
    }
  }
}

}  // namespace gpulab
