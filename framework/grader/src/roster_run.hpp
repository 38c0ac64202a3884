// One run of `gpulab grade --roster` (roster.hpp), internal to gpulab.grader: the class Roster
// and what its three files share. roster.cpp finds the roster, stamps submissions and grades them
// here N at a time until a signal stops it; roster_slurm.cpp submits a round to Slurm, runs an
// array task's gradings and collects them; roster_gradebook.cpp reads each grade back and writes
// the class files (gradebook, summary, similarity).
#pragma once

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "gpulab/core/device_info.hpp"
#include "gpulab/grader/manifest.hpp"
#include "gpulab/grader/roster.hpp"
#include "gpulab/grader/slurm.hpp"

namespace gpulab::detail {

namespace fs = std::filesystem;

// Set by SIGINT and SIGTERM while InterruptHandlers live (roster.cpp).
extern std::atomic<bool> g_interrupted;

void on_interrupt(int /*signal*/);

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

// `name` as one folder name: no separators, nothing hidden, never "." or "..".
std::string folder_name_for(const std::string& name);

// What the roster keeps of one student's grade: the gradebook row and the tests that failed.
struct StudentGrade {
  GradebookRow row;
  std::vector<std::string> failed;    // "lab01 Suite.Name"
  std::vector<std::string> problems;  // the grader's own (the grading exited 1): not a grade
};

// The grade a finished grading left in `dir` (grade.json), or nullopt when there is none that
// parses.
std::optional<StudentGrade> read_grade(const std::string& student, const fs::path& dir);

// One submission's place in the run.
struct Job {
  RosterSubmission submission;
  fs::path dir;       // its folder of the output
  std::string stamp;  // submission_stamp
};

// One `gpulab grade --roster` (grade_roster): its labs, backend and submissions, how many it grades
// at once, and how far it got.
class Roster {
 public:
  explicit Roster(const RosterOptions& options);

  int run();

 private:
  // The exit code of a run that graded `count` submissions (and what it says about them).
  int ending(std::size_t count) const;

  bool stop_now() const { return g_interrupted || integrity_failed_; }

  // --slurm: the pending submissions as one round, a job array of tasks that each run
  // `gpulab grade --roster ... --slurm-task I`.
  int submit_to_slurm(const std::vector<Job>& ungraded);

  // --slurm-task I: grades the task's lines of its round's task list, and leaves the state of
  // each in <list>.<I>.state ("student<TAB>graded" or "...<TAB>failed: why"), rewritten after
  // each one so that a task killed part-way keeps what it finished.
  int run_task();

  // --collect (and --slurm --wait): the gradebook and summary from what is graded, and each
  // submission without a grade with the reason. Exit code: 0 when all are graded, 3 when a task
  // met an integrity failure, 1 otherwise.
  int collect();

  // Every submission's stamp (stamps_), and the jobs of those without a current grade; `kept`
  // counts the others. With --regrade, every grade is forgotten first (interrupted, the plain
  // command resumes).
  std::vector<Job> pending_jobs(std::size_t& kept);

  static bool is_graded(const Job& job);

  // The GPUs the gradings run on, as CUDA_VISIBLE_DEVICES entries: every device this process
  // sees that is the model of device 0 (a grade on another model would not be the same grade).
  static std::vector<std::string> grading_gpus(const DeviceQuery& query);

  // The `gpulab grade --submission` command line that grades one submission into `dir`.
  std::vector<std::string> grade_command(const fs::path& folder, const fs::path& dir) const;

  // The options every grading of this roster shares, and its labs.
  void append_grading_options(std::vector<std::string>& argv) const;

  // Grades one submission in a `gpulab grade` of its own (on the GPU that CUDA_VISIBLE_DEVICES
  // `gpu` names, unless empty) and keeps what it wrote. Returns how it ended: "graded",
  // "failed: <why>", "integrity failure" or "interrupted".
  std::string grade_one(const Job& job, std::size_t total,
                        std::chrono::steady_clock::time_point start, const std::string& gpu = "");

  void print_progress(const std::string& what, std::size_t total,
                      std::chrono::steady_clock::time_point start) const;

  static std::string format_duration(double seconds);

  // The gradebook and the class summary from every kept grade.
  void write_class_files() const;

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

}  // namespace gpulab::detail
