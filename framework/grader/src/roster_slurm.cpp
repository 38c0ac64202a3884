// `gpulab grade --roster --slurm` (roster.hpp): a round of the submissions not graded yet
// submitted as one job array, an array task's gradings, and --collect; the Slurm pieces that do
// not depend on the roster are slurm.cpp.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "gpulab/core/exit_codes.hpp"
#include "gpulab/core/files.hpp"
#include "gpulab/grader/process.hpp"
#include "gpulab/grader/slurm.hpp"
#include "gpulab/grader/workspace.hpp"
#include "roster_run.hpp"

namespace gpulab::detail {

int Roster::submit_to_slurm(const std::vector<Job>& ungraded) {
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

int Roster::run_task() {
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
  const fs::path state_path = list_path.parent_path() / (list_path.stem().string() + "." +
                                                         std::to_string(options_.task) + ".state");
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

int Roster::collect() {
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
  std::cout << (queued ? "Some are still queued: --collect again once they have ended; then " : "")
            << "the same --slurm command submits only the ones without a grade (the graded "
               "ones are kept)."
            << std::endl;
  return kFailure;
}

}  // namespace gpulab::detail
