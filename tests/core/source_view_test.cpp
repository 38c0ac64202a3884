// A kernel's source view (source_view.hpp): each line's L1 share, its code read from its file,
// and the hottest lines.
#include "gpulab/core/source_view.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "temp_dir.hpp"

namespace {

using gpulab::SourceLineCounters;

SourceLineCounters line(const std::string& file, unsigned number, std::uint64_t sectors,
                        std::uint64_t wavefronts) {
  SourceLineCounters l{file, number, {}};
  l.counters.global_load.sectors = sectors;
  l.counters.shared_load.wavefronts = wavefronts;
  return l;
}

TEST(SourceView, LinesRankByTheBytesTheyMoveThroughL1) {
  gpulab::MemoryCounters c;
  c.global_load.sectors = 1;
  c.global_store.sectors = 2;
  c.global_atomic.sectors = 3;
  c.shared_store.wavefronts = 1;
  c.shared_atomic.wavefronts = 1;
  EXPECT_EQ(gpulab::l1_bytes(c), 32u * 6 + 128u * 2);
}

TEST(SourceView, EachLineHasItsShareAndItsCode) {
  const gpulab::testing::TempDir dir("gpulab-source-view");
  const std::string file = (dir.path() / "k.cu").string();
  std::ofstream(file) << "__global__ void k(float* p) {\n"
                         "    float v = p[threadIdx.x * 32];   \n"
                         "\ttile[threadIdx.x] = v;\n"
                         "}\n";
  // Out of order, a line past the file's end and one with no file.
  const std::vector<gpulab::SourceViewLine> view = gpulab::source_view(
      {line(file, 3, 0, 2), line(file, 2, 24, 0), line(file, 9, 0, 0), line("", 0, 8, 0)});
  ASSERT_EQ(view.size(), 4u);
  EXPECT_EQ(view[0].figures.file, "");
  EXPECT_EQ(view[0].code, "");
  EXPECT_DOUBLE_EQ(view[0].l1_share_pct, 100.0 * 256 / 1280);
  EXPECT_EQ(view[1].figures.line, 2u);
  EXPECT_EQ(view[1].code, "float v = p[threadIdx.x * 32];");
  EXPECT_DOUBLE_EQ(view[1].l1_share_pct, 100.0 * 768 / 1280);
  EXPECT_EQ(view[2].code, "tile[threadIdx.x] = v;");
  EXPECT_DOUBLE_EQ(view[2].l1_share_pct, 100.0 * 256 / 1280);
  EXPECT_EQ(view[3].figures.line, 9u);
  EXPECT_EQ(view[3].code, "");
  EXPECT_EQ(view[3].l1_share_pct, 0.0);

  const std::vector<gpulab::SourceViewLine> hottest = gpulab::hottest_lines(view, 2);
  ASSERT_EQ(hottest.size(), 2u);
  EXPECT_EQ(hottest[0].figures.line, 2u);
  EXPECT_EQ(hottest[1].figures.file, "");  // ties keep file and line order
  EXPECT_EQ(gpulab::hottest_lines(view, 10).size(), 4u);
}

TEST(SourceView, ALineIsAResultWithItsCodeAndTheFiguresItHas) {
  gpulab::SourceViewLine v;
  v.figures = line("/src/k.cu", 12, 0, 0);
  v.figures.counters.global_store = {.requests = 2, .sectors = 64, .bytes_requested = 256};
  v.figures.counters.l2_sector_writes = 64;
  v.l1_share_pct = 75;
  v.code = "out[i * n] = x;";
  const gpulab::Result r = gpulab::source_line_result("k", v);
  EXPECT_EQ(r.name, gpulab::result_kind::counted_line);
  EXPECT_EQ(r.params.at("kernel"), "k");
  EXPECT_EQ(r.params.at("file"), "/src/k.cu");
  EXPECT_EQ(r.params.at("line"), "12");
  EXPECT_EQ(r.params.at("code"), "out[i * n] = x;");
  const auto value = [&](const std::string& name) -> std::optional<double> {
    for (const gpulab::Metric& m : r.metrics) {
      if (m.name == name) {
        EXPECT_EQ(m.provenance, gpulab::Provenance::counted) << name;
        return m.value;
      }
    }
    return std::nullopt;
  };
  EXPECT_EQ(value("requests_count"), 2.0);
  EXPECT_EQ(value("store_sectors_per_request_ratio"), 32.0);
  EXPECT_EQ(value("excess_sectors_count"), 56.0);
  EXPECT_EQ(value("l2_hit_rate_percent"), 0.0);
  EXPECT_EQ(value("l1_share_percent"), 75.0);
  EXPECT_FALSE(value("load_sectors_per_request_ratio"));  // no loads on the line
  EXPECT_FALSE(value("shared_wavefronts_count"));         // nor shared accesses
  for (const gpulab::Metric& m : r.metrics) {
    EXPECT_TRUE(gpulab::has_unit_suffix(m.name)) << m.name;
  }
}

TEST(SourceView, AKernelWithoutTrafficHasNoShares) {
  const std::vector<gpulab::SourceViewLine> view =
      gpulab::source_view({line("/no/such/file.cu", 4, 0, 0)});
  ASSERT_EQ(view.size(), 1u);
  EXPECT_EQ(view[0].l1_share_pct, 0.0);
  EXPECT_EQ(view[0].code, "");
}

}  // namespace
