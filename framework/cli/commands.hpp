// The subcommands of `gpulab`. Each registers its options on the CLI11 app and runs when chosen;
// run functions return the process exit code (0 success, 1 failure, 2 bad arguments; `gpulab grade`
// also 3, an integrity failure, and 130, a roster run interrupted; `gpulab run LAB` the lab
// program's own).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpulab::cli {

/// Exit codes of every gpulab command.
enum ExitCode : int { kSuccess = 0, kFailure = 1, kUsage = 2 };

/// An error the user can fix: printed as one line "gpulab: error: <message>", exit code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

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
/// `gpulab bench [OP] [--level N] [--block N] [--size N] [--backend B] [--spec S] [--json F]`:
/// verifies, then times the levels of one op of the kernel catalog
/// (gpulab/kernels/catalog.hpp).
Command add_bench_command(CLI::App& app);
/// `gpulab view [FILE...] [OPTIONS]`: runs gpulab-view, the viewer, with the same arguments.
Command add_view_command(CLI::App& app);

}  // namespace gpulab::cli
