// `gpulab grade --roster DIR` (roster.hpp).
#include "roster.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstddef>
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

#include "commands.hpp"
#include "gpulab/core/console.hpp"
#include "gpulab/core/files.hpp"
#include "gpulab/grader/process.hpp"
#include "gpulab/grader/sha256.hpp"
#include "labs.hpp"

namespace gpulab::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Exit code of a roster interrupted by SIGINT or SIGTERM (128 + SIGINT, as a shell reports it).
constexpr int kInterrupted = 130;

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
  const auto not_space = [](unsigned char c) { return c != ' ' && c != '\t' && c != '\r'; };
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
  std::vector<std::string> failed;  // "lab01 Suite.Name"
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
    if (!doc.at("problems").empty()) {
      grade.row.status = "graded with problems: " + doc.at("problems")[0].get<std::string>();
    }
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
  explicit Roster(const RosterOptions& options) : options_(options) {
    const LabManifest manifest = build_manifest();
    for (const LabEntry* lab : select_labs(manifest, options.grading.labs)) {
      labs_.push_back(lab->id);
    }
    backend_ = choose_backend(manifest, options.grading.backend);
    const int slots = static_cast<int>(manifest.grading_slots.size());
    if (slots == 0) {
      throw std::runtime_error(
          "this build has no grading slots (configured with "
          "GPULAB_BUILD_TESTS=OFF?)");
    }
    const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    // On a GPU one grading at a time: its tests time kernels on the one device.
    const int fits = backend_ == "cuda" ? 1 : std::min(slots, cores);
    parallel_ = options.parallel > 0 ? options.parallel : fits;
    if (parallel_ > slots) {
      std::cout << "gpulab grade: -j " << parallel_ << " but this build has " << slots
                << " grading slots (GPULAB_GRADING_SLOTS): grading " << slots << " at a time\n";
      parallel_ = slots;
    }
    jobs_per_grading_ = std::max(1, cores / parallel_);
    const fs::path roster = fs::absolute(options.roster).lexically_normal();
    out_ = options.out.empty() ? roster.parent_path() / (roster.filename().string() + "-grades")
                               : fs::absolute(options.out).lexically_normal();
    submissions_ = find_roster(roster);
    if (out_ == roster || (out_.string() + "/").rfind(roster.string() + "/", 0) == 0) {
      throw UsageError("--out " + out_.string() + " is inside the roster " + roster.string() +
                       ": it would be graded as a submission");
    }
  }

  int run() {
    fs::create_directories(out_);
    std::vector<Job> pending;
    if (options_.regrade) {  // every grade forgotten first: interrupted, the plain command resumes
      for (const RosterSubmission& s : submissions_) {
        std::error_code error;
        fs::remove(out_ / folder_name_for(s.student) / "stamp", error);
      }
    }
    std::size_t kept = 0;
    for (const RosterSubmission& s : submissions_) {
      Job job{s, out_ / folder_name_for(s.student), submission_stamp(s.folder, labs_, backend_)};
      if (!options_.regrade && read_file(job.dir / "stamp") == job.stamp &&
          read_grade(s.student, job.dir)) {
        ++kept;
      } else {
        pending.push_back(std::move(job));
      }
    }
    std::cout << "gpulab grade: roster " << options_.roster << ": " << submissions_.size()
              << " submission(s), " << labs_.size() << " lab(s), " << backend_ << " backend; "
              << kept << " already graded and unchanged (kept; --regrade grades them again), "
              << pending.size() << " to grade, " << parallel_ << " at a time; grades in "
              << out_.string() << std::endl;

    const InterruptHandlers handlers;
    const auto start = std::chrono::steady_clock::now();
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> workers;
    for (int w = 0; w < std::min<int>(parallel_, static_cast<int>(pending.size())); ++w) {
      workers.emplace_back([&] {
        for (std::size_t i = next++; i < pending.size() && !stop_now(); i = next++) {
          grade_one(pending[i], pending.size(), start);
        }
      });
    }
    for (std::thread& worker : workers) {
      worker.join();
    }
    write_class_files();

    if (g_interrupted) {
      std::cout << "\ngpulab grade: interrupted: " << done_ << " of " << pending.size()
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

 private:
  bool stop_now() const { return g_interrupted || integrity_failed_; }

  // Grades one submission in a `gpulab grade` of its own and keeps what it wrote.
  void grade_one(const Job& job, std::size_t total, std::chrono::steady_clock::time_point start) {
    std::error_code error;
    fs::remove(job.dir / "stamp", error);  // graded again: not kept until this grading ends
    fs::create_directories(job.dir);
    ProcessSpec spec;
    spec.argv = {(build_dir() / "bin" / "gpulab").string(),
                 "grade",
                 "--submission",
                 job.submission.folder.string(),
                 "--json",
                 (job.dir / "grade.json").string(),
                 "--gradescope",
                 (job.dir / "results.json").string(),
                 "--backend",
                 backend_,
                 "-j",
                 std::to_string(jobs_per_grading_)};
    if (options_.grading.timeout_s > 0) {
      spec.argv.insert(spec.argv.end(), {"--timeout", std::to_string(options_.grading.timeout_s)});
    }
    if (options_.grading.no_sandbox) {
      spec.argv.push_back("--no-sandbox");
    }
    if (!options_.grading.seal.empty()) {
      spec.argv.insert(spec.argv.end(), {"--seal", options_.grading.seal});
    }
    spec.argv.insert(spec.argv.end(), labs_.begin(), labs_.end());
    spec.timeout_s = kGradingLimitPerLabS * static_cast<double>(labs_.size());
    spec.keep_bytes = 4 * 1024 * 1024;
    spec.cancel = &g_interrupted;
    const ProcessResult result = run_process(spec);
    if (result.cancelled) {
      return;  // interrupted: nothing of it is kept
    }
    write_file_atomically(job.dir / "grade.txt", result.output);
    const std::optional<StudentGrade> grade =
        result.exit_code == kSuccess ? read_grade(job.submission.student, job.dir) : std::nullopt;
    const std::scoped_lock lock(mutex_);
    ++done_;
    std::string line;
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
    } else {
      const std::string why =
          result.timed_out ? "took longer than " + format_fixed(spec.timeout_s, 0) + " s"
          : result.exit_code
              ? "gpulab grade exited " + std::to_string(*result.exit_code)
              : "gpulab grade ended by " + signal_description(result.signal.value_or(0));
      failed_.push_back(job.submission.student + ": " + why + " (" +
                        (job.dir / "grade.txt").string() + ")");
      line = "  grading failed: " + why;
    }
    print_progress(job.submission.student + line, total, start);
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
    std::map<std::string, std::vector<int>> histograms;  // by lab: students per tenth of points
    std::map<std::string, int> failures;                 // by "lab test": students who failed it
    std::size_t graded = 0;
    for (const RosterSubmission& s : submissions_) {
      const fs::path dir = out_ / folder_name_for(s.student);
      std::optional<StudentGrade> grade;
      if (read_file(dir / "stamp") == submission_stamp(s.folder, labs_, backend_)) {
        grade = read_grade(s.student, dir);
      }
      if (!grade) {
        rows.push_back({s.student, {}, {}, "not graded"});
        continue;
      }
      ++graded;
      for (const std::string& lab : labs_) {
        std::vector<int>& bins = histograms[lab];
        bins.resize(10);
        const int possible = std::max(1, grade->row.possible[lab]);
        bins[static_cast<std::size_t>(std::min(9, 10 * grade->row.earned[lab] / possible))]++;
      }
      for (const std::string& test : grade->failed) {
        ++failures[test];
      }
      rows.push_back(std::move(grade->row));
    }
    write_file_atomically(out_ / "gradebook.csv", gradebook_csv(labs_, rows));

    std::vector<std::pair<std::string, int>> most(failures.begin(), failures.end());
    std::stable_sort(most.begin(), most.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    json summary = {
        {"schema_version", 1}, {"backend", backend_},   {"students", submissions_.size()},
        {"graded", graded},    {"labs", json::array()}, {"failed_most", json::array()}};
    std::ostringstream text;
    text << "Class summary: " << graded << " of " << submissions_.size()
         << " submission(s) graded, " << backend_ << " backend\n\nScores per lab (students per "
         << "tenth of the points):\n";
    for (const std::string& lab : labs_) {
      const std::vector<int> bins =
          histograms.count(lab) ? histograms.at(lab) : std::vector<int>(10);
      summary["labs"].push_back({{"lab", lab}, {"histogram", bins}});
      text << "  " << lab << " ";
      for (std::size_t b = 0; b < bins.size(); ++b) {
        text << " " << (b * 10) << "-" << (b == 9 ? 100 : b * 10 + 9) << "%: " << bins[b];
      }
      text << "\n";
    }
    text << "\nTests failed most often:\n";
    for (std::size_t i = 0; i < most.size() && i < 15; ++i) {
      summary["failed_most"].push_back({{"test", most[i].first}, {"students", most[i].second}});
      text << "  " << most[i].second << "  " << most[i].first << "\n";
    }
    write_file_atomically(out_ / "summary.json", summary.dump(2) + "\n");
    write_file_atomically(out_ / "summary.txt", text.str());
    std::cout << "\n"
              << text.str() << "\ngradebook: " << (out_ / "gradebook.csv").string()
              << "; each student's reports in " << out_.string() << "/<student>/" << std::endl;
  }

  const RosterOptions& options_;
  std::vector<std::string> labs_;
  std::string backend_;
  int parallel_ = 1;
  int jobs_per_grading_ = 1;
  fs::path out_;
  std::vector<RosterSubmission> submissions_;
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

}  // namespace gpulab::cli
