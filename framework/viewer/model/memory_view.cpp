// The counted memory traffic panel's views (views.hpp): plain data derived from results files,
// which nothing here trusts beyond what the loader checked (view_support.hpp).
#include "gpulab/viewer/views.hpp"

#include <algorithm>
#include <string_view>
#include <utility>

#include "view_support.hpp"

namespace gpulab::viewer {

using namespace detail;  // the views' shared readers (view_support.hpp)

std::vector<MemoryView> memory_views(const ResultsFile& file) {
  std::vector<MemoryView> views;
  for (const Result& r : file.results) {
    if (r.name != result_kind::counted_kernel) {
      continue;
    }
    // Counted on sim, or measured by Nsight Compute on a GPU (gpulab profile --backend cuda); a
    // kernel's figures all come from one of the two, counted first, never a mix.
    const bool any_counted = std::any_of(r.metrics.begin(), r.metrics.end(), [](const Metric& m) {
      return m.provenance == Provenance::counted;
    });
    const Provenance source = any_counted ? Provenance::counted : Provenance::measured;
    // A figure by its Nsight Compute (or gpulab__) name, whatever unit suffix it has.
    const auto counted = [&](std::string_view name) -> std::optional<double> {
      for (const Metric& m : r.metrics) {
        if (m.provenance == source && metric_stem(m.name) == name && m.value) {
          return m.value;
        }
      }
      return std::nullopt;
    };
    const auto sum = [](std::optional<double> a, std::optional<double> b) -> std::optional<double> {
      if (!a && !b) {
        return std::nullopt;
      }
      return a.value_or(0) + b.value_or(0);
    };
    MemoryView v;
    const auto param = [&](const char* key) {
      const auto it = r.params.find(key);
      return it == r.params.end() ? std::string() : it->second;
    };
    v.kernel = param("kernel");
    v.launches = param("launches");
    v.modeled_bound = param("bound");
    v.provenance = source;
    v.loads = {counted("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
               counted("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
               counted("l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio"),
               counted("lts__t_sectors_srcunit_tex_op_read.sum"), counted("dram__bytes_read.sum")};
    v.stores = {counted("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"),
                counted("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"),
                counted("l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_st.ratio"),
                counted("lts__t_sectors_srcunit_tex_op_write.sum"),
                counted("dram__bytes_write.sum")};
    v.load_efficiency_percent = counted("gpulab__global_ld_efficiency.pct");
    v.partial_store_sectors = counted("gpulab__global_st_partial_sectors.sum");
    v.l2_hit_percent = counted("lts__t_sector_hit_rate.pct");
    v.shared_requests = sum(counted("smsp__inst_executed_op_shared_ld.sum"),
                            counted("smsp__inst_executed_op_shared_st.sum"));
    v.shared_wavefronts = sum(counted("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
                              counted("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"));
    v.bank_conflicts = sum(counted("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"),
                           counted("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"));
    v.lanes_per_request = counted("gpulab__lanes_per_memory_request.ratio");
    for (const Metric& m : r.metrics) {
      if (m.name == "time_ms" && m.provenance == Provenance::modeled && m.value) {
        v.modeled_ms = m.value;
        v.modeled_spec = m.spec;
      }
    }
    views.push_back(std::move(v));
  }
  return views;
}

}  // namespace gpulab::viewer
