// gpulab-sim-bench --rules (rules_check.hpp).
#include "rules_check.hpp"

#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/core/console.hpp"
#include "gpulab/core/exit_codes.hpp"
#include "gpulab/core/kernel_table.hpp"
#include "gpulab/core/rules.hpp"
#include "gpulab/core/source_view.hpp"
#include "gpulab/core/specs.hpp"
#include "gpulab/kernels/catalog.hpp"
#include "gpulab/sim/runtime.hpp"
#include "ladders.hpp"

namespace gpulab::sim_bench {
namespace {

// A ladder step whose next level fixes `problem`, and the code of the line that has it.
struct Step {
  std::string_view op;
  std::size_t size;
  int from;  // level numbers
  int to;
  Problem problem;
  std::string_view code;  // a part of the problem line's code
};

constexpr Step kSteps[] = {
    // Coalesced through a padded tile: the conflict-free level (the coalesced level between them
    // fixes the writes too, but reads its tile with 32-way bank conflicts: the next step).
    {"transpose", 4096, 1, 3, Problem::uncoalesced, "out[static_cast<std::size_t>(x) * rows"},
    {"transpose", 4096, 2, 3, Problem::bank_conflicts, "tile[threadIdx.x][threadIdx.y + j]"},
    {"reduction_ladder", std::size_t{1} << 22, 2, 3, Problem::bank_conflicts,
     "partial[index] += partial[index + s]"},
    {"histogram", std::size_t{1} << 22, 1, 2, Problem::atomic_contention,
     "atomicAdd(&counts[key], 1u)"},
};
constexpr const char* kSpecs[] = {"v100-sxm2-32gb", "t4", "a100-sxm-40gb", "h100-sxm"};
constexpr double kMaxFactor = 2;  // the prediction within this factor of the fix's modeled gain

double modeled_seconds(const std::vector<CountedLaunch>& launches, const GpuSpec& spec) {
  double seconds = 0;
  for (const CountedLaunch& launch : launches) {
    seconds += model_launch(launch, spec).time_s;
  }
  return seconds;
}

}  // namespace

int run_rules_check() {
  if (!gpulab::sim::set_counting_by_line(true)) {
    throw std::runtime_error(gpulab::sim::counting_unavailable_reason());
  }
  Table table({{"step", "", Align::left},
               {"spec", "", Align::left},
               {"problem", "", Align::left},
               {"line named", "", Align::left},
               {"predicted", "x", Align::right},
               {"fix modeled", "x", Align::right},
               {"predicted / fix", "", Align::right},
               {"verdict", "", Align::left}});
  bool all_pass = true;
  std::string_view counted_op;  // the steps of one op follow each other: counted once
  std::vector<std::vector<CountedLaunch>> levels;
  for (const Step& step : kSteps) {
    const kernels::Op* op = kernels::find_op(step.op);
    if (op == nullptr) {
      throw std::runtime_error("the kernel catalog has no " + std::string(step.op) + " op");
    }
    if (step.op != counted_op) {
      const std::unique_ptr<kernels::OpProblem> problem = op->make_problem(step.size);
      levels = count_levels(*op, *problem);
      counted_op = step.op;
    }
    const std::vector<CountedLaunch>& from = levels.at(op->level_index(step.from));
    const std::vector<CountedLaunch>& to = levels.at(op->level_index(step.to));
    for (const char* key : kSpecs) {
      const GpuSpec spec = *find_spec(key);
      const double fix = modeled_seconds(from, spec) / modeled_seconds(to, spec);
      const Finding* finding = nullptr;
      const std::vector<Finding> findings = find_problems(from, spec, 0);
      for (const Finding& f : findings) {
        if (f.problem == step.problem) {
          finding = &f;
          break;
        }
      }
      std::string named = "none";
      std::string predicted = "-";
      std::string ratio = "-";
      bool pass = false;
      if (finding != nullptr) {
        const std::string code =
            source_view({SourceLineCounters{finding->file, finding->line, {}}}).front().code;
        named = std::filesystem::path(finding->file).filename().string() + ":" +
                std::to_string(finding->line);
        predicted = format_fixed(finding->speedup, 2);
        const double r = finding->speedup / fix;
        ratio = format_fixed(r, 2);
        pass = code.find(step.code) != std::string::npos && r <= kMaxFactor && r >= 1 / kMaxFactor;
        if (code.find(step.code) == std::string::npos) {
          named += " (not the line the fix changes)";
        }
      }
      all_pass = all_pass && pass;
      table.add_row({std::string(step.op) + " " + std::to_string(step.from) + " -> " +
                         std::to_string(step.to),
                     spec.name, std::string(to_string(step.problem)), named, predicted,
                     format_fixed(fix, 2), ratio, pass ? "PASS" : "FAIL"});
    }
  }
  gpulab::sim::set_counting_by_line(false);
  std::printf(
      "The rules' predicted speed-ups (gpulab profile --source) against the next level's modeled "
      "speed-up: each level counted by line on sim (cold L2), both modeled on each spec. Pass: the "
      "rule names the line the next level changes, and predicts within %.0fx.\n\n",
      kMaxFactor);
  std::cout << table;
  std::printf("%s\n", all_pass ? "every step PASSES" : "some step FAILS");
  return all_pass ? kSuccess : kFailure;
}

}  // namespace gpulab::sim_bench
