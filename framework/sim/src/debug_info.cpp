// Addresses to source lines and variables through libdw's Dwfl, reporting this process's modules
// once (debug_info.hpp).
#include "debug_info.hpp"

#if defined(GPULAB_SIM_LIBDW)
#include <cxxabi.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

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

}  // namespace

std::string source_line(std::uint64_t pc) {
  std::scoped_lock lock(debug_info_mutex());
  Dwfl* dwfl = session();
  if (dwfl == nullptr || pc == 0) {
    return "";
  }
  Dwfl_Line* line = dwfl_getsrc(dwfl, pc - 1);
  int number = 0;
  const char* file =
      line == nullptr ? nullptr : dwfl_lineinfo(line, nullptr, &number, nullptr, nullptr, nullptr);
  if (file == nullptr || number <= 0) {
    return "";
  }
  const char* slash = std::strrchr(file, '/');
  return std::string(slash != nullptr ? slash + 1 : file) + ":" + std::to_string(number);
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
std::string shared_variable_at(std::uintptr_t /*address*/) {
  return "";
}
#endif

}  // namespace gpulab::sim::detail
