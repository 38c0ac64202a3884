// The Slurm pieces of `gpulab grade --roster --slurm` (slurm.hpp).
#include "slurm.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace gpulab::cli {

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

}  // namespace gpulab::cli
