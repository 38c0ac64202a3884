// `gpulab show FILE`: prints a saved results file as a report.
#include <iostream>
#include <memory>
#include <string>

#include "commands.hpp"
#include "gpulab/core/results.hpp"

namespace gpulab::cli {

Command add_show_command(CLI::App& app) {
  CLI::App* command =
      app.add_subcommand("show", "Print a saved results file (from --json) as a report.");
  auto path = std::make_shared<std::string>();
  command->add_option("FILE", *path, "A results file written by a gpulab command")->required();
  return {command, [path] {
            // A malformed file is a ResultsError with one line naming the file and location;
            // main() prints it and exits 1.
            std::cout << render_report(load_results(*path));
            return static_cast<int>(kSuccess);
          }};
}

}  // namespace gpulab::cli
