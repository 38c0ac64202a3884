// `gpulab show FILE`: prints a saved results file as a report.
#include <iostream>
#include <memory>
#include <string>

#include "commands.hpp"
#include "gpulab/core/class_summary.hpp"
#include "gpulab/core/results.hpp"

namespace gpulab::cli {

Command add_show_command(CLI::App& app) {
  CLI::App* command = app.add_subcommand(
      "show", "Print a saved results file (from --json) or class summary as a report.");
  auto path = std::make_shared<std::string>();
  command->add_option("FILE", *path, "A results file written by a gpulab command")->required();
  return {command, [path] {
            // A malformed file is a ResultsError with one line naming the file and location;
            // main() prints it and exits 1.
            // A class summary is a results file too (no results): its figures are shown.
            const nlohmann::json document = load_results_json(*path);
            if (is_class_summary(document)) {
              std::cout << render_class_summary(class_summary_from_json(document, *path));
            } else {
              std::cout << render_report(results_from_json(document, *path));
            }
            return static_cast<int>(kSuccess);
          }};
}

}  // namespace gpulab::cli
