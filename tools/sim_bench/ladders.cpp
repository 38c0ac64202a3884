// gpulab-sim-bench --ladders (ladders.hpp): every level is verified against its CPU reference,
// then counted once with a cold L2 and modeled; a wrong result is never modeled.
#include "ladders.hpp"

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "errors.hpp"
#include "gpulab/core/console.hpp"
#include "gpulab/core/kernel_table.hpp"
#include "gpulab/core/specs.hpp"
#include "gpulab/kernels/catalog.hpp"
#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/sim/runtime.hpp"

namespace gpulab::sim_bench {
namespace {

// NVIDIA's "An Efficient Matrix Transpose in CUDA C/C++" (Mark Harris, Parallel Forall blog,
// 2013): effective bandwidth (2 x 1024 x 1024 x 4 bytes / time), GB/s, ECC on, 32 x 32 tiles,
// blocks of 32 x 8 threads, on Tesla M2050 and Tesla K20c; and yencal, "Optimizing GPU Matrix
// Transpose: From 14% to 88% of Peak Bandwidth" (2025, benchmark code on GitHub:
// yencal/gpu-matrix-transpose): a 32768 x 32768 float matrix on H100 80GB HBM3, effective
// bandwidth 2 x 32768^2 x 4 B / time, GB/s. Its naive and tiled kernels use blocks of 32 x 32
// threads (one element each); its "Coarsen4" is the 32 x 8 conflict-free kernel; it publishes no
// copy. Keyed by the name of the catalog's transpose level; NaN where a source has no figure.
struct PublishedTranspose {
  std::string_view level;
  double m2050_gb_s;
  double k20c_gb_s;
  double h100_gb_s;
};
constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
constexpr PublishedTranspose kPublishedTranspose[] = {
    {"copy", 105.2, 136.1, kNone},
    {"naive", 18.1, 55.3, 475.5},
    {"coalesced", 51.3, 97.6, 996.1},
    {"conflict-free", 99.5, 144.3, 2772.4},
};
constexpr int kTransposeSide = 1024;
constexpr const char* kLadderSpecs[] = {"v100-sxm2-32gb", "t4", "a100-sxm-40gb", "h100-sxm"};
constexpr int kH100Side = 4096;  // past the L2 (2 x 64 MiB against 50 MiB), launch time small

// The published figures of a transpose level, or nullptr for a level no source measured.
const PublishedTranspose* published_for(std::string_view level) {
  for (const PublishedTranspose& published : kPublishedTranspose) {
    if (published.level == level) {
      return &published;
    }
  }
  return nullptr;
}

// True when the transposes (the published levels but the copy they aim at) get strictly faster
// level by level in `gb_s` (one entry per published level, in ladder order), as they do in the
// published figures.
bool transposes_in_published_order(const std::vector<double>& gb_s) {
  for (std::size_t level = 2; level < gb_s.size(); ++level) {
    if (!(gb_s[level] > gb_s[level - 1])) {
      return false;
    }
  }
  return true;
}

// The catalog's transpose op.
const gpulab::kernels::Op& transpose_op() {
  const gpulab::kernels::Op* op = gpulab::kernels::find_op("transpose");
  if (op == nullptr) {
    throw std::runtime_error("the kernel catalog has no transpose op");
  }
  return *op;
}

// Each level of the catalog's transpose on a side x side matrix (one launch each), counted.
std::vector<gpulab::CountedLaunch> count_transpose_levels(int side) {
  const gpulab::kernels::Op& op = transpose_op();
  const std::unique_ptr<gpulab::kernels::OpProblem> problem =
      op.make_problem(static_cast<std::size_t>(side));
  std::vector<gpulab::CountedLaunch> launches;
  for (const std::vector<gpulab::CountedLaunch>& level : count_levels(op, *problem)) {
    launches.push_back(level.at(0));
  }
  return launches;
}

// The modeled effective bandwidth of a counted transpose on `spec`, and what bounds it.
std::pair<double, gpulab::ModelBound> modeled_gb_s(const gpulab::CountedLaunch& launch, int side,
                                                   const gpulab::GpuSpec& spec) {
  const double bytes = 2.0 * static_cast<double>(side) * side * sizeof(float);
  const gpulab::ModeledTime m = gpulab::model_launch(launch, spec);
  return {bytes / m.time_s / 1e9, m.bound};
}

std::string level_label(const gpulab::kernels::OpLevel& level) {
  return std::to_string(level.number) + " " + std::string(level.name);
}

// A published figure, or "-".
std::string figure(double gb_s) {
  return std::isnan(gb_s) ? "-" : gpulab::format_fixed(gb_s, 1);
}

void run_harris_ladder() {
  const gpulab::kernels::Op& op = transpose_op();
  const std::vector<gpulab::CountedLaunch> launches = count_transpose_levels(kTransposeSide);
  std::vector<gpulab::Column> columns = {{"level", "", gpulab::Align::left},
                                         {"published M2050", "GB/s", gpulab::Align::right},
                                         {"published K20c", "GB/s", gpulab::Align::right}};
  for (const char* key : kLadderSpecs) {
    columns.push_back(
        {std::string("modeled ") + gpulab::find_spec(key)->name, "GB/s", gpulab::Align::right});
  }
  gpulab::Table table(columns);
  std::vector<std::vector<double>> modeled(std::size(kLadderSpecs));
  std::vector<double> m2050;
  std::vector<double> k20c;
  for (std::size_t index = 0; index < op.levels.size(); ++index) {
    const gpulab::kernels::OpLevel& level = op.levels[index];
    const PublishedTranspose* published = published_for(level.name);
    std::vector<std::string> row = {level_label(level),
                                    figure(published ? published->m2050_gb_s : kNone),
                                    figure(published ? published->k20c_gb_s : kNone)};
    if (published != nullptr) {
      m2050.push_back(published->m2050_gb_s);
      k20c.push_back(published->k20c_gb_s);
    }
    for (std::size_t s = 0; s < std::size(kLadderSpecs); ++s) {
      const auto [gb_s, bound] =
          modeled_gb_s(launches.at(index), kTransposeSide, *gpulab::find_spec(kLadderSpecs[s]));
      if (published != nullptr) {
        modeled[s].push_back(gb_s);
      }
      row.push_back(gpulab::format_fixed(gb_s, 1) + " (" + std::string(gpulab::to_string(bound)) +
                    ")");
    }
    table.add_row(row);
  }
  std::printf(
      "Transpose ladder, %d x %d floats: effective bandwidth 2 x %d^2 x 4 B / time. Published: "
      "NVIDIA, \"An Efficient Matrix Transpose in CUDA C/C++\" (2013), measured; modeled: "
      "counted on sim, cold L2, the counted-traffic model (docs/sim.md).\n\n",
      kTransposeSide, kTransposeSide, kTransposeSide);
  std::cout << table << "\n";
  std::printf("published: naive < coalesced < conflict-free on M2050: %s, on K20c: %s\n",
              transposes_in_published_order(m2050) ? "yes" : "no",
              transposes_in_published_order(k20c) ? "yes" : "no");
  for (std::size_t s = 0; s < std::size(kLadderSpecs); ++s) {
    std::printf("modeled %s: naive < coalesced < conflict-free: %s\n",
                gpulab::find_spec(kLadderSpecs[s])->name.c_str(),
                transposes_in_published_order(modeled[s]) ? "yes" : "NO");
  }
}

void run_h100_ladder() {
  const gpulab::kernels::Op& op = transpose_op();
  const std::vector<gpulab::CountedLaunch> launches = count_transpose_levels(kH100Side);
  const gpulab::GpuSpec spec = *gpulab::find_spec("h100-sxm");
  gpulab::Table table({{"level", "", gpulab::Align::left},
                       {"published H100 80GB HBM3", "GB/s", gpulab::Align::right},
                       {"modeled " + spec.name, "GB/s", gpulab::Align::right},
                       {"bound", "", gpulab::Align::left},
                       {"modeled / published", "", gpulab::Align::right}});
  std::vector<double> modeled;
  for (std::size_t index = 0; index < op.levels.size(); ++index) {
    const gpulab::kernels::OpLevel& level = op.levels[index];
    const auto [gb_s, bound] = modeled_gb_s(launches.at(index), kH100Side, spec);
    const PublishedTranspose* entry = published_for(level.name);
    const double published = entry != nullptr ? entry->h100_gb_s : kNone;
    if (entry != nullptr) {
      modeled.push_back(gb_s);
    }
    table.add_row({level_label(level), figure(published), gpulab::format_fixed(gb_s, 1),
                   std::string(gpulab::to_string(bound)),
                   std::isnan(published) ? "-" : gpulab::format_fixed(gb_s / published, 2)});
  }
  std::printf(
      "\nTranspose ladder on H100: modeled at %d x %d floats, published at 32768 x 32768 "
      "(yencal, \"Optimizing GPU Matrix Transpose\" (2025), measured; its naive and coalesced "
      "kernels use 32 x 32 blocks).\n\n",
      kH100Side, kH100Side);
  std::cout << table << "\n";
  std::printf("modeled %s: naive < coalesced < conflict-free: %s\n", spec.name.c_str(),
              transposes_in_published_order(modeled) ? "yes" : "NO");
}

// A level's launches modeled on `spec`: the sum of their times, and the bound of the first.
struct ModeledLevel {
  double seconds = 0;
  gpulab::ModelBound first_bound = gpulab::ModelBound::launch;
};

ModeledLevel model_level(const std::vector<gpulab::CountedLaunch>& launches,
                         const gpulab::GpuSpec& spec) {
  ModeledLevel level;
  for (std::size_t i = 0; i < launches.size(); ++i) {
    const gpulab::ModeledTime m = gpulab::model_launch(launches[i], spec);
    level.seconds += m.time_s;
    if (i == 0) {
      level.first_bound = m.bound;
    }
  }
  return level;
}

// Mark Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007): the time of each of its
// seven kernels summing 2^22 ints on a G80 (GeForce 8800 GTX), ms, in the order of the catalog's
// reduction_ladder levels.
constexpr double kPublishedReductionMs[] = {8.054, 3.456, 1.722, 0.965, 0.536, 0.381, 0.268};
constexpr std::size_t kReductionSize = std::size_t{1} << 22;

// True when every level is strictly faster than the one before.
bool strictly_faster_down(const std::vector<double>& times) {
  for (std::size_t i = 1; i < times.size(); ++i) {
    if (!(times[i] < times[i - 1])) {
      return false;
    }
  }
  return true;
}

// The catalog's reduction_ladder at 2^22 floats: each level verified, then counted once with a
// cold L2 (every pass of it) and modeled on the simulated spec (GPULAB_SIM_SPEC) alone, since its
// level 7 sizes its grid to the device: the sum of its launches' modeled times.
void run_reduction_ladder() {
  const gpulab::kernels::Op* op = gpulab::kernels::find_op("reduction_ladder");
  if (op == nullptr || op->levels.size() != std::size(kPublishedReductionMs)) {
    throw std::runtime_error("the kernel catalog has no seven-level reduction_ladder op");
  }
  const std::unique_ptr<gpulab::kernels::OpProblem> problem = op->make_problem(kReductionSize);
  const std::vector<std::vector<gpulab::CountedLaunch>> levels = count_levels(*op, *problem);
  gpulab::Table table({{"level", "", gpulab::Align::left},
                       {"published G80", "ms", gpulab::Align::right},
                       {"modeled", "us", gpulab::Align::right},
                       {"bound of its first pass", "", gpulab::Align::left}});
  std::vector<double> modeled;
  std::string spec_name;
  for (std::size_t index = 0; index < levels.size(); ++index) {
    const std::vector<gpulab::CountedLaunch>& launches = levels[index];
    const gpulab::GpuSpec spec =
        gpulab::find_spec(launches.at(0).spec).value_or(gpulab::default_spec());
    spec_name = spec.name;
    const ModeledLevel level = model_level(launches, spec);
    modeled.push_back(level.seconds);
    table.add_row({level_label(op->levels[index]),
                   gpulab::format_fixed(kPublishedReductionMs[index], 3),
                   gpulab::format_fixed(level.seconds * 1e6, 1),
                   std::string(gpulab::to_string(level.first_bound))});
  }
  std::printf(
      "\nReduction ladder, 2^22 floats, 256 threads per block. Published: Mark Harris, "
      "\"Optimizing Parallel Reduction in CUDA\" (NVIDIA, 2007), 2^22 ints on a G80, measured; "
      "modeled: counted on sim as %s (GPULAB_SIM_SPEC), cold L2, every pass of a level "
      "summed.\n\n",
      spec_name.c_str());
  std::cout << table << "\n";
  std::printf("modeled %s: each level faster than the one before (the published order): %s\n",
              spec_name.c_str(), strictly_faster_down(modeled) ? "yes" : "NO");
}

// Si Boehm, "How to Optimize a CUDA Matmul Kernel for cuBLAS-like Performance: a Worklog" (2022):
// 4096^2 SGEMM on an RTX A6000 (GA102, as the RTX 3090), GFLOP/s, measured, for the kernels the
// catalog's GEMM levels correspond to: his kernel 2 (one thread per output, coalesced: level 1),
// kernel 3 (shared-memory tiles, 32 x 32 where level 2 has 16 x 16) and kernel 5 (2D
// blocktiling, 128 x 128 tiles of 8 x 8 per thread: level 3, which also reads its fragments with
// 16-byte loads, as his kernel 6 at 18237.3).
constexpr double kPublishedGemmGflops[] = {1986.5, 2980.3, 15971.7};
constexpr int kGemmSide = 2048;  // 256 blocks of level 3 fill every spec; about 3 min on sim
constexpr const char* kGemmSpecs[] = {"v100-sxm2-32gb", "t4",       "a100-sxm-40gb",
                                      "rtx-3090",       "h100-sxm", "h200-sxm"};

// The catalog's GEMM levels at kGemmSide, counted once (cold L2), modeled on each spec.
void run_gemm_ladder() {
  const gpulab::kernels::Op* op = gpulab::kernels::find_op("gemm");
  if (op == nullptr || op->levels.size() != std::size(kPublishedGemmGflops)) {
    throw std::runtime_error("the kernel catalog has no three-level gemm op");
  }
  const std::unique_ptr<gpulab::kernels::OpProblem> problem =
      op->make_problem(static_cast<std::size_t>(kGemmSide));
  const std::vector<std::vector<gpulab::CountedLaunch>> levels = count_levels(*op, *problem);
  std::vector<gpulab::Column> columns = {{"level", "", gpulab::Align::left},
                                         {"published A6000", "GFLOP/s", gpulab::Align::right}};
  for (const char* key : kGemmSpecs) {
    columns.push_back(
        {std::string("modeled ") + gpulab::find_spec(key)->name, "GFLOP/s", gpulab::Align::right});
  }
  gpulab::Table table(columns);
  const double flop = 2.0 * kGemmSide * kGemmSide * kGemmSide;
  std::vector<std::vector<double>> modeled_s(std::size(kGemmSpecs));
  for (std::size_t index = 0; index < levels.size(); ++index) {
    std::vector<std::string> row = {level_label(op->levels[index]),
                                    gpulab::format_fixed(kPublishedGemmGflops[index], 1)};
    for (std::size_t s = 0; s < std::size(kGemmSpecs); ++s) {
      const ModeledLevel level = model_level(levels[index], *gpulab::find_spec(kGemmSpecs[s]));
      modeled_s[s].push_back(level.seconds);
      row.push_back(gpulab::format_fixed(flop / level.seconds / 1e9, 0) + " (" +
                    std::string(gpulab::to_string(level.first_bound)) + ")");
    }
    table.add_row(row);
  }
  std::printf(
      "\nGEMM ladder, %d^3 floats: FLOP/s = 2 x %d^3 / time. Published: Si Boehm, \"How to "
      "Optimize a CUDA Matmul Kernel for cuBLAS-like Performance\" (2022), 4096^3 on an RTX "
      "A6000, measured; modeled: counted on sim, cold L2.\n\n",
      kGemmSide, kGemmSide);
  std::cout << table << "\n";
  for (std::size_t s = 0; s < std::size(kGemmSpecs); ++s) {
    std::printf("modeled %s: each level faster than the one before (the published order): %s\n",
                gpulab::find_spec(kGemmSpecs[s])->name.c_str(),
                strictly_faster_down(modeled_s[s]) ? "yes" : "NO");
  }
}

}  // namespace

std::vector<std::vector<gpulab::CountedLaunch>> count_levels(const gpulab::kernels::Op& op,
                                                             gpulab::kernels::OpProblem& problem) {
  std::vector<std::vector<gpulab::CountedLaunch>> levels;
  for (std::size_t index = 0; index < op.levels.size(); ++index) {
    std::fprintf(stderr, "gpulab-sim-bench: %s level %d (%s)...\n", std::string(op.name).c_str(),
                 op.levels[index].number, std::string(op.levels[index].name).c_str());
    try {
      problem.verify(index, nullptr, op.default_block);
    } catch (const std::runtime_error& e) {
      throw VerificationError(e.what());
    }
    levels.push_back(gpulab::sim::count_launches([&] {
      GPULAB_CHECK(gpulab::sim::reset_modeled_l2());
      problem.launch(index, nullptr, op.default_block);
    }));
  }
  return levels;
}

void run_ladders() {
  if (!gpulab::sim::counting_available()) {
    throw std::runtime_error(gpulab::sim::counting_unavailable_reason());
  }
  run_harris_ladder();
  run_h100_ladder();
  run_reduction_ladder();
  run_gemm_ladder();
}

}  // namespace gpulab::sim_bench
