// Where a slow kernel loses its time, for a timed test's failure message (docs/debugging.md, "A
// slow kernel"): on sim, the work run once more, counted by line, and the rules' largest problems
// of its kernels (gpulab/core/rules.hpp), each with its file and line and the modeled gain of its
// fix. Only when a test has failed: counting by line costs a run.
#pragma once

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "gpulab/core/console.hpp"
#include "gpulab/core/counters.hpp"
#include "gpulab/core/rules.hpp"
#include "gpulab/core/specs.hpp"

#if defined(GPULAB_BACKEND_SIM)
#include "gpulab/sim/runtime.hpp"
#endif

namespace gpulab::testing {

/// "; where its kernels lose time (counted by line on sim, modeled for H100 SXM): KERNEL at
/// FILE:LINE: PROBLEM: WHAT; fixed, the kernel would be N.NNx as fast; ..." with the `count`
/// largest problems of the kernels `work` launches; on cuda, or where nothing is found, a pointer
/// to `gpulab profile LAB --source`.
inline std::string where_time_goes(const std::function<void()>& work, std::size_t count = 2) {
  const std::string look =
      "; `gpulab profile LAB --source` shows what each line of its kernels "
      "costs (sim)";
#if defined(GPULAB_BACKEND_SIM)
  if (!sim::counting_available()) {
    return look;
  }
  const bool by_line = sim::counting_by_line();
  sim::set_counting_by_line(true);
  std::vector<CountedLaunch> launches;
  try {
    launches = sim::count_launches(work);
  } catch (const std::exception&) {
    // The failure being explained is reported already.
  }
  sim::set_counting_by_line(by_line);
  if (launches.empty()) {
    return look;
  }
  const GpuSpec spec = find_spec(launches.front().spec).value_or(default_spec());
  std::vector<std::pair<std::string, Finding>> found;  // kernel, problem
  std::vector<std::string> kernels;
  for (const CountedLaunch& launch : launches) {
    if (std::find(kernels.begin(), kernels.end(), launch.kernel) == kernels.end()) {
      kernels.push_back(launch.kernel);
    }
  }
  for (const std::string& kernel : kernels) {
    std::vector<CountedLaunch> its;
    std::copy_if(launches.begin(), launches.end(), std::back_inserter(its),
                 [&](const CountedLaunch& l) { return l.kernel == kernel; });
    for (Finding& f : find_problems(its, spec)) {
      found.emplace_back(kernel, std::move(f));
    }
  }
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return a.second.speedup > b.second.speedup;
  });
  if (found.empty()) {
    return "; the rules find no problem in its kernels that a fix would gain 5% of" + look;
  }
  std::string text =
      "; where its kernels lose time (counted by line on sim, modeled for " + spec.name + "):";
  for (std::size_t i = 0; i < std::min(count, found.size()); ++i) {
    const auto& [kernel, f] = found[i];
    text += (i == 0 ? " " : "; ") + kernel +
            (f.line == 0 ? std::string()
                         : " at " + std::filesystem::path(f.file).filename().string() + ":" +
                               std::to_string(f.line)) +
            ": " + std::string(to_string(f.problem)) + ": " + f.what +
            "; fixed, the kernel would be " + format_fixed(f.speedup, 2) + "x as fast";
  }
  return text;
#else
  static_cast<void>(work);
  static_cast<void>(count);
  return look;
#endif
}

}  // namespace gpulab::testing
