// The function a code address starts, read from the symbol table of the ELF file that holds it
// (the executable or a shared library): the CUDA runtime's per-kernel queries
// (cudaFuncGetAttributes, cudaOccupancy*) get a kernel's address only, and this is how the sim
// finds its name and file, and so its figures in the kernel table.
#pragma once

#include <optional>
#include <string>

namespace gpulab::sim::detail {

struct FunctionSymbol {
  std::string name;  ///< demangled, e.g. "void ns::(anonymous namespace)::k<2>(float*)"
  /// The file name (no directories) of the source a file-local symbol was compiled from, as the
  /// symbol table's file entry gives it, with the sim's translation suffix dropped ("k.cu.cpp",
  /// the translated k.cu, gives "k.cu"); empty for an external symbol, which names no file.
  std::string source;
};

/// The function symbol whose value is `address`; nullopt when no symbol table has one (a
/// stripped program, a platform whose binaries are not ELF).
[[nodiscard]] std::optional<FunctionSymbol> function_symbol_at(const void* address);

}  // namespace gpulab::sim::detail
