// The subcommands of `gpulab`. Each registers its options on the CLI11 app and runs when chosen;
// run functions return the process exit code (0 success, 1 failure, 2 bad arguments; `gpulab grade`
// also 3, an integrity failure, and 130, a roster run interrupted; `gpulab run LAB` the lab
// program's own).
#pragma once

#include <CLI/CLI.hpp>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "gpulab/core/exit_codes.hpp"   // ExitCode, UsageError
#include "gpulab/grader/session.hpp"    // GradeOptions
#include "gpulab/grader/workspace.hpp"  // CudaDevices

namespace gpulab::cli {

/// The devices of the cuda backend where this command is built with it: query_devices(), made
/// when first asked and kept (a CUDA call costs about a second where a driver is present); empty
/// where the command links the sim (main.cpp).
[[nodiscard]] CudaDevices cuda_devices();

/// The program `gpulab profile` and `gpulab sanitize` run for `target`: a path (with a '/': the
/// program there, UsageError when there is none), else a lab (its report program on `backend`,
/// the solution's with `solution`, the student's with `student`, else as `gpulab run` chooses),
/// built first. `command` names the command in messages ("profile one lab at a time").
[[nodiscard]] std::filesystem::path target_program(const std::string& target, bool solution,
                                                   bool student, const std::string& backend,
                                                   const std::string& command);

/// A private folder (mkdtemp: mode 0700) in the system's temporary directory, named
/// "STEM.XXXXXX" with a unique suffix, removed with what it holds when destroyed: where `gpulab
/// profile` and `gpulab sanitize` have the program they run write its counted launches. Throws
/// std::runtime_error "cannot create a temporary directory for WHAT" when it cannot be made.
class PrivateTempFolder {
 public:
  PrivateTempFolder(const std::string& stem, const std::string& what);
  ~PrivateTempFolder();
  PrivateTempFolder(const PrivateTempFolder&) = delete;
  PrivateTempFolder& operator=(const PrivateTempFolder&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// The options `gpulab grade` and `gpulab check` share: LAB..., --backend, --timeout, -j and
/// --no-sandbox (grade_command.cpp); `options.cuda` is cuda_devices().
void add_grading_options(CLI::App& command, GradeOptions& options);

/// A registered subcommand: its CLI11 app and what runs when the command line names it.
struct Command {
  CLI::App* app = nullptr;   ///< the subcommand, owned by the parent app
  std::function<int()> run;  ///< returns the exit code
};

/// `gpulab device [--json FILE]`: what the machine has, or why there is no CUDA device.
Command add_device_command(CLI::App& app);
/// `gpulab specs [NAME]`: the GPU spec database as a table, or one GPU in detail.
Command add_specs_command(CLI::App& app);
/// `gpulab occupancy --spec NAME (--kernel NAME | --regs N --smem BYTES) [--block N]
/// [--dynamic-smem BYTES]`: active blocks, warps and occupancy per SM, the limiting resource, and
/// a block-size table (docs/occupancy.md).
Command add_occupancy_command(CLI::App& app);
/// `gpulab show FILE`: a saved results file as a report.
Command add_show_command(CLI::App& app);
/// `gpulab run [LAB...] [--solution|--student] [--backend B] [--spec S] [--json F] [-- ARGS]`:
/// the labs' reports; `lab_args` (what followed --) go to each lab's report program.
Command add_run_command(CLI::App& app, const std::vector<std::string>& lab_args);
/// `gpulab grade [LAB...] [--submission DIR] [--backend B] [--json F] [--gradescope F]
/// [--junit F]`: builds the submission's student files and grades them (docs/grading.md).
Command add_grade_command(CLI::App& app);
/// `gpulab check [LAB...] [--backend B] [--brief]`: the student's loop: rebuilds the student's
/// own code, runs the lab's graded tests and prints what failed, where and why.
Command add_check_command(CLI::App& app);
/// `gpulab profile TARGET [--kernel REGEX] [--spec S] [--metrics LIST] [-- ARGS]`: runs a lab's
/// report or a sim program with memory counting on and prints the counts and modeled times per
/// kernel; `program_args` (what followed --) go to the program.
Command add_profile_command(CLI::App& app, const std::vector<std::string>& program_args);
/// `gpulab sanitize TARGET [--solution|--student] [-- ARGS]`: runs a lab's report or a sim
/// program with the sim's sanitizer on for every launch, and says what it checked.
Command add_sanitize_command(CLI::App& app, const std::vector<std::string>& program_args);
/// `gpulab bench [OP] [--level N] [--block N] [--size N] [--backend B] [--spec S] [--json F]`:
/// verifies, then times the levels of one op of the kernel catalog
/// (gpulab/kernels/catalog.hpp).
Command add_bench_command(CLI::App& app);
/// `gpulab view [FILE...] [OPTIONS]`: runs gpulab-view, the viewer, with the same arguments.
Command add_view_command(CLI::App& app);

}  // namespace gpulab::cli
