// `gpulab grade --roster DIR --slurm`: the pieces of a roster's grading on a Slurm cluster that
// do not depend on the roster (roster.cpp does the rest). One submission round writes a task
// list (one student per line) and a job script, and submits them as one job array with `sbatch
// --array`; each array task runs `gpulab grade --roster DIR --slurm-task I`, which grades its
// students exactly as a local roster run grades one (its own `gpulab grade --submission`, the
// same stamps and reports) and leaves a state file saying how it ended. Collecting reads what
// the tasks wrote.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpulab::cli {

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

}  // namespace gpulab::cli
