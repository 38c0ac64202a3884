// The Slurm pieces of `gpulab grade --roster --slurm` (slurm.hpp).
#include "gpulab/grader/slurm.hpp"

#include <algorithm>
#include <cctype>
#include <exception>
#include <sstream>
#include <string>

#include "gpulab/core/files.hpp"
#include "gpulab/grader/process.hpp"

namespace gpulab {

namespace {

bool all_digits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
}

// "a:b:c" as its fields, each digits only; nothing when a field is not.
std::optional<std::vector<std::string_view>> numeric_fields(std::string_view text) {
  std::vector<std::string_view> fields;
  for (std::size_t start = 0;;) {
    const std::size_t colon = text.find(':', start);
    const std::string_view field = text.substr(start, colon - start);
    if (!all_digits(field)) {
      return std::nullopt;
    }
    fields.push_back(field);
    if (colon == std::string_view::npos) {
      return fields;
    }
    start = colon + 1;
  }
}

}  // namespace

ArrayShape array_shape(int submissions, int max_tasks) {
  if (submissions <= 0) {
    return {};
  }
  const int limit = std::max(1, max_tasks);
  const int per_task = (submissions + limit - 1) / limit;
  return {(submissions + per_task - 1) / per_task, per_task};
}

bool is_slurm_time(std::string_view time) {
  if (time == "infinite" || time == "UNLIMITED") {
    return true;
  }
  const std::size_t dash = time.find('-');
  if (dash != std::string_view::npos) {  // days-hours[:minutes[:seconds]]
    const auto rest = numeric_fields(time.substr(dash + 1));
    return all_digits(time.substr(0, dash)) && rest && rest->size() <= 3;
  }
  const auto fields = numeric_fields(time);  // minutes, minutes:seconds, hours:minutes:seconds
  return fields && fields->size() <= 3;
}

std::vector<std::string> sbatch_command(const std::filesystem::path& sbatch,
                                        const SlurmOptions& options,
                                        const std::filesystem::path& script,
                                        const std::string& log_pattern, const std::string& job_name,
                                        int tasks, int at_once, bool wait) {
  std::vector<std::string> argv = {
      sbatch.string(),
      "--parsable",
      "--job-name=" + job_name,
      "--array=0-" + std::to_string(tasks - 1) + "%" + std::to_string(std::max(1, at_once)),
      "--ntasks=1",
      "--cpus-per-task=" + std::to_string(std::max(1, options.cpus_per_task)),
      "--output=" + log_pattern};
  if (!options.partition.empty()) {
    argv.push_back("--partition=" + options.partition);
  }
  if (options.gpus_per_task > 0) {
    argv.push_back("--gpus-per-task=" + std::to_string(options.gpus_per_task));
  }
  if (!options.time.empty()) {
    argv.push_back("--time=" + options.time);
  }
  if (wait) {
    argv.push_back("--wait");
  }
  argv.push_back(script.string());
  return argv;
}

std::string shell_word(const std::string& word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](unsigned char c) {
    return std::isalnum(c) ||
           std::string_view("@%+=:,./_-").find(static_cast<char>(c)) != std::string_view::npos;
  });
  if (plain) {
    return word;
  }
  std::string quoted = "'";
  for (const char c : word) {
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return quoted + "'";
}

std::string job_script(const std::vector<std::string>& command) {
  std::string line;
  for (const std::string& word : command) {
    line += shell_word(word) + " ";
  }
  return "#!/bin/sh\n"
         "# A task of gpulab's roster grading (gpulab grade --roster ... --slurm): grades the\n"
         "# students of its line(s) of the task list. Written and submitted by gpulab.\n"
         "exec " +
         line + "\"$SLURM_ARRAY_TASK_ID\"\n";
}

std::optional<std::string> parse_job_id(std::string_view output) {
  // The first line that is a job id: sbatch may warn on other lines (its stderr comes mixed in).
  for (std::size_t start = 0; start < output.size();) {
    const std::size_t end = std::min(output.find('\n', start), output.size());
    std::string_view line = output.substr(start, end - start);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) {
      line.remove_suffix(1);
    }
    const std::string_view id = line.substr(0, line.find(';'));
    if (all_digits(id)) {
      return std::string(id);
    }
    start = end + 1;
  }
  return std::nullopt;
}

std::vector<std::string> task_list_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
  }
  return lines;
}

const std::vector<SlurmRounds::Round>& SlurmRounds::rounds() {
  if (!rounds_) {
    rounds_.emplace();
    for (int n = 1;; ++n) {
      const std::string name = "round-" + std::to_string(n);
      const std::optional<std::string> list = read_file(dir_ / (name + ".tasks"));
      if (!list) {
        break;
      }
      rounds_->push_back(
          {name, task_list_lines(*list),
           parse_job_id(read_file(dir_ / (name + ".job")).value_or("")).value_or("")});
    }
  }
  return *rounds_;
}

std::optional<std::pair<const SlurmRounds::Round*, std::size_t>> SlurmRounds::latest_task(
    const std::string& student) {
  const std::vector<Round>& all = rounds();
  for (auto round = all.rbegin(); round != all.rend(); ++round) {
    const auto at = std::find(round->students.begin(), round->students.end(), student);
    if (at != round->students.end()) {
      const ArrayShape shape = array_shape(static_cast<int>(round->students.size()));
      return std::pair{&*round, static_cast<std::size_t>(at - round->students.begin()) /
                                    static_cast<std::size_t>(shape.per_task)};
    }
  }
  return std::nullopt;
}

// What Slurm says of each array task of `job` it still lists ("PENDING", "RUNNING", ...), by task
// index.
const std::map<std::size_t, std::string>& SlurmRounds::queued_tasks(const std::string& job) {
  const auto cached = queued_.find(job);
  if (cached != queued_.end()) {
    return cached->second;
  }
  std::map<std::size_t, std::string>& tasks = queued_[job];
  const std::optional<std::filesystem::path> squeue = find_on_path("squeue");
  if (!squeue || job.empty()) {
    return tasks;
  }
  ProcessSpec spec;
  spec.argv = {squeue->string(), "--noheader", "--array", "--jobs=" + job, "--format=%i %T"};
  spec.timeout_s = 30;
  std::istringstream lines(run_process(spec).output);
  for (std::string line; std::getline(lines, line);) {  // "<job>_<task> <STATE>"
    const std::size_t underscore = line.find('_');
    const std::size_t space = line.find(' ');
    if (underscore != std::string::npos && space != std::string::npos && underscore < space &&
        line.substr(0, underscore) == job) {
      try {
        tasks[std::stoul(line.substr(underscore + 1, space - underscore - 1))] =
            line.substr(space + 1);
      } catch (const std::exception&) {  // "<job>_[3-9]": a range squeue did not expand
      }
    }
  }
  return tasks;
}

std::optional<std::string> SlurmRounds::still_queued(const std::string& student) {
  const auto task = latest_task(student);
  if (!task) {
    return std::nullopt;
  }
  const std::map<std::size_t, std::string>& queued = queued_tasks(task->first->job);
  const auto state = queued.find(task->second);
  if (state == queued.end()) {
    return std::nullopt;
  }
  return state->second + " in job " + task->first->job + " (" + task->first->name + " task " +
         std::to_string(task->second) + ")";
}

std::string SlurmRounds::missing_reason(const std::string& student) {
  const auto task = latest_task(student);
  if (!task) {
    return rounds().empty() ? "not graded (no --slurm round has listed it)"
                            : "not graded (not in any --slurm round: added since?)";
  }
  const Round& round = *task->first;
  const std::string where = round.name + " task " + std::to_string(task->second);
  const std::filesystem::path log =
      dir_ / (round.name + "." + std::to_string(task->second) + ".log");
  const auto states =
      read_file(dir_ / (round.name + "." + std::to_string(task->second) + ".state"));
  std::istringstream state_lines(states.value_or(""));
  for (std::string line; std::getline(state_lines, line);) {
    if (line == student + "\tgraded") {
      return where + ": graded, but the submission has changed since";
    }
    if (line.rfind(student + "\t", 0) == 0) {
      return where + ": " + line.substr(student.size() + 1) + " (log: " + log.string() + ")";
    }
  }
  if (const std::optional<std::string> queued = still_queued(student)) {
    return *queued;
  }
  return where + " (job " + round.job +
         ") ended before grading it: killed at its time limit, preempted, out of memory or "
         "its node failed (log: " +
         log.string() + ")";
}

void SlurmRounds::forget() {
  rounds_.reset();
  queued_.clear();
}

}  // namespace gpulab
