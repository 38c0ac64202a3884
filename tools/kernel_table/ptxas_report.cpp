#include "ptxas_report.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

namespace gpulab::ptxas {
namespace {

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) {
    return {};
  }
  const auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

// Builds the error for line `number`, quoting it.
ParseError error_at(std::size_t number, std::string_view line, const std::string& what) {
  return ParseError("line " + std::to_string(number) + ": " + what + ": \"" +
                    std::string(trim(line)) + "\"");
}

// A whole decimal number, or nothing.
template <class T>
std::optional<T> to_number(std::string_view text) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty()) {
    return std::nullopt;
  }
  return value;
}

// "<N> <unit>" (e.g. "64 bytes smem"): N when the text has exactly that form.
std::optional<std::uint64_t> count_of(std::string_view item, std::string_view unit) {
  const auto space = item.find(' ');
  if (space == std::string_view::npos || item.substr(space + 1) != unit) {
    return std::nullopt;
  }
  return to_number<std::uint64_t>(item.substr(0, space));
}

// Splits "a, b, c" into trimmed items.
std::vector<std::string_view> split_items(std::string_view text) {
  std::vector<std::string_view> items;
  while (true) {
    const auto comma = text.find(',');
    items.push_back(trim(text.substr(0, comma)));
    if (comma == std::string_view::npos) {
      return items;
    }
    text.remove_prefix(comma + 1);
  }
}

// One line of nvcc's output, split as ptxas prints it: "ptxas <kind> : <message>".
struct PtxasLine {
  std::string_view kind;     // "info", "warning", "error", "fatal", or a path for located messages
  std::string_view message;  // after the colon, trimmed
};

std::optional<PtxasLine> ptxas_line(std::string_view line) {
  constexpr std::string_view kPrefix = "ptxas ";
  if (!line.starts_with(kPrefix)) {
    return std::nullopt;
  }
  line.remove_prefix(kPrefix.size());
  const auto colon = line.find(':');
  if (colon == std::string_view::npos) {
    return PtxasLine{trim(line), {}};
  }
  return PtxasLine{trim(line.substr(0, colon)), trim(line.substr(colon + 1))};
}

// The parts of one kernel's report seen so far.
struct PendingKernel {
  KernelReport report;
  std::size_t line = 0;  // of its "Compiling entry function" line
  bool have_properties = false;
};

// "Compiling entry function '<mangled>' for 'sm_<NN>'".
KernelReport parse_entry(std::string_view message, std::size_t number, std::string_view line) {
  constexpr std::string_view kStart = "Compiling entry function '";
  constexpr std::string_view kFor = "' for 'sm_";
  message.remove_prefix(kStart.size());
  const auto for_at = message.rfind(kFor);
  if (for_at == std::string_view::npos || for_at == 0 || !message.ends_with('\'')) {
    throw error_at(number, line, "expected \"Compiling entry function '<name>' for 'sm_<NN>'\"");
  }
  const std::string_view sm_text =
      message.substr(for_at + kFor.size(), message.size() - 1 - (for_at + kFor.size()));
  const auto sm = to_number<int>(sm_text);
  if (!sm || *sm <= 0) {
    throw error_at(number, line,
                   "expected a plain architecture such as 'sm_80' (arch-specific variants like "
                   "sm_90a are not in the table)");
  }
  KernelReport report;
  report.mangled = std::string(message.substr(0, for_at));
  report.signature = demangle(report.mangled);
  report.name = short_name(report.signature);
  report.sm = *sm;
  return report;
}

// "<N> bytes stack frame, <N> bytes spill stores, <N> bytes spill loads".
void parse_stack_line(std::string_view text, std::size_t number, KernelReport& report) {
  const std::vector<std::string_view> items = split_items(trim(text));
  const auto frame = items.size() == 3 ? count_of(items[0], "bytes stack frame") : std::nullopt;
  const auto stores = items.size() == 3 ? count_of(items[1], "bytes spill stores") : std::nullopt;
  const auto loads = items.size() == 3 ? count_of(items[2], "bytes spill loads") : std::nullopt;
  if (!frame || !stores || !loads) {
    throw error_at(number, text,
                   "expected \"<N> bytes stack frame, <N> bytes spill stores, <N> bytes spill "
                   "loads\"");
  }
  report.stack_frame_bytes = *frame;
  report.spill_store_bytes = *stores;
  report.spill_load_bytes = *loads;
}

// "Used <N> registers, used <N> barriers[, <N> bytes cumulative stack size][, <N> bytes smem]
// [, <N> bytes cmem[<K>]]...".
void parse_used_line(std::string_view message, std::size_t number, std::string_view line,
                     KernelReport& report) {
  const std::vector<std::string_view> items = split_items(message);
  const auto registers =
      count_of(items.front().substr(std::string_view("Used ").size()), "registers");
  if (!registers || *registers > 255) {
    throw error_at(number, line, "expected \"Used <N> registers\" with N at most 255");
  }
  report.registers = static_cast<int>(*registers);
  for (std::size_t i = 1; i < items.size(); ++i) {
    const std::string_view item = items[i];
    if (item.starts_with("used ")) {
      const auto barriers = count_of(item.substr(5), "barriers");
      if (!barriers) {
        throw error_at(number, line,
                       "expected \"used <N> barriers\", got \"" + std::string(item) + "\"");
      }
      report.barriers = static_cast<int>(*barriers);
    } else if (const auto smem = count_of(item, "bytes smem")) {
      report.shared_bytes = *smem;
    } else if (const auto stack = count_of(item, "bytes cumulative stack size")) {
      report.cumulative_stack_bytes = *stack;
    } else if (const auto lmem = count_of(item, "bytes lmem")) {  // older toolkits
      report.stack_frame_bytes = std::max(report.stack_frame_bytes, *lmem);
    } else if (item.find(" bytes cmem[") != std::string_view::npos && item.ends_with(']')) {
      const auto space = item.find(' ');
      const auto bytes = to_number<std::uint64_t>(item.substr(0, space));
      const auto open = item.find('[');
      const auto bank = to_number<int>(item.substr(open + 1, item.size() - open - 2));
      if (!bytes || !bank) {
        throw error_at(number, line,
                       "expected \"<N> bytes cmem[<K>]\", got \"" + std::string(item) + "\"");
      }
      if (*bank == 0) {  // bank 0 holds the parameters; others are module-wide constants
        report.constant_bytes = *bytes;
      }
    } else if (count_of(item, "textures") || count_of(item, "samplers") ||
               count_of(item, "surfaces")) {
      // Bound texture references (older toolkits): no occupancy cost.
    } else {
      throw error_at(number, line, "unknown item \"" + std::string(item) + "\" in the Used line");
    }
  }
}

}  // namespace

std::vector<KernelReport> parse_report(std::string_view text) {
  std::vector<KernelReport> kernels;
  std::optional<PendingKernel> pending;
  // After "Function properties for <name>" the next line is that function's stack line; it
  // belongs to the pending kernel when <name> is the kernel, else to a called device function.
  bool expect_stack_line = false;
  bool stack_line_is_kernel = false;
  std::size_t number = 0;
  while (!text.empty()) {
    ++number;
    const auto newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);

    if (expect_stack_line) {
      expect_stack_line = false;
      KernelReport ignored;
      parse_stack_line(line, number, stack_line_is_kernel ? pending->report : ignored);
      if (stack_line_is_kernel) {
        pending->have_properties = true;
      }
      continue;
    }
    const std::optional<PtxasLine> ptxas = ptxas_line(line);
    if (!ptxas) {
      if (trim(line).find("bytes stack frame") != std::string_view::npos) {
        throw error_at(number, line,
                       "a stack frame line without \"Function properties\" before it");
      }
      continue;  // not ptxas's: a compiler warning, an empty line
    }
    if (ptxas->kind != "info") {
      // "error", "fatal", or "<file>, line <N>; error" for a located message.
      if (ptxas->kind.ends_with("error") || ptxas->kind.ends_with("fatal") ||
          ptxas->message.starts_with("error") || ptxas->message.starts_with("fatal")) {
        throw error_at(number, line, "ptxas reported an error");
      }
      continue;  // a warning ("Registers are spilled ...", "adjusting per thread register ...")
    }
    const std::string_view message = ptxas->message;
    if (message.starts_with("Compiling entry function '")) {
      if (pending) {
        throw error_at(number, line,
                       "entry function '" + pending->report.mangled + "' (line " +
                           std::to_string(pending->line) + ") has no \"Used <N> registers\" line");
      }
      pending = PendingKernel{parse_entry(message, number, line), number, false};
    } else if (constexpr std::string_view kProperties = "Function properties for ";
               message.starts_with(kProperties)) {
      const std::string_view function = trim(message.substr(kProperties.size()));
      expect_stack_line = true;
      stack_line_is_kernel = pending && function == pending->report.mangled;
      if (stack_line_is_kernel && pending->have_properties) {
        throw error_at(number, line, "the kernel's properties are printed twice");
      }
    } else if (message.starts_with("Used ")) {
      if (!pending) {
        throw error_at(number, line,
                       "a \"Used\" line without \"Compiling entry function\" before it");
      }
      if (!pending->have_properties) {
        throw error_at(number, line, "a \"Used\" line before the kernel's \"Function properties\"");
      }
      parse_used_line(message, number, line, pending->report);
      kernels.push_back(std::move(pending->report));
      pending.reset();
    } else if (message.starts_with("Compile time = ") ||
               message.starts_with("Overriding maximum register limit") ||
               message.find(" bytes gmem") != std::string_view::npos) {
      // Per module or per compile: nothing about a kernel's resources.
    } else {
      throw error_at(number, line, "unexpected ptxas info line");
    }
  }
  if (expect_stack_line) {
    throw error_at(number, "", "the report ends after \"Function properties\"");
  }
  if (pending) {
    throw error_at(pending->line, "Compiling entry function '" + pending->report.mangled + "'",
                   "the report ends before this kernel's \"Used <N> registers\" line");
  }
  return kernels;
}

bool has_ptxas_output(std::string_view text) {
  while (!text.empty()) {
    const auto newline = text.find('\n');
    const auto ptxas = ptxas_line(text.substr(0, newline));
    if (ptxas && ptxas->kind == "info") {
      return true;
    }
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
  }
  return false;
}

std::string demangle(const std::string& mangled) {
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> demangled(
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), &std::free);
  return status == 0 && demangled ? std::string(demangled.get()) : mangled;
}

std::string short_name(std::string_view signature) {
  constexpr std::string_view kAnonymous = "(anonymous namespace)";
  std::size_t start = 0;
  int angle = 0;  // depth inside template arguments
  int paren = 0;  // depth inside parentheses within them
  for (std::size_t i = 0; i < signature.size(); ++i) {
    const char c = signature[i];
    if (angle == 0 && paren == 0) {
      if (signature.substr(i).starts_with(kAnonymous)) {
        i += kAnonymous.size() - 1;  // a scope, not a parameter list
        continue;
      }
      if (c == '(') {
        return std::string(signature.substr(start, i - start));  // the parameters start
      }
      if (c == ' ') {
        start = i + 1;  // what came before was the return type (templates print one)
        continue;
      }
      if (c == ':' && i + 1 < signature.size() && signature[i + 1] == ':') {
        start = i + 2;  // what came before was a scope
        ++i;
        continue;
      }
    }
    if (c == '<') {
      ++angle;
    } else if (c == '>' && angle > 0) {
      --angle;
    } else if (c == '(') {
      ++paren;
    } else if (c == ')' && paren > 0) {
      --paren;
    }
  }
  return std::string(signature.substr(start));
}

void check_and_sort(std::vector<TableRow>& rows, const std::vector<int>& sms) {
  std::map<std::string, const TableRow*> first_of_name;
  std::set<std::pair<std::string, int>> seen;
  for (const TableRow& row : rows) {
    const KernelReport& k = row.kernel;
    if (std::find(sms.begin(), sms.end(), k.sm) == sms.end()) {
      throw ParseError(row.source + ": kernel " + k.name + " was compiled for sm_" +
                       std::to_string(k.sm) + ", which is not one of the table's architectures");
    }
    const auto [it, inserted] = first_of_name.try_emplace(k.name, &row);
    if (!inserted &&
        (it->second->source != row.source || it->second->kernel.mangled != k.mangled)) {
      throw ParseError("two kernels are named " + k.name + ": " + it->second->kernel.signature +
                       " in " + it->second->source + " and " + k.signature + " in " + row.source +
                       "; the kernel table looks kernels up by name, so rename one");
    }
    if (!seen.emplace(k.name, k.sm).second) {
      throw ParseError(row.source + ": kernel " + k.name + " is reported twice for sm_" +
                       std::to_string(k.sm));
    }
  }
  for (const auto& [name, row] : first_of_name) {
    for (const int sm : sms) {
      if (!seen.contains({name, sm})) {
        throw ParseError(row->source + ": kernel " + name + " has no ptxas report for sm_" +
                         std::to_string(sm) + " (was it compiled for every architecture?)");
      }
    }
  }
  std::sort(rows.begin(), rows.end(), [](const TableRow& a, const TableRow& b) {
    return std::tie(a.kernel.name, a.kernel.sm) < std::tie(b.kernel.name, b.kernel.sm);
  });
}

namespace {

// `text` as a C++ string literal.
std::string literal(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\%03o",
                    static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// The initializer of a std::array<KernelTableEntry, N> named `name` over `rows`.
void write_entries(std::ostringstream& out, std::string_view name,
                   const std::vector<TableRow>& rows) {
  out << "constexpr std::array<KernelTableEntry, " << rows.size() << "> " << name << "{{\n";
  for (const TableRow& row : rows) {
    const KernelReport& k = row.kernel;
    out << "    {.name = " << literal(k.name) << ",\n"
        << "     .signature = " << literal(k.signature) << ",\n"
        << "     .source = " << literal(row.source) << ",\n"
        << "     .sm = " << k.sm << ",\n"
        << "     .registers = " << k.registers << ",\n"
        << "     .static_shared_bytes = " << k.shared_bytes << ",\n"
        << "     .local_bytes = " << k.local_bytes() << ",\n"
        << "     .constant_bytes = " << k.constant_bytes << ",\n"
        << "     .spill_store_bytes = " << k.spill_store_bytes << ",\n"
        << "     .spill_load_bytes = " << k.spill_load_bytes << "},\n";
  }
  out << "}};\n";
}

constexpr std::string_view kHeader =
    "// Generated by gpulab-kernel-table-gen (tools/kernel_table) from ptxas's resource\n"
    "// report (nvcc -Xptxas -v) at build time. Do not edit: the build rewrites it.\n"
    "#include <array>\n"
    "\n"
    "#include \"gpulab/core/kernel_table.hpp\"\n"
    "\n";

}  // namespace

std::string failure_in(std::string_view report) {
  if (!report.starts_with(kFailedMarker)) {
    return "";
  }
  report.remove_prefix(kFailedMarker.size());
  const std::string_view why = report.substr(0, report.find('\n'));
  return why.empty() ? std::string("no message") : std::string(why);
}

std::string program_table_source(const std::vector<TableRow>& rows,
                                 const std::vector<SourceFailure>& failures) {
  std::ostringstream out;
  out << kHeader << "namespace gpulab {\nnamespace {\n\n";
  write_entries(out, "kEntries", rows);
  out << "\nconstexpr std::array<KernelSourceFailure, " << failures.size() << "> kFailures{{\n";
  for (const SourceFailure& failure : failures) {
    out << "    {.source = " << literal(failure.source) << ", .why = " << literal(failure.why)
        << "},\n";
  }
  out << "}};\n"
         "\n"
         "[[maybe_unused]] const bool kRegistered = (register_program_kernels(kEntries, "
         "kFailures), true);\n"
         "\n"
         "}  // namespace\n"
         "}  // namespace gpulab\n";
  return out.str();
}

std::string table_source(const std::vector<TableRow>& rows, std::string_view status) {
  std::ostringstream out;
  out << kHeader << "namespace gpulab {\nnamespace {\n\n";
  write_entries(out, "kTable", rows);
  out << "\n"
         "[[maybe_unused]] const bool kRegistered = (register_kernel_table(kTable, "
      << literal(status)
      << "), true);\n"
         "\n"
         "}  // namespace\n"
         "}  // namespace gpulab\n";
  return out.str();
}

}  // namespace gpulab::ptxas
