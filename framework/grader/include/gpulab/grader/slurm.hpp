// `gpulab grade --roster DIR --slurm`: the pieces of a roster's grading on a Slurm cluster that
// do not depend on the roster (roster_slurm.cpp does the rest). One submission round writes a task
// list (one student per line) and a job script, and submits them as one job array with `sbatch
// --array`; each array task runs `gpulab grade --roster DIR --slurm-task I`, which grades its
// students exactly as a local roster run grades one (its own `gpulab grade --submission`, the
// same stamps and reports) and leaves a state file saying how it ended. Collecting reads what
// the tasks wrote (SlurmRounds).
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpulab {

/// What sbatch is asked for.
struct SlurmOptions {
  std::string partition;  ///< --partition (empty: the cluster's default)
  int gpus_per_task = 0;  ///< --gpus-per-task (0: none asked for)
  std::string time;       ///< --time, Slurm's format (empty: the partition's default)
  int cpus_per_task = 1;  ///< --cpus-per-task: the cores one grading uses
};

/// The largest array sbatch is given: Slurm's default MaxArraySize is 1001 (indexes 0 to 1000);
/// more submissions than this are graded a chunk per array task.
constexpr int kMaxArrayTasks = 1000;

/// How `submissions` are spread over array tasks: `per_task` consecutive lines each, `tasks`
/// tasks (both at least 1 when there are submissions).
struct ArrayShape {
  int tasks = 0;
  int per_task = 1;
};
[[nodiscard]] ArrayShape array_shape(int submissions, int max_tasks = kMaxArrayTasks);

/// True for the time formats sbatch accepts: "M", "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S"
/// (digits only), or "infinite"/"UNLIMITED".
[[nodiscard]] bool is_slurm_time(std::string_view time);

/// The sbatch command line (argv, sbatch first) for an array of `tasks` tasks running `script`,
/// at most `at_once` at a time, each task's output in `log_pattern` (sbatch's %A and %a
/// allowed), named `job_name`. With `wait`, sbatch returns when the whole array has ended.
[[nodiscard]] std::vector<std::string> sbatch_command(const std::filesystem::path& sbatch,
                                                      const SlurmOptions& options,
                                                      const std::filesystem::path& script,
                                                      const std::string& log_pattern,
                                                      const std::string& job_name, int tasks,
                                                      int at_once, bool wait);

/// A job script that runs `command` with the array task's index ($SLURM_ARRAY_TASK_ID) as one
/// more argument, every word shell-quoted.
[[nodiscard]] std::string job_script(const std::vector<std::string>& command);

/// The job id in what `sbatch --parsable` printed ("1234" or "1234;cluster" on a line of its own,
/// warnings on other lines before or after it), or nothing.
[[nodiscard]] std::optional<std::string> parse_job_id(std::string_view output);

/// `word` quoted for a POSIX shell (as is when it needs no quoting).
[[nodiscard]] std::string shell_word(const std::string& word);

/// A round's task list (one student a line) as its lines.
[[nodiscard]] std::vector<std::string> task_list_lines(const std::string& text);

/// The --slurm rounds of a roster's output folder, as the files they left say (in `dir`,
/// <out>/slurm: round-N.tasks, the task list; round-N.job, the job id sbatch gave;
/// round-N.<task>.state, how each of the task's students ended; round-N.<task>.log), and what
/// Slurm's queue says of their tasks (squeue, asked once per job; nothing without squeue). The
/// rounds are read once: forget() after submitting another.
class SlurmRounds {
 public:
  explicit SlurmRounds(std::filesystem::path dir) : dir_(std::move(dir)) {}

  struct Round {
    std::string name;                   ///< "round-3"
    std::vector<std::string> students;  ///< its task list
    std::string job;                    ///< its job id (empty if sbatch never took it)
  };

  /// Every round so far, oldest first.
  [[nodiscard]] const std::vector<Round>& rounds();
  /// The latest round that lists `student`, and the index of the task that grades it there.
  [[nodiscard]] std::optional<std::pair<const Round*, std::size_t>> latest_task(
      const std::string& student);
  /// Slurm's state of the task that last took `student` ("PENDING in job 12 (round-1 task 3)"),
  /// while squeue still lists it.
  [[nodiscard]] std::optional<std::string> still_queued(const std::string& student);
  /// Why `student` has no current grade: what its latest task's state file says, that it is
  /// still queued, that the task ended before grading it, or that no round listed it.
  [[nodiscard]] std::string missing_reason(const std::string& student);
  /// Reads the rounds and asks the queue again at the next question.
  void forget();

 private:
  const std::map<std::size_t, std::string>& queued_tasks(const std::string& job);

  std::filesystem::path dir_;
  std::optional<std::vector<Round>> rounds_;
  std::map<std::string, std::map<std::size_t, std::string>> queued_;  // by job, then task
};

}  // namespace gpulab
