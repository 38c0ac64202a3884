// The kernel catalog (gpulab/kernels/catalog.hpp), on every backend: every level of
// every op verifies against its CPU reference at the op's edge sizes (on sim under three thread
// schedules, and at several block sizes where the op takes one); on sim a level launches exactly
// the kernels its row names; every kernel has one entry with a distinct name and function, and the
// names are those of the kernel table, both ways.
#include "gpulab/kernels/catalog.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/core/kernel_table.hpp"
#include "gpulab/runtime/stream.hpp"
#include "schedules.hpp"
#include "test_device.hpp"

#if defined(GPULAB_BACKEND_SIM)
#include "gpulab/sim/runtime.hpp"
#endif

namespace gpulab::kernels {
namespace {

// One level of one op.
struct LevelCase {
  const Op* op;
  std::size_t index;
};

void PrintTo(const LevelCase& c, std::ostream* out) {
  *out << c.op->name << " level " << c.op->levels[c.index].number;
}

std::vector<LevelCase> every_level() {
  std::vector<LevelCase> cases;
  for (const Op& op : catalog()) {
    for (std::size_t i = 0; i < op.levels.size(); ++i) {
      cases.push_back({&op, i});
    }
  }
  return cases;
}

std::string case_name(const ::testing::TestParamInfo<LevelCase>& info) {
  return std::string(info.param.op->name) + "_level" +
         std::to_string(info.param.op->levels[info.param.index].number);
}

// The block sizes a level is verified at: a warp, a part-warp, the default and the maximum for
// ops that take one; the level's own shape otherwise.
std::vector<unsigned> block_sizes(const Op& op) {
  if (op.default_block == 0) {
    return {0};
  }
  return {32, 96, op.default_block, 1024};
}

class CatalogLevel : public ::testing::TestWithParam<LevelCase> {};

TEST_P(CatalogLevel, MatchesTheCpuReferenceAtEveryTestSize) {
  GPULAB_REQUIRE_DEVICE();
  const auto [op, index] = GetParam();
  ASSERT_FALSE(op->test_sizes.empty()) << op->name << " has no test sizes";
  Stream stream;
  for (const std::size_t size : op->test_sizes) {
    const std::unique_ptr<OpProblem> problem = op->make_problem(size);
    for (const unsigned block : block_sizes(*op)) {
      SCOPED_TRACE(problem->describe() + ", block size " + std::to_string(block));
      gpulab::testing::for_each_schedule(
          [&] { EXPECT_NO_THROW(problem->verify(index, stream.get(), block)); });
    }
  }
}

TEST_P(CatalogLevel, RefusesALevelPastTheLastAndStatesItsCost) {
  GPULAB_REQUIRE_DEVICE();
  const auto [op, index] = GetParam();
  const std::unique_ptr<OpProblem> problem = op->make_problem(op->test_sizes.back());
  Stream stream;
  EXPECT_THROW(problem->launch(op->levels.size(), stream.get(), op->default_block),
               std::invalid_argument);
  EXPECT_THROW(problem->verify(op->levels.size(), stream.get(), op->default_block),
               std::invalid_argument);
  EXPECT_NO_THROW(problem->verify(index, stream.get(), op->default_block));
  const OpCost cost = problem->cost();
  EXPECT_GT(cost.bytes, 0) << op->name << ": a problem moves bytes";
  EXPECT_GE(cost.flops, 0);
  EXPECT_FALSE(problem->describe().empty());
}

#if defined(GPULAB_BACKEND_SIM)
TEST_P(CatalogLevel, LaunchesOnlyTheKernelsItsRowNamesAndItsFirst) {
  if (!sim::counting_available()) {
    GTEST_SKIP() << sim::counting_unavailable_reason();
  }
  const auto [op, index] = GetParam();
  const OpLevel& level = op->levels[index];
  const std::unique_ptr<OpProblem> problem = op->make_problem(op->test_sizes.back());
  Stream stream;
  const std::vector<CountedLaunch> launches = sim::count_launches([&] {
    problem->launch(index, stream.get(), op->default_block);
    GPULAB_CHECK(cudaStreamSynchronize(stream.get()));
  });
  std::set<std::string> launched;
  for (const CountedLaunch& launch : launches) {
    if (launch.where != sim::kCublasWhere) {  // a library call, counted as its model's kernel
      launched.insert(launch.kernel);
    }
  }
  std::set<std::string> named;
  for (const KernelRef& kernel : level.kernels) {
    named.insert(std::string(kernel.name));
  }
  // A row may name kernels a level picks by size (attention level 3's head-dimension buckets):
  // every kernel launched is named, and the row's first kernel (the one the catalog's problem
  // uses, find_kernel_level's key) is launched.
  for (const std::string& kernel : launched) {
    EXPECT_TRUE(named.contains(kernel)) << op->name << " level " << level.number << " launches "
                                        << kernel << ", which its row does not name";
  }
  EXPECT_TRUE(launched.contains(std::string(level.kernels.front().name)))
      << op->name << " level " << level.number << " does not launch its row's first kernel "
      << level.kernels.front().name;
}
#endif

INSTANTIATE_TEST_SUITE_P(Catalog, CatalogLevel, ::testing::ValuesIn(every_level()), case_name);

TEST(Catalog, OpsAndLevelsAreNamedOnceAndFoundByName) {
  std::set<std::string_view> ops;
  for (const Op& op : catalog()) {
    EXPECT_TRUE(ops.insert(op.name).second) << op.name << " is in the catalog twice";
    EXPECT_EQ(find_op(op.name), &op);
    EXPECT_FALSE(op.summary.empty() || op.size_means.empty()) << op.name;
    EXPECT_GT(op.default_size, 0u) << op.name;
    EXPECT_GT(op.sim_size, 0u) << op.name;
    EXPECT_NE(op.new_problem, nullptr) << op.name;
    ASSERT_FALSE(op.levels.empty()) << op.name << " has no levels";
    std::set<int> numbers;
    for (const OpLevel& level : op.levels) {
      EXPECT_TRUE(numbers.insert(level.number).second)
          << op.name << " has two levels numbered " << level.number;
      EXPECT_FALSE(level.name.empty() || level.teaches.empty()) << op.name << " " << level.number;
      EXPECT_FALSE(level.kernels.empty()) << op.name << " " << level.number << " names no kernel";
      EXPECT_EQ(op.find_level(level.number), &level);
      EXPECT_EQ(&op.levels[op.level_index(level.number)], &level);
    }
    EXPECT_TRUE(
        std::is_sorted(op.levels.begin(), op.levels.end(),
                       [](const OpLevel& a, const OpLevel& b) { return a.number < b.number; }))
        << op.name << "'s levels are not in order";
  }
  EXPECT_EQ(find_op("softmax"), nullptr);
  EXPECT_NE(op_names().find("transpose"), std::string::npos);
}

TEST(Catalog, ALevelThatDoesNotExistIsRefusedWithTheOpsLevels) {
  const Op* transpose = find_op("transpose");
  ASSERT_NE(transpose, nullptr);
  EXPECT_EQ(transpose->find_level(9), nullptr);
  try {
    (void)transpose->level_index(9);
    FAIL() << "level 9 of transpose was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("1 (naive)"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)transpose->make_problem(0), std::invalid_argument);
  try {
    (void)transpose->make_problem(transpose->max_size + 1);
    FAIL() << "a size above transpose's largest was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("1 to " + std::to_string(transpose->max_size)),
              std::string::npos)
        << e.what();
  }
}

TEST(Catalog, EachKernelIsFoundFromItsLevel) {
  for (const Op& op : catalog()) {
    for (std::size_t i = 0; i < op.levels.size(); ++i) {
      const KernelLevel found = find_kernel_level(op.levels[i].kernels.front().name);
      EXPECT_EQ(found.op, &op);
      EXPECT_EQ(found.index, i);
    }
  }
  EXPECT_EQ(find_kernel_level("no_such_kernel").op, nullptr);
}

TEST(CatalogKernels, NamesAndFunctionsAreDistinct) {
  const std::vector<KernelRef> kernels = catalog_kernels();
  ASSERT_FALSE(kernels.empty());
  std::set<std::string_view> names;
  std::set<const void*> functions;
  for (const KernelRef& kernel : kernels) {
    EXPECT_TRUE(names.insert(kernel.name).second) << kernel.name << " is listed twice";
    EXPECT_NE(kernel.function, nullptr) << kernel.name;
    EXPECT_TRUE(functions.insert(kernel.function).second) << kernel.name << "'s function again";
    EXPECT_FALSE(kernel.dynamic_shared_bytes.empty()) << kernel.name << ": {0} when none";
    for (const std::uint64_t bytes : kernel.dynamic_shared_bytes) {
      EXPECT_LE(bytes, 48u * 1024u) << kernel.name << ": above 48 KiB needs an opt-in";
    }
  }
  EXPECT_TRUE(names.contains("spin_wait_kernel")) << "the kernels outside the ladders are listed";
}

TEST(CatalogKernels, EveryEntryIsInTheKernelTable) {
  if (kernel_table().empty()) {
    GTEST_SKIP() << "no kernel table in this build: " << kernel_table_status();
  }
  const std::vector<std::string_view> names = kernel_names();
  for (const KernelRef& kernel : catalog_kernels()) {
    EXPECT_TRUE(std::binary_search(names.begin(), names.end(), kernel.name))
        << kernel.name << " is in the catalog but not in the kernel table (a typo in its name?)";
  }
}

TEST(CatalogKernels, EveryKernelOfTheTableIsInTheCatalog) {
  if (kernel_table().empty()) {
    GTEST_SKIP() << "no kernel table in this build: " << kernel_table_status();
  }
  const std::vector<KernelRef> kernels = catalog_kernels();
  for (const KernelTableEntry& entry : kernel_table()) {
    if (!entry.source.starts_with("kernels/")) {
      continue;  // a lab's reference kernel (solutions/), not part of kernels/
    }
    const bool listed = std::any_of(kernels.begin(), kernels.end(),
                                    [&](const KernelRef& k) { return k.name == entry.name; });
    EXPECT_TRUE(listed) << entry.name << " (" << entry.source
                        << ") is launched by no level of the catalog (a row of its op's level "
                           "table names it)";
  }
}

}  // namespace
}  // namespace gpulab::kernels
