// `gpulab grade --roster DIR` (roster.hpp).
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

#include <nlohmann/json.hpp>

#include "gpulab/core/class_summary.hpp"
#include "gpulab/core/console.hpp"
#include "gpulab/core/device_info.hpp"
#include "gpulab/core/exit_codes.hpp"
#include "gpulab/core/files.hpp"
#include "gpulab/grader/process.hpp"
#include "gpulab/grader/sha256.hpp"
#include "gpulab/grader/similarity.hpp"
#include "gpulab/grader/workspace.hpp"

namespace gpulab {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The longest one submission's grading may take, per lab graded: its build and every test's time
// limit fit in it many times over; past it the grading is killed and counted as failed.
constexpr double kGradingLimitPerLabS = 3600;

std::atomic<bool> g_interrupted{false};

void on_interrupt(int /*signal*/) {
  g_interrupted.store(true);
}

// SIGINT and SIGTERM set g_interrupted while it lives; the handlers it replaced come back after.
class InterruptHandlers {
 public:
  InterruptHandlers() {
    g_interrupted = false;
    struct sigaction action {};
    action.sa_handler = on_interrupt;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~InterruptHandlers() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  InterruptHandlers(const InterruptHandlers&) = delete;
  InterruptHandlers& operator=(const InterruptHandlers&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

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

// `name` as one folder name: no separators, nothing hidden, never "." or "..".
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

std::string csv_field(const std::string& value) {
  std::string text = value;
  if (!text.empty() && std::string("=+-@").find(text.front()) != std::string::npos) {
    text.insert(text.begin(), '\'');  // never a formula in a spreadsheet
  }
  if (text.find_first_of(",\"\n\r") == std::string::npos) {
    return text;
  }
  std::string quoted = "\"";
  for (const char c : text) {
    quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  }
  return quoted + "\"";
}

// What the roster keeps of one student's grade: the gradebook row and the tests that failed.
struct StudentGrade {
  GradebookRow row;
  std::vector<std::string> failed;    // "lab01 Suite.Name"
  std::vector<std::string> problems;  // the grader's own (the grading exited 1): not a grade
};

// The grade a finished grading left in `dir` (grade.json), or nullopt when there is none that
// parses.
std::optional<StudentGrade> read_grade(const std::string& student, const fs::path& dir) {
  const std::optional<std::string> text = read_file(dir / "grade.json");
  if (!text) {
    return std::nullopt;
  }
  try {
    const json doc = json::parse(*text);
    StudentGrade grade;
    grade.row.student = student;
    grade.row.status = "graded";
    for (const json& lab : doc.at("labs")) {
      const std::string id = lab.at("lab").get<std::string>();
      grade.row.earned[id] = lab.at("earned").get<int>();
      grade.row.possible[id] = lab.at("possible").get<int>();
      for (const json& test : lab.at("tests")) {
        if (test.at("disposition").get<std::string>() != "passed") {
          grade.failed.push_back(id + " " + test.at("name").get<std::string>());
        }
      }
    }
    grade.problems = doc.at("problems").get<std::vector<std::string>>();
    return grade;
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

// One submission's place in the run.
struct Job {
  RosterSubmission submission;
  fs::path dir;       // its folder of the output
  std::string stamp;  // submission_stamp
};

class Roster {
 public:
  explicit Roster(const RosterOptions& options) : options_(options), manifest_(build_manifest()) {
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

  int run() {
    if (options_.task >= 0) {
      return run_task();
    }
    if (options_.collect) {
      return collect();
    }
    std::size_t kept = 0;
    std::vector<Job> pending = pending_jobs(kept);
    std::cout << "gpulab grade: roster " << options_.roster << ": " << submissions_.size()
              << " submission(s), " << labs_.size() << " lab(s), " << backend_ << " backend; "
              << kept << " already graded and unchanged (kept; --regrade grades them again), "
              << pending.size() << " to grade" << (options_.slurm ? " on Slurm, " : ", ")
              << parallel_ << " at a time" << (gpus_.empty() ? "" : ", a GPU each")
              << "; grades in " << out_.string() << std::endl;
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

 private:
  // The exit code of a run that graded `count` submissions (and what it says about them).
  int ending(std::size_t count) const {
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

  bool stop_now() const { return g_interrupted || integrity_failed_; }

  // --slurm: the pending submissions as one round, a job array of tasks that each run
  // `gpulab grade --roster ... --slurm-task I`.
  int submit_to_slurm(const std::vector<Job>& ungraded) {
    const std::optional<fs::path> sbatch = find_on_path("sbatch");
    if (!sbatch) {
      throw std::runtime_error(
          "--slurm needs Slurm's sbatch on PATH (Debian's slurm-client package, or the "
          "cluster's module)");
    }
    // A submission an earlier round's task still has queued is left to it: two tasks would
    // write the same student's reports at once.
    std::vector<Job> pending;
    for (const Job& job : ungraded) {
      if (const std::optional<std::string> queued = slurm_->still_queued(job.submission.student)) {
        std::cout << "gpulab grade: " << job.submission.student << ": left out, still " << *queued
                  << std::endl;
      } else {
        pending.push_back(job);
      }
    }
    if (pending.empty()) {
      write_class_files();
      std::cout << "gpulab grade: nothing to submit: every submission is graded and unchanged"
                << (pending.size() < ungraded.size() ? ", or still queued" : "") << std::endl;
      return kSuccess;
    }
    const fs::path dir = out_ / "slurm";
    fs::create_directories(dir);
    const std::string name = "round-" + std::to_string(slurm_->rounds().size() + 1);
    std::string list;
    for (const Job& job : pending) {
      list += job.submission.student + "\n";
    }
    const fs::path tasks = dir / (name + ".tasks");
    write_file_atomically(tasks, list);

    std::vector<std::string> command = {(build_dir() / "bin" / "gpulab").string(),
                                        "grade",
                                        "--roster",
                                        fs::absolute(options_.roster).lexically_normal().string(),
                                        "--out",
                                        out_.string(),
                                        "--backend",
                                        backend_,
                                        "-j",
                                        std::to_string(options_.slurm_options.cpus_per_task),
                                        "--slurm-tasks",
                                        tasks.string()};
    append_grading_options(command);
    command.emplace_back("--slurm-task");
    const fs::path script = dir / (name + ".sh");
    write_file_atomically(script, job_script(command));
    fs::permissions(script, fs::perms::owner_exec | fs::perms::group_exec, fs::perm_options::add);

    const ArrayShape shape = array_shape(static_cast<int>(pending.size()));
    ProcessSpec spec;
    spec.argv =
        sbatch_command(*sbatch, options_.slurm_options, script, (dir / (name + ".%a.log")).string(),
                       "gpulab-grade", shape.tasks, parallel_, options_.wait);
    spec.cancel = &g_interrupted;
    std::cout << "gpulab grade: " << name << ": " << pending.size() << " submission(s) as "
              << shape.tasks << " array task(s)"
              << (shape.per_task > 1 ? " of " + std::to_string(shape.per_task) + " each" : "")
              << ", at most " << parallel_ << " at a time (this build's grading slots); task list "
              << tasks.string() << std::endl;
    const InterruptHandlers handlers;
    const ProcessResult result = run_process(spec);
    const std::optional<std::string> job = parse_job_id(result.output);
    if (!job) {
      std::cout << "gpulab grade: sbatch did not say which job it submitted"
                << (result.started ? "" : ": " + result.start_error) << "\n"
                << result.output << std::endl;
      if (result.exit_code != kSuccess && !result.cancelled) {
        std::error_code error;
        fs::remove(tasks, error);  // nothing submitted: the next round takes its number
      }
      return kFailure;
    }
    write_file_atomically(dir / (name + ".job"), *job + "\n");
    std::cout << "gpulab grade: submitted job " << *job << " (logs: " << dir.string() << "/" << name
              << ".<task>.log)" << std::endl;
    if (result.cancelled) {
      std::cout << "gpulab grade: interrupted while waiting; the tasks go on (squeue -j " << *job
                << "); afterwards: the same command with --collect" << std::endl;
      return kInterrupted;
    }
    if (!options_.wait) {
      std::cout << "gpulab grade: when it has ended (squeue -j " << *job
                << " lists its tasks until then), the same command with --collect instead of "
                   "--slurm writes the gradebook"
                << std::endl;
      return kSuccess;
    }
    slurm_->forget();  // this round is one of them now, and the queue has moved on
    return collect();
  }

  // --slurm-task I: grades the task's lines of its round's task list, and leaves the state of
  // each in <list>.<I>.state ("student<TAB>graded" or "...<TAB>failed: why"), rewritten after
  // each one so that a task killed part-way keeps what it finished.
  int run_task() {
    const fs::path list_path = options_.task_list;
    const std::optional<std::string> list = read_file(list_path);
    if (!list) {
      throw UsageError("--slurm-tasks " + list_path.string() + ": cannot read it");
    }
    const std::vector<std::string> students = task_list_lines(*list);
    const ArrayShape shape = array_shape(static_cast<int>(students.size()));
    if (options_.task >= shape.tasks) {
      throw UsageError("--slurm-task " + std::to_string(options_.task) + ": " + list_path.string() +
                       " has " + std::to_string(shape.tasks) + " task(s)");
    }
    const std::size_t first = static_cast<std::size_t>(options_.task * shape.per_task);
    const std::size_t end = std::min(students.size(), first + std::size_t(shape.per_task));
    const fs::path state_path =
        list_path.parent_path() /
        (list_path.stem().string() + "." + std::to_string(options_.task) + ".state");
    jobs_per_grading_ = std::max(1, options_.grading.jobs);
    const InterruptHandlers handlers;
    const auto start = std::chrono::steady_clock::now();
    std::string states;
    for (std::size_t i = first; i < end && !stop_now(); ++i) {
      const auto found =
          std::find_if(submissions_.begin(), submissions_.end(),
                       [&](const RosterSubmission& s) { return s.student == students[i]; });
      std::string state;
      if (found == submissions_.end()) {
        state = "failed: no submission of this name in the roster any more";
      } else {
        const Job job{*found, out_ / folder_name_for(found->student),
                      submission_stamp(found->folder, labs_, backend_)};
        state = is_graded(job) ? "graded" : grade_one(job, end - first, start);
      }
      if (state == "interrupted") {
        state = "interrupted: SIGTERM or SIGINT (Slurm's time limit, a preemption or scancel)";
      }
      states += students[i] + "\t" + state + "\n";
      write_file_atomically(state_path, states);
    }
    return ending(end - first);
  }

  // --collect (and --slurm --wait): the gradebook and summary from what is graded, and each
  // submission without a grade with the reason. Exit code: 0 when all are graded, 3 when a task
  // met an integrity failure, 1 otherwise.
  int collect() {
    for (const RosterSubmission& s : submissions_) {  // again after --wait: what changed meanwhile
      stamps_[s.student] = submission_stamp(s.folder, labs_, backend_);
    }
    write_class_files();
    std::vector<std::string> missing;
    bool queued = false;
    bool integrity = false;
    for (const RosterSubmission& s : submissions_) {
      const Job job{s, out_ / folder_name_for(s.student), stamps_.at(s.student)};
      if (!is_graded(job)) {
        const std::string reason = slurm_->missing_reason(s.student);
        queued = queued || slurm_->still_queued(s.student).has_value();
        integrity = integrity || reason.find(": integrity failure") != std::string::npos;
        missing.push_back(s.student + ": " + reason);
      }
    }
    if (missing.empty()) {
      return kSuccess;
    }
    std::cout << "\ngpulab grade: " << missing.size() << " of " << submissions_.size()
              << " submission(s) have no grade:\n";
    for (const std::string& line : missing) {
      std::cout << "  " << line << "\n";
    }
    if (integrity) {
      std::cout << "INTEGRITY FAILURE: the instructor files differ from the seal (see the task's "
                   "log; restore the files, or --reseal after editing them on purpose)."
                << std::endl;
      return kIntegrityFailure;
    }
    std::cout << (queued ? "Some are still queued: --collect again once they have ended; then "
                         : "")
              << "the same --slurm command submits only the ones without a grade (the graded "
                 "ones are kept)."
              << std::endl;
    return kFailure;
  }

  // Every submission's stamp (stamps_), and the jobs of those without a current grade; `kept`
  // counts the others. With --regrade, every grade is forgotten first (interrupted, the plain
  // command resumes).
  std::vector<Job> pending_jobs(std::size_t& kept) {
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

  static bool is_graded(const Job& job) {
    return read_file(job.dir / "stamp") == job.stamp && read_grade(job.submission.student, job.dir);
  }

  // The GPUs the gradings run on, as CUDA_VISIBLE_DEVICES entries: every device this process
  // sees that is the model of device 0 (a grade on another model would not be the same grade).
  static std::vector<std::string> grading_gpus(const DeviceQuery& query) {
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

  // The `gpulab grade --submission` command line that grades one submission into `dir`.
  std::vector<std::string> grade_command(const fs::path& folder, const fs::path& dir) const {
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

  // The options every grading of this roster shares, and its labs.
  void append_grading_options(std::vector<std::string>& argv) const {
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

  // Grades one submission in a `gpulab grade` of its own (on the GPU that CUDA_VISIBLE_DEVICES
  // `gpu` names, unless empty) and keeps what it wrote. Returns how it ended: "graded",
  // "failed: <why>", "integrity failure" or "interrupted".
  std::string grade_one(const Job& job, std::size_t total,
                        std::chrono::steady_clock::time_point start, const std::string& gpu = "") {
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

  void print_progress(const std::string& what, std::size_t total,
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

  static std::string format_duration(double seconds) {
    if (seconds < 90) {
      return format_fixed(seconds, 0) + " s";
    }
    if (seconds < 5400) {
      return format_fixed(seconds / 60, 0) + " min";
    }
    return format_fixed(seconds / 3600, 1) + " h";
  }

  // The gradebook and the class summary from every kept grade.
  void write_class_files() const {
    std::vector<GradebookRow> rows;
    ClassSummary summary;
    summary.context = make_context(backend_, "", "");
    summary.students = submissions_.size();
    for (const std::string& lab : labs_) {
      summary.labs.push_back({lab, {}});
    }
    std::map<std::string, std::size_t> failures;  // by "lab test": students who failed it
    for (const RosterSubmission& s : submissions_) {
      const fs::path dir = out_ / folder_name_for(s.student);
      std::optional<StudentGrade> grade;
      if (read_file(dir / "stamp") == stamps_.at(s.student)) {
        grade = read_grade(s.student, dir);
      }
      if (!grade) {
        rows.push_back({s.student, {}, {}, "not graded"});
        continue;
      }
      ++summary.graded;
      for (ClassLab& lab : summary.labs) {
        const int possible = std::max(1, grade->row.possible[lab.lab]);
        lab.histogram[static_cast<std::size_t>(
            std::clamp(10 * grade->row.earned[lab.lab] / possible, 0, 9))]++;
      }
      for (const std::string& test : grade->failed) {
        ++failures[test];
      }
      rows.push_back(std::move(grade->row));
    }
    write_file_atomically(out_ / "gradebook.csv", gradebook_csv(labs_, rows));

    for (const auto& [test, students] : failures) {
      summary.failed_most.push_back({test, students});
    }
    // Most students first, then by test (the map's order): a total order, so no stable sort is
    // needed (libstdc++ 12's stable_sort trips clang 19's deprecation warnings).
    std::ranges::sort(summary.failed_most, [](const ClassFailure& a, const ClassFailure& b) {
      return a.students != b.students ? a.students > b.students : a.test < b.test;
    });
    summary.failed_most.resize(std::min<std::size_t>(summary.failed_most.size(), 15));
    save_class_summary(out_ / "summary.json", summary);
    const std::string text = render_class_summary(summary);
    write_file_atomically(out_ / "summary.txt", text);
    // Submissions that look alike, for the instructor to read (similarity.hpp).
    std::vector<std::pair<std::string, fs::path>> students;
    for (const RosterSubmission& s : submissions_) {
      students.emplace_back(s.student, s.folder);
    }
    write_file_atomically(out_ / "similarity.txt",
                          class_similarity_report(students, lab_entries_, manifest_.source_dir));
    std::cout << "\n"
              << text << "\ngradebook: " << (out_ / "gradebook.csv").string()
              << "; each student's reports in " << out_.string() << "/<student>/"
              << "; submissions that look alike (to read, never a grade): "
              << (out_ / "similarity.txt").string() << std::endl;
  }

  const RosterOptions& options_;
  LabManifest manifest_;
  std::vector<const LabEntry*> lab_entries_;  // in manifest_
  std::vector<std::string> labs_;
  std::string backend_;
  int parallel_ = 1;
  int jobs_per_grading_ = 1;
  std::vector<std::string> gpus_;  // on cuda: CUDA_VISIBLE_DEVICES of each grading worker's GPU
  fs::path out_;
  std::vector<RosterSubmission> submissions_;
  std::map<std::string, std::string> stamps_;  // by student: submission_stamp, from run()
  std::optional<SlurmRounds> slurm_;           // the --slurm rounds in out_/slurm
  mutable std::mutex mutex_;
  std::size_t done_ = 0;
  std::atomic<bool> integrity_failed_{false};
  std::vector<std::string> failed_;
};

}  // namespace

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

std::string gradebook_csv(const std::vector<std::string>& labs,
                          const std::vector<GradebookRow>& rows) {
  std::string csv = "student";
  for (const std::string& lab : labs) {
    csv += "," + lab;
  }
  csv += ",total,possible,status\n";
  for (const GradebookRow& row : rows) {
    csv += csv_field(row.student);
    int total = 0;
    int possible = 0;
    for (const std::string& lab : labs) {
      const auto earned = row.earned.find(lab);
      csv += "," + (earned != row.earned.end() ? std::to_string(earned->second) : std::string());
      total += earned != row.earned.end() ? earned->second : 0;
      const auto of = row.possible.find(lab);
      possible += of != row.possible.end() ? of->second : 0;
    }
    const bool graded = !row.earned.empty();
    csv += "," + (graded ? std::to_string(total) : std::string()) + "," +
           (graded ? std::to_string(possible) : std::string()) + "," + csv_field(row.status) + "\n";
  }
  return csv;
}

int grade_roster(const RosterOptions& options) {
  Roster roster(options);
  return roster.run();
}

}  // namespace gpulab
