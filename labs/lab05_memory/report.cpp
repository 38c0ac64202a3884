// `gpulab run lab05`: device memory, through your lab 05 code. Instructor-owned.
//   1  what a function costs: measure_memory_usage on one attention forward per level (peak,
//      what it left allocated, its allocations);
//   2  memory per attention level and sequence length (attention_memory_by_length) with the
//      fitted growth exponent (fit_growth_exponent), saved as attention_level_memory results for
//      the viewer's levels panel;
//   3  the caching allocator over repeated steps: peak, current and cached memory, cache hits,
//      blocks taken from the device and time, then empty_cache; the same steps' time with
//      cudaMalloc and cudaFree (an allocator_step result);
//   4  checkpointing a stack of layers: store-all against every k, peak in activations, extra
//      forwards, identical results; the k chosen for a memory budget.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpulab/core/console.hpp"
#include "gpulab/core/memory_stats.hpp"
#include "gpulab/core/results.hpp"
#include "gpulab/kernels/attention.hpp"
#include "gpulab/kernels/layer_stack.hpp"
#include "gpulab/labkit/lab_main.hpp"
#include "gpulab/runtime/cuda_check.hpp"
#include "gpulab/runtime/memory.hpp"
#include "gpulab/runtime/stream.hpp"
#include "lab05.hpp"

namespace {

namespace kernels = gpulab::kernels;
namespace lab05 = gpulab::lab05;
using gpulab::Align;
using gpulab::format_bytes;
using gpulab::format_fixed;
using gpulab::Metric;
using gpulab::Table;
using gpulab::labkit::LabContext;
using kernels::AttentionConfig;

// Levels 0 to 4, as the kernel catalog has them.
const int kLevels = static_cast<int>(kernels::attention_levels().size());

// "0 unfused", ...: the level's number and its name in the kernel catalog.
std::string level_label(int level) {
  return std::to_string(level) + " " +
         std::string(kernels::attention_levels()[static_cast<std::size_t>(level)].name);
}

// The attention shape of sections 1 and 2 and its lengths. One head of 16 on sim: the S x S
// tensors outgrow the O(S x D) ones at a few hundred tokens, and the CPU simulation stays quick.
AttentionConfig attention_config(const LabContext& ctx) {
  return ctx.on_sim() ? AttentionConfig{1, 256, 16, 1, false}
                      : AttentionConfig{1, 2048, 64, 1, false};
}

std::vector<int> attention_lengths(const LabContext& ctx) {
  if (ctx.on_sim()) {
    return ctx.quick ? std::vector<int>{64, 128, 256} : std::vector<int>{128, 256, 512, 1024};
  }
  return ctx.quick ? std::vector<int>{1024, 2048, 4096}
                   : std::vector<int>{1024, 2048, 4096, 8192, 16384};
}

std::string shape_of(const AttentionConfig& c) {
  return "batch " + std::to_string(c.batch) + ", d_model " + std::to_string(c.d_model) +
         ", heads " + std::to_string(c.heads);
}

// 1: measure_memory_usage around one forward pass of each level.
void cost_of_one_pass(LabContext& ctx) {
  std::ostream& out = *ctx.out;
  AttentionConfig config = attention_config(ctx);
  config.seq_len = attention_lengths(ctx).front();
  out << "1. What one attention forward costs in device memory (measure_memory_usage), seq_len "
      << config.seq_len << ", " << shape_of(config) << "\n";
  Table table({{"level", "", Align::left},
               {"peak memory", "", Align::right},
               {"current memory", "", Align::right},
               {"allocations", "", Align::right},
               {"buffers", "", Align::right}});
  const auto levels = kernels::attention_levels();
  for (int level = 0; level < kLevels; ++level) {
    const lab05::MemoryUsage usage = lab05::measure_memory_usage([&] {
      kernels::AttentionBuffers buffers(config, kernels::attention_workspace(level));
      kernels::upload(kernels::make_attention_inputs(config, 1), buffers);
      levels[static_cast<std::size_t>(level)].launch(config, buffers, nullptr);
    });
    table.add_row(
        {level_label(level), format_bytes(static_cast<double>(usage.peak_allocated_bytes)),
         format_bytes(static_cast<double>(usage.leaked_bytes)), std::to_string(usage.allocations),
         format_bytes(static_cast<double>(
             kernels::AttentionBuffers::bytes_for(config, kernels::attention_workspace(level))))});
  }
  out << table;
  out << "peak memory: the most held at once during the pass; current memory: what it left "
         "allocated (a leak when not 0); buffers: what its AttentionBuffers take, computed. "
      << (ctx.on_sim() ? "On sim every cudaMalloc is seen."
                       : "On a GPU the accounting sees the framework's allocations (DeviceBuffer, "
                         "device_malloc), not cuBLAS's own.")
      << "\n\n";
}

// 2: memory per level and sequence length, and the fitted exponent.
void growth(LabContext& ctx) {
  std::ostream& out = *ctx.out;
  const AttentionConfig config = attention_config(ctx);
  const std::vector<int> lengths = attention_lengths(ctx);
  out << "2. Peak memory of each level against seq_len (attention_memory_by_length), "
      << shape_of(config) << "\n";
  std::vector<gpulab::Column> columns = {{"seq_len", "", Align::right}};
  std::vector<std::vector<double>> bytes(kLevels);
  const std::vector<double> x(lengths.begin(), lengths.end());
  const auto levels = kernels::attention_levels();
  for (int level = 0; level < kLevels; ++level) {
    columns.push_back({"L" + std::to_string(level), "", Align::right});
    const std::vector<std::size_t> peaks =
        lab05::attention_memory_by_length(config, level, lengths);
    if (peaks.size() != lengths.size()) {
      throw std::runtime_error("attention_memory_by_length returned " +
                               std::to_string(peaks.size()) + " sizes for " +
                               std::to_string(lengths.size()) + " lengths");
    }
    for (std::size_t i = 0; i < lengths.size(); ++i) {
      bytes[level].push_back(static_cast<double>(peaks[i]));
      AttentionConfig at = config;
      at.seq_len = lengths[i];
      gpulab::Result result{
          gpulab::result_kind::attention_level_memory,
          {{"seq_len", std::to_string(at.seq_len)},
           {"d_model", std::to_string(at.d_model)},
           {"heads", std::to_string(at.heads)},
           {"causal", "false"},
           {"level", std::to_string(level)},
           {"level_name", std::string(levels[static_cast<std::size_t>(level)].name)}},
          {Metric::measured("memory_bytes", bytes[level].back())}};
      ctx.results.results.push_back(std::move(result));
    }
  }
  Table table(columns);
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    std::vector<std::string> row = {std::to_string(lengths[i])};
    for (int level = 0; level < kLevels; ++level) {
      row.push_back(format_bytes(bytes[level][i]));
    }
    table.add_row(row);
  }
  std::vector<std::string> exponents = {"exponent"};
  for (int level = 0; level < kLevels; ++level) {
    exponents.push_back(format_fixed(lab05::fit_growth_exponent(x, bytes[level]), 2));
  }
  table.add_row(exponents);
  out << table;
  out << "exponent: the fitted p of memory ~ seq_len^p. Levels 0 to 2 hold S x S scores (level 0 "
         "also the probabilities): p near 2 once those outgrow the O(S x d_model) buffers. Flash "
         "attention (3, 4) never holds them: p near 1.\n\n";
}

// 3: the caching allocator over repeated steps of the same shape, against cudaMalloc and cudaFree.
void caching(LabContext& ctx) {
  std::ostream& out = *ctx.out;
  out << "3. The caching allocator: four steps of the same allocations (the buffers of one "
         "attention layer, on two streams), then empty_cache; times: "
      << ctx.measured_label() << "\n";
  const AttentionConfig config = attention_config(ctx);
  const std::size_t rows = static_cast<std::size_t>(config.seq_len) * config.d_model;
  const std::size_t square = static_cast<std::size_t>(config.seq_len) * config.seq_len;
  const std::vector<std::size_t> sizes = {rows * 4,   rows * 12, square * 4,
                                          square * 4, rows * 4,  rows * 4};
  gpulab::Stream streams[2];
  lab05::CachingAllocator allocator;
  Table table({{"step", "", Align::left},
               {"peak memory", "", Align::right},
               {"current memory", "", Align::right},
               {"cached memory", "", Align::right},
               {"requests", "", Align::right},
               {"cache hits", "", Align::right},
               {"from the device", "", Align::right},
               {"time", "ms", Align::right}});
  // The accounting's figures, above what the program held before the steps.
  const gpulab::MemoryStats base = gpulab::memory_stats();
  const auto above = [](std::size_t now, std::size_t then) {
    return format_bytes(static_cast<double>(now > then ? now - then : 0));
  };
  const auto add_row = [&](const std::string& step, const lab05::AllocatorStats& before,
                           const std::string& time) {
    const gpulab::MemoryStats m = gpulab::memory_stats();
    const lab05::AllocatorStats s = allocator.stats();
    table.add_row(
        {step, above(m.peak_allocated_bytes, base.allocated_bytes),
         above(m.allocated_bytes, base.allocated_bytes),
         above(m.reserved_bytes - m.allocated_bytes, base.reserved_bytes - base.allocated_bytes),
         std::to_string(s.requests - before.requests),
         std::to_string(s.cache_hits - before.cache_hits),
         std::to_string(s.device_allocations - before.device_allocations), time});
  };
  double cached_ms = 0;  // the steps after the first
  double first_ms = 0;
  for (int step = 1; step <= 4; ++step) {
    gpulab::reset_peak_memory_stats();
    const lab05::AllocatorStats before = allocator.stats();
    cudaStream_t stream = streams[step % 2].get();
    // Waits for the step's work at its end: the next step's stream may take the blocks.
    const double ms = gpulab::event_timed_ms(stream, [&] {
      std::vector<void*> blocks;
      for (const std::size_t bytes : sizes) {
        blocks.push_back(allocator.allocate(bytes, stream));
        GPULAB_CHECK(cudaMemsetAsync(blocks.back(), 0, bytes, stream));
      }
      for (void* block : blocks) {
        allocator.free(block);
      }
    });
    (step == 1 ? first_ms : cached_ms) += ms;
    add_row(std::to_string(step) + (step % 2 == 0 ? " (stream 2)" : " (stream 1)"), before,
            format_fixed(ms, 3));
  }
  gpulab::reset_peak_memory_stats();
  const lab05::AllocatorStats before = allocator.stats();
  allocator.empty_cache();
  add_row("empty_cache", before, "");
  out << table;
  out << "From the memory accounting, above what was held before the steps. peak: the most "
         "allocated at once in the step; current: allocated after it; cached: reserved but not "
         "allocated (kept for reuse). Step 1 takes every block from the device; "
         "the steps after reuse them, also across streams once the other stream's work is done. "
         "empty_cache gives the cached blocks back. time: from an event recorded on the step's "
         "stream before its first allocation to one after its last free.\n";
  // The same steps with cudaMalloc and cudaFree: every step pays for them, and each cudaFree
  // waits for the whole device.
  double uncached_ms = 0;
  for (int step = 1; step <= 4; ++step) {
    cudaStream_t stream = streams[step % 2].get();
    uncached_ms += gpulab::event_timed_ms(stream, [&] {
      std::vector<gpulab::DeviceBuffer<unsigned char>> blocks;
      for (const std::size_t bytes : sizes) {
        blocks.emplace_back(bytes);
        GPULAB_CHECK(cudaMemsetAsync(blocks.back().data(), 0, bytes, stream));
      }
    });
  }
  cached_ms /= 3;
  uncached_ms /= 4;
  out << "A step takes " << format_fixed(uncached_ms, 3) << " ms with cudaMalloc and cudaFree, "
      << format_fixed(first_ms, 3) << " ms the first time with the cache and "
      << format_fixed(cached_ms, 3) << " ms once it hits ("
      << format_fixed(uncached_ms / cached_ms, 1)
      << "x faster): each cudaMalloc is a call into the driver, and each cudaFree also waits for "
         "the whole device.\n\n";
  ctx.results.results.push_back(
      {gpulab::result_kind::allocator_step,
       {{"allocations_per_step", std::to_string(sizes.size())}},
       {ctx.timed("uncached_time_ms", uncached_ms), ctx.timed("first_cached_time_ms", first_ms),
        ctx.timed("cached_time_ms", cached_ms)}});
}

// 4: checkpointing a stack of layers.
void checkpointing(LabContext& ctx) {
  std::ostream& out = *ctx.out;
  const int layers = 32;
  const std::size_t width = ctx.on_sim() ? (ctx.quick ? 4096 : 16384) : (std::size_t{1} << 22);
  const kernels::LayerStack stack = kernels::layer_stack(layers, width, 5);
  out << "4. Checkpointing: a reverse pass through " << layers << " layers of " << width
      << " values (one activation: " << format_bytes(static_cast<double>(stack.activation_bytes()))
      << ")\n";
  gpulab::DeviceBuffer<float> input(width);
  gpulab::DeviceBuffer<float> grad_output(width);
  input.copy_from(kernels::layer_stack_input(width, 1));
  grad_output.copy_from(kernels::layer_stack_input(width, 2));
  gpulab::Stream stream;
  gpulab::DeviceBuffer<float> output(width);
  gpulab::DeviceBuffer<float> grad_input(width);
  const lab05::CheckpointRun all = lab05::store_all_backward(
      stack, input.data(), output.data(), grad_output.data(), grad_input.data(), stream.get());
  const std::vector<float> all_output = output.to_vector();
  const std::vector<float> all_grad = grad_input.to_vector();
  const auto activations = [&](std::size_t bytes) {
    return format_fixed(static_cast<double>(bytes) / static_cast<double>(stack.activation_bytes()),
                        1);
  };
  Table table({{"scheme", "", Align::left},
               {"peak memory", "", Align::right},
               {"activations", "", Align::right},
               {"bound", "", Align::right},
               {"forwards", "", Align::right},
               {"extra work", "%", Align::right},
               {"same result", "", Align::left}});
  table.add_row({"store all", format_bytes(static_cast<double>(all.peak_bytes)),
                 activations(all.peak_bytes), "", std::to_string(all.forward_layers), "0", "-"});
  for (const int k : {2, 4, 6, 8, 16, 32}) {
    const lab05::CheckpointRun run = lab05::checkpointed_backward(
        stack, k, input.data(), output.data(), grad_output.data(), grad_input.data(), stream.get());
    const bool same = output.to_vector() == all_output && grad_input.to_vector() == all_grad;
    const int bound = (layers + k - 1) / k + k + 1;
    table.add_row({"every " + std::to_string(k), format_bytes(static_cast<double>(run.peak_bytes)),
                   activations(run.peak_bytes), std::to_string(bound),
                   std::to_string(run.forward_layers),
                   format_fixed(100.0 * (static_cast<double>(run.forward_layers) /
                                             static_cast<double>(all.forward_layers) -
                                         1.0),
                                0),
                   same ? "yes" : "NO"});
  }
  out << table;
  out << "activations: the peak in units of one activation; bound: ceil(N/k) + k + 1, least "
         "near k = sqrt(N); forwards: layer evaluations, N for store-all plus the recomputed "
         "ones. Memory drops from N to about 2 sqrt(N) activations for at most one more "
         "forward pass.\n";
  for (const int budget : {12, 16, 24, 40}) {
    try {
      const int k = lab05::choose_checkpoint_interval(
          layers, stack.activation_bytes(),
          static_cast<std::size_t>(budget) * stack.activation_bytes());
      out << "A budget of " << budget << " activations: k = " << k << ".\n";
    } catch (const std::invalid_argument& e) {
      out << "A budget of " << budget << " activations: none fits (" << e.what() << ").\n";
    }
  }
}

void report(LabContext& ctx) {
  cost_of_one_pass(ctx);
  growth(ctx);
  caching(ctx);
  checkpointing(ctx);
}

}  // namespace

int main(int argc, char** argv) {
  return gpulab::labkit::lab_main(argc, argv, GPULAB_LAB_INFO, {}, report);
}
