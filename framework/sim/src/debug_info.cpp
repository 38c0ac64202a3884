// Addresses to source lines and variables through libdw's Dwfl, reporting this process's modules
// once (debug_info.hpp).
#include "debug_info.hpp"

#if defined(GPULAB_SIM_LIBDW)
#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpulab/sim/device.hpp"
#endif

namespace gpulab::sim::detail {
#if defined(GPULAB_SIM_LIBDW)
namespace {

std::mutex& debug_info_mutex() {
  static std::mutex mutex;
  return mutex;
}

// This process's modules as Dwfl reports them, or null where it cannot (no /proc). Never ended:
// kept for the process's life. Under debug_info_mutex().
Dwfl* session() {
  static Dwfl* const dwfl = []() -> Dwfl* {
    static char* debuginfo_path = nullptr;
    static const Dwfl_Callbacks callbacks = {
        .find_elf = dwfl_linux_proc_find_elf,
        .find_debuginfo = dwfl_standard_find_debuginfo,
        .section_address = nullptr,
        .debuginfo_path = &debuginfo_path,
    };
    Dwfl* d = dwfl_begin(&callbacks);
    if (d == nullptr) {
      return nullptr;
    }
    if (dwfl_linux_proc_report(d, getpid()) != 0 || dwfl_report_end(d, nullptr, nullptr) != 0) {
      dwfl_end(d);
      return nullptr;
    }
    return d;
  }();
  return dwfl;
}

std::string demangled(const char* name) {
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> text(
      abi::__cxa_demangle(name, nullptr, nullptr, &status), &std::free);
  return status == 0 && text ? std::string(text.get()) : std::string(name);
}

struct TlsSymbol {
  std::string name;
  GElf_Addr offset = 0;  // in the module's thread_local block
  GElf_Xword size = 0;
};

// The executable's thread_local symbol named `name`, or the one whose bytes hold `offset` (when
// `name` is null).
bool find_tls_symbol(Dwfl_Module* module, const char* name, GElf_Addr offset, TlsSymbol& out) {
  const int count = dwfl_module_getsymtab(module);
  for (int i = 0; i < count; ++i) {
    GElf_Sym symbol;
    GElf_Addr address = 0;
    const char* symbol_name =
        dwfl_module_getsym_info(module, i, &symbol, &address, nullptr, nullptr, nullptr);
    if (symbol_name == nullptr || GELF_ST_TYPE(symbol.st_info) != STT_TLS) {
      continue;
    }
    const bool match = name != nullptr ? std::strcmp(symbol_name, name) == 0
                                       : offset - symbol.st_value < symbol.st_size;
    if (match) {
      out = {symbol_name, symbol.st_value, symbol.st_size};
      return true;
    }
  }
  return false;
}

// "file.cu:42": a path's file name and a line.
std::string file_and_line(const char* path, int line) {
  const char* slash = std::strrchr(path, '/');
  return std::string(slash != nullptr ? slash + 1 : path) + ":" + std::to_string(line);
}

// Whether `path` is one of the sim's own headers (gpulab/sim/...: __ldg, the vector types' and
// half precision's operators), whose lines say less than the code that called them.
bool sim_header(const char* path) {
  return std::strstr(path, "/gpulab/sim/") != nullptr;
}

// The DIEs under `parent` that hold `pc`, outermost first, appended to `chain`: the function and
// the blocks and scopes inlined into it. A function's code may be described anywhere below the
// compile unit (a lambda's inside the function that holds it, a function inside its namespace),
// so every DIE is looked into until one holds `pc`. Returns whether one did.
bool scopes_at(Dwarf_Die* parent, Dwarf_Addr pc, std::vector<Dwarf_Die>& chain) {
  Dwarf_Die child;
  if (dwarf_child(parent, &child) != 0) {
    return false;
  }
  do {
    if (dwarf_haspc(&child, pc) > 0) {
      chain.push_back(child);
      scopes_at(&chain.back(), pc, chain);
      return true;
    }
    if (dwarf_haschildren(&child) > 0 && scopes_at(&child, pc, chain)) {
      return true;
    }
  } while (dwarf_siblingof(&child, &child) == 0);
  return false;
}

// Where the code at `address`, inlined from the sim's headers, was written: the call site of its
// innermost inlined scope whose call is in a file that is not one of them; {} when none is.
SourcePlace inlined_caller(Dwfl* dwfl, Dwarf_Addr address) {
  Dwarf_Addr bias = 0;
  Dwarf_Die* cu = dwfl_addrdie(dwfl, address, &bias);
  Dwarf_Files* files = nullptr;
  std::size_t count = 0;
  if (cu == nullptr || dwarf_getsrcfiles(cu, &files, &count) != 0) {
    return {};
  }
  std::vector<Dwarf_Die> chain;
  scopes_at(cu, address - bias, chain);
  for (auto scope = chain.rbegin(); scope != chain.rend(); ++scope) {  // innermost first
    Dwarf_Attribute attribute;
    Dwarf_Word file = 0;
    Dwarf_Word line = 0;
    if (dwarf_tag(&*scope) != DW_TAG_inlined_subroutine ||
        dwarf_formudata(dwarf_attr(&*scope, DW_AT_call_file, &attribute), &file) != 0 ||
        dwarf_formudata(dwarf_attr(&*scope, DW_AT_call_line, &attribute), &line) != 0) {
      continue;
    }
    const char* path = dwarf_filesrc(files, file, nullptr, nullptr);
    if (path != nullptr && !sim_header(path)) {
      return {path, static_cast<unsigned>(line)};
    }
  }
  return {};
}

// The line of the instruction before `pc` and, where that line is in the sim's own headers, the
// kernel's line that called them (else {}). The caller holds the mutex.
std::pair<SourcePlace, SourcePlace> places_of(std::uint64_t pc) {
  Dwfl* dwfl = session();
  if (dwfl == nullptr || pc == 0) {
    return {};
  }
  Dwfl_Line* line = dwfl_getsrc(dwfl, pc - 1);
  int number = 0;
  const char* file =
      line == nullptr ? nullptr : dwfl_lineinfo(line, nullptr, &number, nullptr, nullptr, nullptr);
  if (file == nullptr || number <= 0) {
    return {};
  }
  const SourcePlace here{file, static_cast<unsigned>(number)};
  return {here, sim_header(file) ? inlined_caller(dwfl, pc - 1) : SourcePlace{}};
}

}  // namespace

std::string source_line(std::uint64_t pc) {
  std::scoped_lock lock(debug_info_mutex());
  const auto [here, caller] = places_of(pc);
  if (here.line == 0) {
    return "";
  }
  const std::string text = file_and_line(here.file.c_str(), static_cast<int>(here.line));
  if (caller.line != 0) {
    return file_and_line(caller.file.c_str(), static_cast<int>(caller.line)) + " (in " + text + ")";
  }
  return text;
}

SourcePlace source_place(std::uint64_t pc) {
  std::scoped_lock lock(debug_info_mutex());
  // A lab's program launches its kernels many times: each instruction is looked up once.
  static std::unordered_map<std::uint64_t, SourcePlace> known;
  if (const auto it = known.find(pc); it != known.end()) {
    return it->second;
  }
  const auto [here, caller] = places_of(pc);
  return known[pc] = caller.line != 0 ? caller : here;
}

std::string shared_variable_at(std::uintptr_t address) {
  std::scoped_lock lock(debug_info_mutex());
  Dwfl* dwfl = session();
  // The executable's module holds the built-in variables: threadIdx is at a known offset of its
  // thread_local block, which gives the block's start in the running thread.
  const auto anchor = reinterpret_cast<std::uintptr_t>(&threadIdx);
  Dwfl_Module* module =
      dwfl == nullptr ? nullptr : dwfl_addrmodule(dwfl, reinterpret_cast<std::uintptr_t>(&session));
  TlsSymbol known;
  TlsSymbol found;
  if (module == nullptr || !find_tls_symbol(module, "threadIdx", 0, known) ||
      !find_tls_symbol(module, nullptr, address - (anchor - known.offset), found)) {
    return "";
  }
  std::string name = demangled(found.name.c_str());
  const std::uint64_t byte = address - (anchor - known.offset) - found.offset;
  std::string owner;
  // A function's static variable demangles as "FUNCTION::name".
  if (const auto scope = name.rfind("::"); scope != std::string::npos && name.find('(') < scope) {
    owner = name.substr(0, scope);
    name.erase(0, scope + 2);
  }
  return name + ", byte " + std::to_string(byte) + " of its " + std::to_string(found.size) +
         (owner.empty() ? "" : " (static __shared__ of " + owner + ")");
}
#else
// Without libdw (configuring said so): no debug information is read.
std::string source_line(std::uint64_t /*pc*/) {
  return "";
}
SourcePlace source_place(std::uint64_t /*pc*/) {
  return {};
}
std::string shared_variable_at(std::uintptr_t /*address*/) {
  return "";
}
#endif

}  // namespace gpulab::sim::detail
