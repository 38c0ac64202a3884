// The kernel table's parser of ptxas's resource report (tools/kernel_table/ptxas_report.hpp),
// on reports copied from nvcc 13.0 (`nvcc -Xptxas -v`), and the generator run as the build runs
// it: a malformed report must stop the build with a message naming the file and the line.
#include "ptxas_report.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace gpulab::ptxas {
namespace {

namespace fs = std::filesystem;

// vector_add.cu for sm_80 and attention.cu's two kernels for sm_90 (no cmem[0] printed there).
constexpr const char* kGoodReport =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function "
    "'_ZN6gpulab7kernels46_GLOBAL__N__434cb243_13_vector_add_cu_ba7ecaf017vector_add_kernelEPKfS3_"
    "Pfm' for 'sm_80'\n"
    "ptxas info    : Function properties for "
    "_ZN6gpulab7kernels46_GLOBAL__N__434cb243_13_vector_add_cu_ba7ecaf017vector_add_kernelEPKfS3_"
    "Pfm\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 12 registers, used 0 barriers, 384 bytes cmem[0]\n"
    "ptxas info    : Compile time = 16.814 ms\n"
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function "
    "'_ZN6gpulab7kernels45_GLOBAL__N__39e4625e_12_attention_cu_4aacaef119softmax_rows_"
    "kernelEPKfPfiib' for 'sm_90'\n"
    "ptxas info    : Function properties for "
    "_ZN6gpulab7kernels45_GLOBAL__N__39e4625e_12_attention_cu_4aacaef119softmax_rows_"
    "kernelEPKfPfiib\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 31 registers, used 1 barriers, 64 bytes smem\n"
    "ptxas info    : Compile time = 30.551 ms\n"
    "ptxas info    : Compiling entry function "
    "'_ZN6gpulab7kernels45_GLOBAL__N__39e4625e_12_attention_cu_4aacaef119batched_gemm_"
    "kernelENS1_8GemmArgsE' for 'sm_90'\n"
    "ptxas info    : Function properties for "
    "_ZN6gpulab7kernels45_GLOBAL__N__39e4625e_12_attention_cu_4aacaef119batched_gemm_"
    "kernelENS1_8GemmArgsE\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 40 registers, used 1 barriers, 2112 bytes smem\n"
    "ptxas info    : Compile time = 7.403 ms\n";

// A kernel squeezed into 24 registers (-maxrregcount=16, raised by ptxas to its minimum), which
// spills and calls a non-inlined device function, plus a template kernel; with the warnings and
// module lines nvcc prints around them.
constexpr const char* kSpillReport =
    "ptxas warning : For profile sm_80 adjusting per thread register count of 16 to lower bound "
    "of 24\n"
    "ptxas info    : Overriding maximum register limit 256 for '_Z12spill_kernelPfi' with  24 of "
    "maxrregcount option\n"
    "ptxas info    : 4 bytes gmem, 64 bytes cmem[3], 16 bytes cmem[4]\n"
    "ptxas info    : Compiling entry function "
    "'_ZN36_GLOBAL__N__1c3583cb_4_t_cu_09d379b911tmpl_kernelILi32EdEEvPT0_' for 'sm_80'\n"
    "ptxas info    : Function properties for "
    "_ZN36_GLOBAL__N__1c3583cb_4_t_cu_09d379b911tmpl_kernelILi32EdEEvPT0_\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 12 registers, used 1 barriers, 256 bytes smem, 360 bytes cmem[0]\n"
    "ptxas info    : Compile time = 2.760 ms\n"
    "ptxas info    : Compiling entry function '_Z12spill_kernelPfi' for 'sm_80'\n"
    "ptxas info    : Function properties for _Z12spill_kernelPfi\n"
    "    400 bytes stack frame, 16 bytes spill stores, 16 bytes spill loads\n"
    "ptxas info    : Used 24 registers, used 0 barriers, 400 bytes cumulative stack size, 364 "
    "bytes cmem[0]\n"
    "ptxas info    : Compile time = 15.598 ms\n"
    "ptxas info    : Function properties for _Z6helperPfi\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n";

TEST(PtxasReport, ReadsEveryKernelOfAGoodReport) {
  const std::vector<KernelReport> kernels = parse_report(kGoodReport);
  ASSERT_EQ(kernels.size(), 3u);

  EXPECT_EQ(kernels[0].name, "vector_add_kernel");
  EXPECT_EQ(kernels[0].signature,
            "gpulab::kernels::(anonymous namespace)::vector_add_kernel(float const*, float "
            "const*, float*, unsigned long)");
  EXPECT_EQ(kernels[0].sm, 80);
  EXPECT_EQ(kernels[0].registers, 12);
  EXPECT_EQ(kernels[0].barriers, 0);
  EXPECT_EQ(kernels[0].shared_bytes, 0u);
  EXPECT_EQ(kernels[0].constant_bytes, 384u);
  EXPECT_EQ(kernels[0].local_bytes(), 0u);

  EXPECT_EQ(kernels[1].name, "softmax_rows_kernel");
  EXPECT_EQ(kernels[1].sm, 90);
  EXPECT_EQ(kernels[1].registers, 31);
  EXPECT_EQ(kernels[1].barriers, 1);
  EXPECT_EQ(kernels[1].shared_bytes, 64u);
  EXPECT_EQ(kernels[1].constant_bytes, 0u);  // sm_90: not printed

  EXPECT_EQ(kernels[2].name, "batched_gemm_kernel");
  EXPECT_EQ(kernels[2].signature,
            "gpulab::kernels::(anonymous namespace)::batched_gemm_kernel(gpulab::kernels::("
            "anonymous namespace)::GemmArgs)");
  EXPECT_EQ(kernels[2].registers, 40);
  EXPECT_EQ(kernels[2].shared_bytes, 2112u);  // the kernel's own: no 1 KiB reservation on sm_90
}

TEST(PtxasReport, ReadsSpillsStackAndTemplateKernels) {
  const std::vector<KernelReport> kernels = parse_report(kSpillReport);
  ASSERT_EQ(kernels.size(), 2u);  // the device function helper() is not a kernel

  EXPECT_EQ(kernels[0].name, "tmpl_kernel<32, double>");
  EXPECT_EQ(kernels[0].signature, "void (anonymous namespace)::tmpl_kernel<32, double>(double*)");
  EXPECT_EQ(kernels[0].shared_bytes, 256u);
  EXPECT_EQ(kernels[0].constant_bytes, 360u);  // cmem[0] only, not the module's cmem[3]

  EXPECT_EQ(kernels[1].name, "spill_kernel");
  EXPECT_EQ(kernels[1].registers, 24);
  EXPECT_EQ(kernels[1].stack_frame_bytes, 400u);
  EXPECT_EQ(kernels[1].cumulative_stack_bytes, 400u);
  EXPECT_EQ(kernels[1].spill_store_bytes, 16u);
  EXPECT_EQ(kernels[1].spill_load_bytes, 16u);
  EXPECT_EQ(kernels[1].local_bytes(), 400u);
  EXPECT_EQ(kernels[1].constant_bytes, 364u);
}

TEST(PtxasReport, SkipsLinesThatAreNotPtxas) {
  const std::string text =
      std::string("attention.cu(12): warning #177-D: unused variable\n\n") + kGoodReport + "\r\n";
  EXPECT_EQ(parse_report(text).size(), 3u);
  EXPECT_TRUE(has_ptxas_output(text));
  EXPECT_FALSE(has_ptxas_output("nvcc warning : something\n"));
  EXPECT_FALSE(has_ptxas_output(""));
  EXPECT_TRUE(parse_report("").empty());
}

// The message of the ParseError `text` throws; empty when it parses.
std::string parse_error(const std::string& text) {
  try {
    (void)parse_report(text);
  } catch (const ParseError& error) {
    return error.what();
  }
  return {};
}

constexpr const char* kEntry = "ptxas info    : Compiling entry function '_Z1kPf' for 'sm_80'\n";
constexpr const char* kProperties =
    "ptxas info    : Function properties for _Z1kPf\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n";

TEST(PtxasReport, AMalformedUsedLineIsAnErrorNamingTheLine) {
  const std::string bad =
      std::string(kEntry) + kProperties + "ptxas info    : Used many registers, used 0 barriers\n";
  const std::string message = parse_error(bad);
  EXPECT_NE(message.find("line 4:"), std::string::npos) << message;
  EXPECT_NE(message.find("Used many registers"), std::string::npos) << message;

  const std::string unknown_item =
      std::string(kEntry) + kProperties + "ptxas info    : Used 8 registers, 12 bytes frobs\n";
  EXPECT_NE(parse_error(unknown_item).find("unknown item \"12 bytes frobs\""), std::string::npos)
      << parse_error(unknown_item);
  const std::string too_many =
      std::string(kEntry) + kProperties + "ptxas info    : Used 300 registers, used 0 barriers\n";
  EXPECT_NE(parse_error(too_many), "");
}

TEST(PtxasReport, UnexpectedOrIncompleteReportsAreErrors) {
  // A ptxas info line this parser does not know (a future toolkit's format).
  EXPECT_NE(parse_error("ptxas info    : Something new : 5\n").find("unexpected ptxas info line"),
            std::string::npos);
  // A kernel whose Used line never comes.
  EXPECT_NE(parse_error(std::string(kEntry) + kProperties).find("ends before"), std::string::npos);
  EXPECT_NE(parse_error(std::string(kEntry) + kEntry).find("line 2:"), std::string::npos);
  // The stack line missing or malformed.
  EXPECT_NE(parse_error(std::string(kEntry) + "ptxas info    : Function properties for _Z1kPf\n"),
            "");
  EXPECT_NE(parse_error(std::string(kEntry) + "ptxas info    : Function properties for _Z1kPf\n" +
                        "    0 bytes stack frame\n"),
            "");
  // A Used line with no kernel, or before its properties.
  EXPECT_NE(parse_error("ptxas info    : Used 8 registers, used 0 barriers\n"), "");
  EXPECT_NE(parse_error(std::string(kEntry) + "ptxas info    : Used 8 registers\n"), "");
  // An architecture the table cannot hold, and ptxas's own errors.
  EXPECT_NE(parse_error("ptxas info    : Compiling entry function '_Z1kPf' for 'sm_90a'\n"), "");
  EXPECT_NE(parse_error("ptxas fatal   : Unresolved extern function 'f'\n"), "");
}

TEST(PtxasReport, ShortNames) {
  EXPECT_EQ(short_name("gpulab::kernels::(anonymous namespace)::k(float*, int)"), "k");
  EXPECT_EQ(short_name("k()"), "k");
  EXPECT_EQ(short_name("void ns::tile_kernel<16, float>(float*)"), "tile_kernel<16, float>");
  EXPECT_EQ(short_name("void ns::f<ns::(anonymous namespace)::Op, (char)1>(int)"),
            "f<ns::(anonymous namespace)::Op, (char)1>");
  EXPECT_EQ(short_name("plain_c_kernel"), "plain_c_kernel");
  EXPECT_EQ(demangle("plain_c_kernel"), "plain_c_kernel");
  EXPECT_EQ(demangle("_Z1kPf"), "k(float*)");
}

KernelReport kernel(const std::string& mangled, int sm, int registers) {
  KernelReport k;
  k.mangled = mangled;
  k.signature = demangle(mangled);
  k.name = short_name(k.signature);
  k.sm = sm;
  k.registers = registers;
  return k;
}

TEST(PtxasReport, TheTableIsSortedByNameThenArchitecture) {
  std::vector<TableRow> rows{{kernel("_Z1bPf", 90, 8), "kernels/b.cu"},
                             {kernel("_Z1aPf", 90, 8), "kernels/a.cu"},
                             {kernel("_Z1bPf", 80, 8), "kernels/b.cu"},
                             {kernel("_Z1aPf", 80, 8), "kernels/a.cu"}};
  check_and_sort(rows, {80, 90});
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].kernel.name, "a");
  EXPECT_EQ(rows[0].kernel.sm, 80);
  EXPECT_EQ(rows[1].kernel.name, "a");
  EXPECT_EQ(rows[1].kernel.sm, 90);
  EXPECT_EQ(rows[2].kernel.name, "b");
  EXPECT_EQ(rows[3].kernel.sm, 90);
}

TEST(PtxasReport, AmbiguousNamesAndMissingArchitecturesAreErrors) {
  // Two files' anonymous-namespace kernels of one name: find_kernel could not tell them apart.
  std::vector<TableRow> same_name{{kernel("_Z1kPf", 80, 8), "kernels/a.cu"},
                                  {kernel("_Z1kPf", 80, 8), "kernels/b.cu"}};
  EXPECT_THROW(check_and_sort(same_name, {80}), ParseError);
  // Overloads: one name, two signatures.
  std::vector<TableRow> overloads{{kernel("_Z1kPf", 80, 8), "kernels/a.cu"},
                                  {kernel("_Z1kPi", 80, 8), "kernels/a.cu"}};
  EXPECT_THROW(check_and_sort(overloads, {80}), ParseError);
  std::vector<TableRow> twice{{kernel("_Z1kPf", 80, 8), "kernels/a.cu"},
                              {kernel("_Z1kPf", 80, 8), "kernels/a.cu"}};
  EXPECT_THROW(check_and_sort(twice, {80}), ParseError);
  std::vector<TableRow> missing{{kernel("_Z1kPf", 80, 8), "kernels/a.cu"}};
  EXPECT_THROW(check_and_sort(missing, {80, 90}), ParseError);
  std::vector<TableRow> unexpected{{kernel("_Z1kPf", 86, 8), "kernels/a.cu"}};
  EXPECT_THROW(check_and_sort(unexpected, {80}), ParseError);
}

TEST(PtxasReport, WritesATableThatRegistersItselfWithItsStatus) {
  std::vector<TableRow> rows{{kernel("_Z1kPf", 80, 8), "kernels/a.cu"}};
  rows[0].kernel.shared_bytes = 1024;
  const std::string text = table_source(rows, "");
  EXPECT_NE(text.find("std::array<KernelTableEntry, 1>"), std::string::npos) << text;
  EXPECT_NE(text.find(".name = \"k\""), std::string::npos) << text;
  EXPECT_NE(text.find(".signature = \"k(float*)\""), std::string::npos) << text;
  EXPECT_NE(text.find(".static_shared_bytes = 1024"), std::string::npos) << text;
  EXPECT_NE(text.find("register_kernel_table(kTable, \"\")"), std::string::npos) << text;
  EXPECT_EQ(text.find("register_program_kernels"), std::string::npos) << text;

  const std::string empty = table_source({}, "no \"nvcc\" here");
  EXPECT_NE(empty.find("std::array<KernelTableEntry, 0> kTable"), std::string::npos) << empty;
  EXPECT_NE(empty.find("register_kernel_table(kTable, \"no \\\"nvcc\\\" here\")"),
            std::string::npos)
      << empty;
}

TEST(PtxasReport, WritesAProgramsTableThatRegistersItsKernelsAndFailures) {
  std::vector<TableRow> rows{{kernel("_Z1kPf", 80, 8), "labs/lab01/a.cu"}};
  const std::string text =
      program_table_source(rows, {{"labs/lab01/b.cu", "b.cu(2): error: \"x\" is undefined"}});
  EXPECT_NE(text.find("std::array<KernelTableEntry, 1> kEntries"), std::string::npos) << text;
  EXPECT_NE(text.find(".source = \"labs/lab01/a.cu\""), std::string::npos) << text;
  EXPECT_NE(text.find("std::array<KernelSourceFailure, 1> kFailures"), std::string::npos) << text;
  EXPECT_NE(text.find(".why = \"b.cu(2): error: \\\"x\\\" is undefined\""), std::string::npos)
      << text;
  EXPECT_NE(text.find("register_program_kernels(kEntries, kFailures)"), std::string::npos) << text;
  EXPECT_EQ(text.find("register_kernel_table"), std::string::npos) << text;  // the project's alone
}

TEST(PtxasReport, FailureInReadsTheMarkerLineOnly) {
  EXPECT_EQ(failure_in(std::string(kFailedMarker) + "a.cu(3): error: oops\nmore\n"),
            "a.cu(3): error: oops");
  EXPECT_EQ(failure_in(kFailedMarker), "no message");
  EXPECT_EQ(failure_in("ptxas info    : 0 bytes gmem\n"), "");
  EXPECT_EQ(failure_in(std::string("x") + std::string(kFailedMarker)), "");
}

// --- The generator, as the build runs it ----------------------------------------------------

struct Outcome {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

Outcome run_generator(const std::string& args) {
  const std::string command =
      std::string("'") + GPULAB_KERNEL_TABLE_GEN_EXE + "' " + args + " 2>&1";
  Outcome outcome;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    return outcome;
  }
  std::array<char, 4096> buffer{};
  while (const std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) {
    outcome.output.append(buffer.data(), n);
  }
  const int status = pclose(pipe);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

class KernelTableGenerator : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("gpulab_kernel_table_gen_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  std::string read(const std::string& name) const {
    std::ifstream in(dir_ / name);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  fs::path dir_;
};

TEST_F(KernelTableGenerator, WritesATableFromAReport) {
  const std::string report = write("ok.txt", std::string(kEntry) + kProperties +
                                                 "ptxas info    : Used 8 registers, used 0 "
                                                 "barriers, 360 bytes cmem[0]\n");
  const std::string out = (dir_ / "table.cpp").string();
  const Outcome run =
      run_generator("--output '" + out + "' --architectures 80 kernels/k.cu '" + report + "'");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(read("table.cpp").find(".source = \"kernels/k.cu\""), std::string::npos);
}

TEST_F(KernelTableGenerator, AMalformedReportFailsNamingTheSourceAndTheLine) {
  const std::string report = write(
      "bad.txt", std::string(kEntry) + kProperties + "ptxas info    : Used lots of registers\n");
  const Outcome run = run_generator("--output '" + (dir_ / "table.cpp").string() +
                                    "' --architectures 80 kernels/k.cu '" + report + "'");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.output.find("kernels/k.cu"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("bad.txt"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("line 4"), std::string::npos) << run.output;
  EXPECT_FALSE(fs::exists(dir_ / "table.cpp"));
}

TEST_F(KernelTableGenerator, AReportWithoutPtxasOutputFails) {
  const std::string report = write("empty.txt", "nvcc warning : nothing from ptxas\n");
  const Outcome run = run_generator("--output '" + (dir_ / "table.cpp").string() +
                                    "' --architectures 80 kernels/k.cu '" + report + "'");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.output.find("holds no ptxas report"), std::string::npos) << run.output;
}

TEST_F(KernelTableGenerator, WritesAnEmptyTableWithTheReason) {
  const Outcome run = run_generator("--output '" + (dir_ / "table.cpp").string() +
                                    "' --status 'this build found no nvcc'");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(read("table.cpp").find("register_kernel_table(kTable, \"this build found no nvcc\")"),
            std::string::npos);
  EXPECT_EQ(run_generator("--output x.cpp").exit_code, 2);  // neither reports nor a status
}

}  // namespace
TEST_F(KernelTableGenerator, WritesAProgramsTableWithTheFilesNvccFailedOn) {
  const std::string report = write("ok.txt", std::string(kEntry) + kProperties +
                                                 "ptxas info    : Used 8 registers, used 0 "
                                                 "barriers, 360 bytes cmem[0]\n");
  const std::string failed =
      write("failed.txt", std::string(kFailedMarker) + "b.cu(1): error: expected a \";\"\n");
  const std::string out = (dir_ / "table.cpp").string();
  const Outcome run =
      run_generator("--program --output '" + out + "' --architectures 80 labs/a.cu '" + report +
                    "' labs/b.cu '" + failed + "'");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::string text = read("table.cpp");
  EXPECT_NE(text.find(".source = \"labs/a.cu\""), std::string::npos) << text;
  EXPECT_NE(text.find("{.source = \"labs/b.cu\", .why = \"b.cu(1): error: expected a \\\";\\\"\"}"),
            std::string::npos)
      << text;
  // Without --program, a failure report is not a ptxas report.
  EXPECT_EQ(run_generator("--output '" + out + "' --architectures 80 labs/b.cu '" + failed + "'")
                .exit_code,
            1);
}

}  // namespace gpulab::ptxas
