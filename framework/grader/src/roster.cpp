// `gpulab grade --roster DIR` (roster.hpp): the submissions of a roster folder and their stamps,
// and a class graded here, N at a time, until SIGINT or SIGTERM; the run's state is
// roster_run.hpp, its Slurm rounds roster_slurm.cpp, its class files roster_gradebook.cpp.
#include "gpulab/grader/roster.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "gpulab/core/console.hpp"
#include "gpulab/core/device_info.hpp"
#include "gpulab/core/exit_codes.hpp"
#include "gpulab/core/files.hpp"
#include "gpulab/grader/process.hpp"
#include "gpulab/grader/sha256.hpp"
#include "gpulab/grader/workspace.hpp"
#include "roster_run.hpp"

namespace gpulab {

namespace {

namespace fs = std::filesystem;
using detail::folder_name_for;
using detail::Roster;

// The longest one submission's grading may take, per lab graded: its build and every test's time
// limit fit in it many times over; past it the grading is killed and counted as failed.
constexpr double kGradingLimitPerLabS = 3600;

std::string trim(std::string text) {
  const auto not_space = [](unsigned char c) {
    return c != ' ' && c != '\t' && c != '\r' && c != '\n';
  };
  text.erase(text.begin(), std::find_if(text.begin(), text.end(), not_space));
  text.erase(std::find_if(text.rbegin(), text.rend(), not_space).base(), text.end());
  if (text.size() >= 2 && (text.front() == '\'' || text.front() == '"') &&
      text.back() == text.front()) {
    text = text.substr(1, text.size() - 2);
  }
  return text;
}

// The submitter of each submission_<id> folder in a Gradescope export's submission_metadata.yml:
// its first submitter's :email:, else :name:. Only these keys are read, line by line.
std::map<std::string, std::string> gradescope_names(const std::string& text) {
  std::map<std::string, std::string> email;
  std::map<std::string, std::string> name;
  std::string folder;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.front() != ' ' && line.front() != '-' && line.back() == ':') {
      folder = trim(line.substr(0, line.size() - 1));
      continue;
    }
    const std::string item = trim(line);
    const std::pair<std::string, std::map<std::string, std::string>*> keys[] = {{":email:", &email},
                                                                                {":name:", &name}};
    for (const auto& [key, into] : keys) {
      const std::size_t at = item.find(key);
      if (!folder.empty() && at != std::string::npos && (at == 0 || item.rfind("- ", 0) == 0)) {
        const std::string value = trim(item.substr(at + key.size()));
        if (!value.empty()) {
          into->emplace(folder, value);  // the first submitter's
        }
      }
    }
  }
  for (const auto& [folder_name, value] : email) {
    name[folder_name] = value;
  }
  return name;
}

}  // namespace

namespace detail {

std::atomic<bool> g_interrupted{false};

void on_interrupt(int /*signal*/) {
  g_interrupted.store(true);
}

std::string folder_name_for(const std::string& name) {
  std::string safe;
  for (const char c : name) {
    safe += c == '/' || c == '\\' || c == '\0' ? '_' : c;
  }
  if (safe.empty() || safe.front() == '.') {
    safe.insert(safe.begin(), '_');
  }
  return safe;
}

Roster::Roster(const RosterOptions& options) : options_(options), manifest_(build_manifest()) {
  const LabManifest& manifest = manifest_;
  lab_entries_ = select_labs(manifest, options.grading.labs);
  for (const LabEntry* lab : lab_entries_) {
    labs_.push_back(lab->id);
  }
  backend_ = choose_backend(manifest, options.grading.backend, options.grading.cuda);
  const int slots = static_cast<int>(manifest.grading_slots.size());
  if (slots == 0) {
    throw std::runtime_error(
        "this build has no grading slots (configured with "
        "GPULAB_BUILD_TESTS=OFF?)");
  }
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  // Here, on cuda, one grading per GPU: its tests time kernels, so each grading gets a GPU of
  // its own (CUDA_VISIBLE_DEVICES). On Slurm each task has a node (and GPU) of its own, but
  // all share the build's grading slots.
  const bool local_cuda = backend_ == "cuda" && !options.slurm && options.task < 0;
  if (local_cuda) {
    gpus_ = grading_gpus(options.grading.cuda());  // choose_backend chose cuda: it is there
  }
  const int gpus = std::max(1, static_cast<int>(gpus_.size()));
  const int fits = options.slurm ? slots
                   : local_cuda  ? std::min(slots, gpus)
                                 : std::min(slots, cores);
  if (local_cuda && options.parallel == 0 && slots < gpus) {
    std::cout << "gpulab grade: " << gpus << " GPUs but this build has " << slots
              << " grading slots: grading " << slots << " at a time (configure with "
              << "-DGPULAB_GRADING_SLOTS=" << gpus << " to use every GPU)\n";
  }
  parallel_ = options.task >= 0 ? 1 : options.parallel > 0 ? options.parallel : fits;
  if (parallel_ > slots) {
    std::cout << "gpulab grade: -j " << parallel_ << " but this build has " << slots
              << " grading slots (GPULAB_GRADING_SLOTS): grading " << slots << " at a time\n";
    parallel_ = slots;
  }
  if (local_cuda && parallel_ > gpus) {
    std::cout << "gpulab grade: -j " << parallel_ << " but " << gpus
              << " GPU(s) to grade on, and two gradings on one GPU would time each other's "
                 "kernels: grading "
              << gpus << " at a time\n";
    parallel_ = gpus;
  }
  // Builds take turns (a lock in the build's grading folder). On sim the cores are divided
  // among the gradings' tests; on cuda each build leaves a core to the test process of each
  // other grading, whose timings a busy core would stretch.
  jobs_per_grading_ =
      backend_ == "cuda" ? std::max(1, cores - (parallel_ - 1)) : std::max(1, cores / parallel_);
  const fs::path roster = fs::absolute(options.roster).lexically_normal();
  out_ = options.out.empty() ? roster.parent_path() / (roster.filename().string() + "-grades")
                             : fs::absolute(options.out).lexically_normal();
  submissions_ = find_roster(roster);
  slurm_.emplace(out_ / "slurm");
  if (out_ == roster || (out_.string() + "/").rfind(roster.string() + "/", 0) == 0) {
    throw UsageError("--out " + out_.string() + " is inside the roster " + roster.string() +
                     ": it would be graded as a submission");
  }
}

int Roster::run() {
  if (options_.task >= 0) {
    return run_task();
  }
  if (options_.collect) {
    return collect();
  }
  std::size_t kept = 0;
  std::vector<Job> pending = pending_jobs(kept);
  std::cout << "gpulab grade: roster " << options_.roster << ": " << submissions_.size()
            << " submission(s), " << labs_.size() << " lab(s), " << backend_ << " backend; " << kept
            << " already graded and unchanged (kept; --regrade grades them again), "
            << pending.size() << " to grade" << (options_.slurm ? " on Slurm, " : ", ") << parallel_
            << " at a time" << (gpus_.empty() ? "" : ", a GPU each") << "; grades in "
            << out_.string() << std::endl;
  if (options_.slurm) {
    return submit_to_slurm(pending);
  }

  const InterruptHandlers handlers;
  const auto start = std::chrono::steady_clock::now();
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < std::min<int>(parallel_, static_cast<int>(pending.size())); ++w) {
    workers.emplace_back([&, w] {
      const std::string gpu = gpus_.empty() ? "" : gpus_[static_cast<std::size_t>(w)];
      for (std::size_t i = next++; i < pending.size() && !stop_now(); i = next++) {
        grade_one(pending[i], pending.size(), start, gpu);
      }
    });
  }
  for (std::thread& worker : workers) {
    worker.join();
  }
  write_class_files();
  return ending(pending.size());
}

int Roster::ending(std::size_t count) const {
  if (g_interrupted) {
    std::cout << "\ngpulab grade: interrupted: " << done_ << " of " << count
              << " graded this run and kept; the same command grades the rest" << std::endl;
    return kInterrupted;
  }
  if (integrity_failed_) {
    std::cout << "\ngpulab grade: INTEGRITY FAILURE: the instructor files differ from the "
                 "seal; grading stopped (see the student's grade.txt; restore the files, or "
                 "--reseal after editing them on purpose)"
              << std::endl;
    return kIntegrityFailure;
  }
  if (!failed_.empty()) {
    std::cout << "\ngpulab grade: the grading of " << failed_.size()
              << " submission(s) failed (the same command tries them again):\n";
    for (const std::string& line : failed_) {
      std::cout << "  " << line << "\n";
    }
    return kFailure;
  }
  return kSuccess;
}

std::vector<Job> Roster::pending_jobs(std::size_t& kept) {
  fs::create_directories(out_);
  if (options_.regrade) {
    for (const RosterSubmission& s : submissions_) {
      std::error_code error;
      fs::remove(out_ / folder_name_for(s.student) / "stamp", error);
    }
  }
  std::vector<Job> pending;
  for (const RosterSubmission& s : submissions_) {
    Job job{s, out_ / folder_name_for(s.student), submission_stamp(s.folder, labs_, backend_)};
    stamps_[s.student] = job.stamp;
    if (is_graded(job)) {
      ++kept;
    } else {
      pending.push_back(std::move(job));
    }
  }
  return pending;
}

bool Roster::is_graded(const Job& job) {
  return read_file(job.dir / "stamp") == job.stamp && read_grade(job.submission.student, job.dir);
}

std::vector<std::string> Roster::grading_gpus(const DeviceQuery& query) {
  std::vector<std::string> gpus;
  for (const DeviceInfo& device : query.devices) {
    const DeviceInfo& first = query.devices.front();
    if (device.name == first.name && device.compute_capability() == first.compute_capability()) {
      gpus.push_back(child_visible_devices(device.index, std::getenv("CUDA_VISIBLE_DEVICES")));
    } else {
      std::cout << "gpulab grade: leaving out GPU " << device.index << " (" << device.name
                << "): not the model of GPU 0 (" << first.name
                << "), which grades the others (CUDA_VISIBLE_DEVICES chooses the GPUs)\n";
    }
  }
  return gpus;
}

std::vector<std::string> Roster::grade_command(const fs::path& folder, const fs::path& dir) const {
  std::vector<std::string> argv = {(build_dir() / "bin" / "gpulab").string(),
                                   "grade",
                                   "--submission",
                                   folder.string(),
                                   "--json",
                                   (dir / "grade.json").string(),
                                   "--gradescope",
                                   (dir / "results.json").string(),
                                   "--backend",
                                   backend_,
                                   "-j",
                                   std::to_string(jobs_per_grading_)};
  // On cuda the tests one at a time: -j alone would run that many of them at once on the
  // grading's GPU, timing each other's kernels (lab 01's samples 2x their launches on an H100).
  if (backend_ == "cuda") {
    argv.insert(argv.end(), {"--test-jobs", "1"});
  }
  append_grading_options(argv);
  return argv;
}

void Roster::append_grading_options(std::vector<std::string>& argv) const {
  if (options_.grading.timeout_s > 0) {
    argv.insert(argv.end(), {"--timeout", std::to_string(options_.grading.timeout_s)});
  }
  if (options_.grading.no_sandbox) {
    argv.push_back("--no-sandbox");
  }
  if (!options_.grading.seal.empty()) {
    argv.insert(argv.end(), {"--seal", options_.grading.seal});
  }
  argv.insert(argv.end(), labs_.begin(), labs_.end());
}

std::string Roster::grade_one(const Job& job, std::size_t total,
                              std::chrono::steady_clock::time_point start, const std::string& gpu) {
  std::error_code error;
  fs::remove(job.dir / "stamp", error);  // graded again: not kept until this grading ends
  fs::create_directories(job.dir);
  ProcessSpec spec;
  spec.argv = grade_command(job.submission.folder, job.dir);
  if (!gpu.empty()) {
    spec.env = {{"CUDA_VISIBLE_DEVICES", gpu}};
  }
  spec.timeout_s = kGradingLimitPerLabS * static_cast<double>(labs_.size());
  spec.keep_bytes = 4 * 1024 * 1024;
  spec.cancel = &g_interrupted;
  const ProcessResult result = run_process(spec);
  if (result.cancelled) {
    return "interrupted";  // nothing of it is kept
  }
  write_file_atomically(job.dir / "grade.txt", result.output);
  // A grading that exits 1 wrote a report, but with a problem of the grader's own (code that
  // could not be checked, a runner that did not start): retried, not kept.
  const std::optional<StudentGrade> report = read_grade(job.submission.student, job.dir);
  const std::optional<StudentGrade> grade = result.exit_code == kSuccess ? report : std::nullopt;
  const std::scoped_lock lock(mutex_);
  ++done_;
  std::string line;
  std::string outcome = "graded";
  if (grade) {
    write_file_atomically(job.dir / "stamp", job.stamp);
    int earned = 0;
    int possible = 0;
    for (const std::string& lab : labs_) {
      line += "  " + lab + " " + std::to_string(grade->row.earned.at(lab));
      earned += grade->row.earned.at(lab);
      possible += grade->row.possible.at(lab);
    }
    line += "  total " + std::to_string(earned) + "/" + std::to_string(possible);
  } else if (result.exit_code == kIntegrityFailure) {
    integrity_failed_ = true;
    line = "  INTEGRITY FAILURE (grading stops)";
    outcome = "integrity failure";
  } else {
    const bool problem = result.exit_code == kFailure && report && !report->problems.empty();
    const std::string why =
        result.timed_out ? "took longer than " + format_fixed(spec.timeout_s, 0) + " s"
        : problem        ? "the grader's problem: " + report->problems.front()
        : result.exit_code
            ? "gpulab grade exited " + std::to_string(*result.exit_code)
            : "gpulab grade ended by " + signal_description(result.signal.value_or(0));
    failed_.push_back(job.submission.student + ": " + why + " (" +
                      (job.dir / "grade.txt").string() + ")");
    line = "  grading failed: " + why;
    outcome = "failed: " + why;
  }
  print_progress(job.submission.student + line, total, start);
  return outcome;
}

void Roster::print_progress(const std::string& what, std::size_t total,
                            std::chrono::steady_clock::time_point start) const {
  constexpr int kBar = 20;
  const int filled = static_cast<int>(kBar * done_ / std::max<std::size_t>(total, 1));
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double left_s = elapsed / static_cast<double>(done_) * static_cast<double>(total - done_);
  std::cout << "[" << std::string(static_cast<std::size_t>(filled), '#')
            << std::string(static_cast<std::size_t>(kBar - filled), '.') << "] " << done_ << "/"
            << total << "  " << what;
  if (done_ < total) {
    std::cout << "  (about " << format_duration(left_s) << " left)";
  }
  std::cout << std::endl;
}

std::string Roster::format_duration(double seconds) {
  if (seconds < 90) {
    return format_fixed(seconds, 0) + " s";
  }
  if (seconds < 5400) {
    return format_fixed(seconds / 60, 0) + " min";
  }
  return format_fixed(seconds / 3600, 1) + " h";
}

}  // namespace detail

std::vector<RosterSubmission> find_roster(const fs::path& roster) {
  std::error_code error;
  if (!fs::is_directory(roster, error)) {
    throw UsageError("--roster " + roster.string() + ": not a folder");
  }
  std::map<std::string, std::string> names;
  if (const std::optional<std::string> metadata = read_file(roster / "submission_metadata.yml")) {
    names = gradescope_names(*metadata);
  }
  std::vector<RosterSubmission> submissions;
  std::set<std::string> seen;
  for (const fs::directory_entry& entry : fs::directory_iterator(roster)) {
    const std::string folder = entry.path().filename().string();
    if (folder.front() == '.' || !entry.is_directory(error)) {
      continue;
    }
    const auto named = names.find(folder);
    RosterSubmission s{named != names.end() ? named->second : folder, entry.path()};
    if (std::any_of(s.student.begin(), s.student.end(),
                    [](unsigned char c) { return c < 0x20 || c == 0x7f; })) {
      throw UsageError("--roster " + roster.string() + ": the student name of " + folder +
                       " holds a control character (a newline or a tab): rename it");
    }
    if (!seen.insert(folder_name_for(s.student)).second) {
      throw UsageError("--roster " + roster.string() + ": two submissions of " + s.student);
    }
    submissions.push_back(std::move(s));
  }
  if (submissions.empty()) {
    throw UsageError("--roster " + roster.string() +
                     ": no submission in it (a folder per student is expected)");
  }
  std::sort(submissions.begin(), submissions.end(),
            [](const auto& a, const auto& b) { return a.student < b.student; });
  return submissions;
}

std::string submission_stamp(const fs::path& folder, const std::vector<std::string>& labs,
                             const std::string& backend) {
  std::vector<std::string> files;
  for (auto it = fs::recursive_directory_iterator(folder); it != fs::recursive_directory_iterator();
       ++it) {
    if (it->path().filename() == ".git" && it->is_directory()) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file()) {
      files.push_back(fs::relative(it->path(), folder).generic_string() + " " +
                      sha256_file(it->path()));
    }
  }
  std::sort(files.begin(), files.end());
  std::string text = "backend " + backend + "\nlabs";
  for (const std::string& lab : labs) {
    text += " " + lab;
  }
  for (const std::string& file : files) {
    text += "\n" + file;
  }
  return sha256_hex(text);
}

int grade_roster(const RosterOptions& options) {
  Roster roster(options);
  return roster.run();
}

}  // namespace gpulab
