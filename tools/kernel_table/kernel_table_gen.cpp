// gpulab-kernel-table-gen: writes the kernel table's C++ source (gpulab::kernel_table()) from
// ptxas's resource reports, one per kernel source file, that the build captured from
// `nvcc -Xptxas -v` (cmake/GpulabKernelTable.cmake runs both steps).
//
//   gpulab-kernel-table-gen --output <table.cpp> --architectures <75,80,...>
//                           <source.cu> <report.txt> [<source.cu> <report.txt>]...
//   gpulab-kernel-table-gen --output <table.cpp> --status <why the table is empty>
//   gpulab-kernel-table-gen --program --output <table.cpp> --architectures <75,80,...>
//                           <source.cu> <report.txt>...
//
// <source.cu> is the file's path relative to the project root, as the table shows it. Anything
// unexpected in a report stops the build with one line naming the source, the report and the
// line, never a silently empty table. --program writes a program's own table instead (a lab's
// student files: gpulab::register_program_kernels), where a report may say that nvcc failed on
// its source (ptxas_report.hpp's kFailedMarker) or be empty (a source without kernels, which
// nvcc did not compile), and no source need have a kernel.
#include <exception>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/core/files.hpp"
#include "ptxas_report.hpp"

namespace {

namespace fs = std::filesystem;
using gpulab::ptxas::ParseError;

constexpr std::string_view kUsage =
    "usage: gpulab-kernel-table-gen --output <table.cpp> --architectures <75,80,...> "
    "<source.cu> <report.txt>...\n"
    "       gpulab-kernel-table-gen --output <table.cpp> --status <why the table is empty>\n"
    "       gpulab-kernel-table-gen --program --output <table.cpp> --architectures <75,80,...> "
    "<source.cu> <report.txt>...\n";

// "75,80,86" -> {75, 80, 86}.
std::vector<int> parse_architectures(std::string_view list) {
  std::vector<int> sms;
  std::string item;
  std::istringstream in{std::string(list)};
  while (std::getline(in, item, ',')) {
    std::size_t used = 0;
    int sm = 0;
    try {
      sm = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || sm <= 0) {
      throw std::runtime_error("--architectures: \"" + item +
                               "\" is not an architecture number such as 80");
    }
    sms.push_back(sm);
  }
  if (sms.empty()) {
    throw std::runtime_error("--architectures is empty");
  }
  return sms;
}

int run(const std::vector<std::string_view>& args) {
  std::string output;
  std::string status;
  bool have_status = false;
  bool program = false;
  std::vector<int> sms;
  std::vector<std::string_view> pairs;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    const bool has_value = i + 1 < args.size();
    if (arg == "--output" && has_value) {
      output = args[++i];
    } else if (arg == "--status" && has_value) {
      status = args[++i];
      have_status = true;
    } else if (arg == "--program") {
      program = true;
    } else if (arg == "--architectures" && has_value) {
      sms = parse_architectures(args[++i]);
    } else if (arg.starts_with("--")) {
      std::cerr << kUsage;
      return 2;
    } else {
      pairs.push_back(arg);
    }
  }
  if (output.empty() || pairs.size() % 2 != 0 || have_status == !pairs.empty() ||
      (!pairs.empty() && sms.empty()) || (program && have_status)) {
    std::cerr << kUsage;
    return 2;
  }
  if (have_status && status.empty()) {
    throw std::runtime_error("--status needs a reason (an empty status means a generated table)");
  }

  std::vector<gpulab::ptxas::TableRow> rows;
  std::vector<gpulab::ptxas::SourceFailure> failures;
  for (std::size_t i = 0; i < pairs.size(); i += 2) {
    const std::string source(pairs[i]);
    const fs::path report_path(pairs[i + 1]);
    std::string why_not;
    const std::optional<std::string> read = gpulab::read_file(report_path, &why_not);
    if (!read) {
      throw std::runtime_error("cannot read " + report_path.string() + ": " + why_not);
    }
    const std::string& report = *read;
    if (std::string why = gpulab::ptxas::failure_in(report); program && !why.empty()) {
      failures.push_back({source, std::move(why)});
      continue;
    }
    if (program && report.empty()) {
      continue;  // a file without kernels: nvcc did not run
    }
    if (!gpulab::ptxas::has_ptxas_output(report)) {
      throw std::runtime_error(source + ": " + report_path.string() +
                               " holds no ptxas report (was nvcc run with -Xptxas -v?)");
    }
    try {
      for (gpulab::ptxas::KernelReport& kernel : gpulab::ptxas::parse_report(report)) {
        rows.push_back({std::move(kernel), source});
      }
    } catch (const ParseError& error) {
      throw std::runtime_error(source + ": unexpected ptxas output in " + report_path.string() +
                               ", " + error.what());
    }
  }
  if (!program && !pairs.empty() && rows.empty()) {
    throw std::runtime_error("ptxas reported no kernel in any of the " +
                             std::to_string(pairs.size() / 2) + " sources");
  }
  gpulab::ptxas::check_and_sort(rows, sms);

  const std::string text = program ? gpulab::ptxas::program_table_source(rows, failures)
                                   : gpulab::ptxas::table_source(rows, status);
  gpulab::write_file_atomically(output, text);  // never a half-written table
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(std::vector<std::string_view>(argv + 1, argv + argc));
  } catch (const std::exception& error) {
    std::cerr << "gpulab-kernel-table-gen: " << error.what() << "\n";
    return 1;
  }
}
