// `gpulab bench [OP] [--level N] [--block N] [--size N] [--backend cuda|sim] [--spec NAME]
// [--json FILE] [--quick]`: runs gpulab-bench.<backend> (bench_program.cpp), which verifies and
// times the levels of one op of the kernel catalog, in its own process.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "gpulab/grader/workspace.hpp"

namespace gpulab::cli {

namespace {

struct BenchOptions {
  std::string op;
  std::optional<int> level;
  std::optional<unsigned> block;
  std::optional<std::size_t> size;
  std::string backend;
  std::string spec;
  std::string json;
  bool quick = false;
};

int bench(const BenchOptions& options) {
  const std::string backend = choose_backend(build_manifest(), options.backend, cuda_devices());
  const std::filesystem::path program = build_dir() / "bin" / ("gpulab-bench." + backend);
  if (!std::filesystem::exists(program)) {
    throw std::runtime_error(program.string() +
                             " is not built (it is part of the gpulab-programs target)");
  }
  std::vector<std::string> args;
  if (!options.op.empty()) {
    args.push_back(options.op);
  }
  if (options.level) {
    args.insert(args.end(), {"--level", std::to_string(*options.level)});
  }
  if (options.block) {
    args.insert(args.end(), {"--block", std::to_string(*options.block)});
  }
  if (options.size) {
    args.insert(args.end(), {"--size", std::to_string(*options.size)});
  }
  if (!options.spec.empty()) {
    args.insert(args.end(), {"--spec", options.spec});
  }
  if (!options.json.empty()) {
    args.insert(args.end(), {"--json", options.json});
  }
  if (options.quick) {
    args.emplace_back("--quick");
  }
  return run_program(program, args);
}

}  // namespace

Command add_bench_command(CLI::App& app) {
  CLI::App* command = app.add_subcommand(
      "bench",
      "Verify, then time every level of one op of the kernel catalog (without OP: list them).");
  auto options = std::make_shared<BenchOptions>();
  command->add_option("OP", options->op,
                      "vector_add, reduction, reduction_ladder, histogram, transpose, ...");
  command->add_option_function<int>(
      "--level", [options](int level) { options->level = level; },
      "Only this level (default: every level)");
  command
      ->add_option_function<unsigned>(
          "--block", [options](unsigned block) { options->block = block; },
          "Threads per block, for ops whose levels take one")
      ->check(CLI::Range(1u, 1024u));
  command->add_option_function<std::size_t>(
      "--size", [options](std::size_t size) { options->size = size; },
      "Problem size (its meaning per op: `gpulab bench` lists it)");
  command
      ->add_option("--backend", options->backend,
                   "cuda or sim (default: cuda when a GPU is usable, else sim)")
      ->check(CLI::IsMember({"cuda", "sim"}));
  command->add_option("--spec", options->spec,
                      "GPU of the roofline and, on sim, the GPU simulated (see `gpulab specs`)");
  command->add_option("--json", options->json, "Also save the results to this JSON file");
  command->add_flag("--quick", options->quick, "Fewer samples");
  command->footer(
      "On sim, times come from the modeled clock: each kernel's time modeled from its counted "
      "memory traffic on the spec (docs/sim.md). A level whose output differs from the CPU "
      "reference is reported and never timed (exit 1).");
  return {command, [options] { return bench(*options); }};
}

}  // namespace gpulab::cli
