// `gpulab grade --roster DIR`: a whole class graded on one machine. Each submission (a folder of
// DIR) is graded by its own `gpulab grade --submission` process, with the isolation, sandbox and
// seal checks of a single grade, N at a time (one grading slot each). Every graded submission is
// kept in the output folder, stamped with a digest of what it held: a run that is interrupted
// loses nothing, and running the same command again grades only what is new or changed
// (--regrade: everything). The output folder gets a gradebook (gradebook.csv: one row per
// student, one column per lab and the total), each student's reports (grade.txt, grade.json,
// Gradescope's results.json) and a class summary (summary.json, summary.txt: the score histogram
// of each lab and the tests failed most often).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "gpulab/grader/session.hpp"
#include "gpulab/grader/slurm.hpp"

namespace gpulab {

/// One student's submission in a roster.
struct RosterSubmission {
  std::string student;           ///< the name in the gradebook
  std::filesystem::path folder;  ///< what is graded
};

/// The submissions of a roster folder, by student name: one per sub-folder (hidden ones skipped),
/// named after it; in a Gradescope export (a submission_metadata.yml beside submission_<id>
/// folders), named by the submitter's email (else name) in that file. Throws UsageError when
/// `roster` is not a folder or holds no submission, two submissions get the same name, or a name
/// holds a control character (a newline would break the task lists of --slurm).
[[nodiscard]] std::vector<RosterSubmission> find_roster(const std::filesystem::path& roster);

/// A digest of what `folder` holds (every regular file's path and contents; .git skipped) and of
/// what it is graded for: a submission whose stamp is unchanged is not graded again.
[[nodiscard]] std::string submission_stamp(const std::filesystem::path& folder,
                                           const std::vector<std::string>& labs,
                                           const std::string& backend);

/// One row of the gradebook.
struct GradebookRow {
  std::string student;
  std::map<std::string, int> earned;    ///< points by lab id
  std::map<std::string, int> possible;  ///< possible points by lab id
  std::string status;                   ///< "graded", or why there is no grade
};

/// The gradebook as CSV: student, one column per lab (earned points), total, possible, status.
/// Fields are quoted where needed, and a field a spreadsheet would run as a formula (=, +, -, @)
/// is prefixed with an apostrophe.
[[nodiscard]] std::string gradebook_csv(const std::vector<std::string>& labs,
                                        const std::vector<GradebookRow>& rows);

struct RosterOptions {
  GradeOptions grading;  ///< labs, backend, test timeout, sandbox, seal
  std::string roster;    ///< the folder of submissions
  std::string out;       ///< where the grades go (default: <roster>-grades beside it)
  int parallel = 0;      ///< submissions graded at once (0: the cores and grading slots allow)
  bool regrade = false;  ///< grade every submission again
  /// Submit the gradings to Slurm as a job array (slurm.hpp) instead of grading here.
  bool slurm = false;
  SlurmOptions slurm_options;
  bool wait = false;      ///< with slurm: wait for the array to end, then collect
  bool collect = false;   ///< only write the gradebook and summary, and say what is missing
  std::string task_list;  ///< an array task's round (internal: the job script passes it)
  int task = -1;          ///< the array task's index (internal)
};

/// Grades the roster (the file comment), printing a line per graded submission with a progress
/// bar and an estimate of the time left. Exit code: 0 when every submission was graded, 1 when
/// the grading of some failed (they are listed; running again retries them), 3 on an integrity
/// failure (grading stops), 130 when interrupted (SIGINT or SIGTERM: the gradings in progress are
/// killed with everything they started; what was graded is kept).
///
/// With `slurm`: submits what is not graded yet as one job array (a round: slurm/round-N.* in the
/// output folder) and returns 0 once sbatch accepted it; with `wait`, returns what collecting
/// returns once the array has ended. With `collect`: writes the gradebook and the class summary
/// from what is graded, lists each submission without a grade and why (its task's state, or
/// Slurm's), and returns 0 when every submission is graded, 1 otherwise. With `task` (what an
/// array task runs): grades the task's lines of `task_list`, then returns as a local run would.
[[nodiscard]] int grade_roster(const RosterOptions& options);

}  // namespace gpulab
