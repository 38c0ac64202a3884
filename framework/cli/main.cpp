// gpulab: the command-line entry point. See `gpulab --help`.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "commands.hpp"
#include "gpulab/core/version.hpp"
#include "gpulab/runtime/device_query.hpp"

namespace {

using gpulab::kFailure;
using gpulab::kSuccess;
using gpulab::kUsage;

// One line for a bad command line, never CLI11's multi-line text.
int usage_error(const std::string& message) {
  std::fprintf(stderr, "gpulab: error: %s (see gpulab --help)\n", message.c_str());
  return kUsage;
}

}  // namespace

namespace gpulab::cli {

CudaDevices cuda_devices() {
  if (std::string_view(backend_name()) != "cuda") {
    return {};
  }
  return [] {
    static const DeviceQuery query = query_devices();
    return query;
  };
}

}  // namespace gpulab::cli

int main(int argc, char** argv) {
  CLI::App app{"gpulab: measure, profile and fix GPU kernels; labs, autograder and viewer.",
               "gpulab"};
  app.set_version_flag("--version",
                       gpulab::version_string() + ", " + gpulab::backend_name() + " backend");
  app.require_subcommand(1);
  app.footer(
      "Run `gpulab COMMAND --help` for a command's options. Exit codes: 0 success, 1 failure, "
      "2 bad arguments.");

  // Everything after "--" belongs to a lab's report program (gpulab run LAB -- ARGS) or the
  // profiled or sanitized program (gpulab profile TARGET -- ARGS, gpulab sanitize TARGET -- ARGS).
  std::vector<std::string> args(argv + 1, argv + argc);
  std::vector<std::string> lab_args;
  if (const auto dashes = std::find(args.begin(), args.end(), "--"); dashes != args.end()) {
    lab_args.assign(dashes + 1, args.end());
    args.erase(dashes, args.end());
    if (args.empty() ||
        (args.front() != "run" && args.front() != "profile" && args.front() != "sanitize")) {
      return usage_error(
          "arguments after -- are only for `gpulab run`, `gpulab profile` and `gpulab sanitize`");
    }
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes a reversed vector

  const std::vector<gpulab::cli::Command> commands = {
      gpulab::cli::add_device_command(app),
      gpulab::cli::add_specs_command(app),
      gpulab::cli::add_show_command(app),
      gpulab::cli::add_run_command(app, lab_args),
      gpulab::cli::add_check_command(app),
      gpulab::cli::add_grade_command(app),
      gpulab::cli::add_occupancy_command(app),
      gpulab::cli::add_view_command(app),
      gpulab::cli::add_profile_command(app, lab_args),
      gpulab::cli::add_sanitize_command(app, lab_args),
      gpulab::cli::add_bench_command(app),
  };

  try {
    app.parse(args);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return usage_error(e.what());
  }

  try {
    for (const gpulab::cli::Command& command : commands) {
      if (command.app->parsed()) {
        return command.run();
      }
    }
    return usage_error("no command given");
  } catch (const gpulab::UsageError& e) {
    return usage_error(e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpulab: error: %s\n", e.what());
    return kFailure;
  }
  return kSuccess;
}
