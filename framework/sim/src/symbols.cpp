// function_symbol_at: the ELF file that holds an address (dl_iterate_phdr), its symbol table
// (.symtab, else .dynsym), and the function symbol whose value is the address. A file-local
// symbol's source is the last file entry (STT_FILE) before it: the linker puts each object's local
// symbols after its file entry.
#include "symbols.hpp"

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>

#if defined(__linux__)
#include <cxxabi.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace gpulab::sim::detail {

#if defined(__linux__)

namespace {

// The loaded ELF object that holds an address: its file and load base.
struct LoadedObject {
  std::uintptr_t address = 0;
  std::string path;
  std::uintptr_t base = 0;
  bool found = false;
};

int find_object(dl_phdr_info* info, std::size_t, void* data) {
  auto& object = *static_cast<LoadedObject*>(data);
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    const std::uintptr_t start = info->dlpi_addr + segment.p_vaddr;
    if (segment.p_type == PT_LOAD && object.address >= start &&
        object.address - start < segment.p_memsz) {
      // The executable's entry has no name; /proc/self/exe is its file wherever it was started.
      const bool executable = info->dlpi_name == nullptr || *info->dlpi_name == '\0';
      object.path = executable ? "/proc/self/exe" : info->dlpi_name;
      object.base = info->dlpi_addr;
      object.found = true;
      return 1;
    }
  }
  return 0;
}

// A whole file mapped read-only; empty when it cannot be opened or mapped.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      return;
    }
    struct stat status {};
    if (::fstat(fd, &status) == 0 && status.st_size > 0) {
      void* mapping =
          ::mmap(nullptr, static_cast<std::size_t>(status.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (mapping != MAP_FAILED) {
        bytes_ = {static_cast<const unsigned char*>(mapping),
                  static_cast<std::size_t>(status.st_size)};
      }
    }
    ::close(fd);
  }
  ~MappedFile() {
    if (!bytes_.empty()) {
      ::munmap(const_cast<unsigned char*>(bytes_.data()), bytes_.size());
    }
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // `count` objects of type T at `offset`, or an empty span when the file is too short for them.
  template <class T>
  [[nodiscard]] std::span<const T> array_at(std::uint64_t offset, std::uint64_t count) const {
    if (offset > bytes_.size() || count > (bytes_.size() - offset) / sizeof(T) ||
        (offset % alignof(T)) != 0) {
      return {};
    }
    return {reinterpret_cast<const T*>(bytes_.data() + offset), static_cast<std::size_t>(count)};
  }

  // The NUL-terminated string at `offset` of the string table [table_offset, +table_size).
  [[nodiscard]] std::string_view string_at(const ElfW(Shdr) & table, std::uint64_t offset) const {
    const auto chars = array_at<char>(table.sh_offset, table.sh_size);
    if (offset >= chars.size()) {
      return {};
    }
    const std::string_view rest(chars.data() + offset, chars.size() - offset);
    return rest.substr(0, rest.find('\0'));
  }

 private:
  std::span<const unsigned char> bytes_;
};

// A symbol's name as C++ source writes it: demangled when it is a mangled C++ name.
std::string demangled(std::string_view mangled) {
  const std::string text(mangled);
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> name(
      abi::__cxa_demangle(text.c_str(), nullptr, nullptr, &status), &std::free);
  return status == 0 && name != nullptr ? std::string(name.get()) : text;
}

// The source of a file entry: its file name, without the ".cpp" the sim's translation of a .cu
// file adds (cmake/GpulabBackend.cmake).
std::string source_of(std::string_view file_entry) {
  file_entry = file_entry.substr(file_entry.rfind('/') + 1);  // npos + 1 == 0: the whole name
  if (file_entry.ends_with(".cu.cpp")) {
    file_entry.remove_suffix(std::string_view(".cpp").size());
  }
  return std::string(file_entry);
}

// The function symbol of `table` (a symbol table section) whose value is `value`.
std::optional<FunctionSymbol> find_in(const MappedFile& file, std::span<const ElfW(Shdr)> sections,
                                      const ElfW(Shdr) & table, std::uint64_t value) {
  if (table.sh_link >= sections.size() || table.sh_entsize != sizeof(ElfW(Sym))) {
    return std::nullopt;
  }
  const ElfW(Shdr)& strings = sections[table.sh_link];
  std::string_view file_entry;
  for (const ElfW(Sym) & symbol :
       file.array_at<ElfW(Sym)>(table.sh_offset, table.sh_size / sizeof(ElfW(Sym)))) {
    const unsigned type = ELF64_ST_TYPE(symbol.st_info);
    if (type == STT_FILE) {
      file_entry = file.string_at(strings, symbol.st_name);
    } else if (type == STT_FUNC && symbol.st_shndx != SHN_UNDEF && symbol.st_value == value) {
      const bool local = ELF64_ST_BIND(symbol.st_info) == STB_LOCAL;
      return FunctionSymbol{demangled(file.string_at(strings, symbol.st_name)),
                            local ? source_of(file_entry) : std::string()};
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<FunctionSymbol> function_symbol_at(const void* address) {
  if (address == nullptr) {
    return std::nullopt;
  }
  LoadedObject object;
  object.address = reinterpret_cast<std::uintptr_t>(address);
  if (dl_iterate_phdr(find_object, &object) == 0 || !object.found) {
    return std::nullopt;
  }
  const MappedFile file(object.path);
  const auto header = file.array_at<ElfW(Ehdr)>(0, 1);
  if (header.empty() || std::memcmp(header[0].e_ident, ELFMAG, SELFMAG) != 0 ||
      header[0].e_ident[EI_CLASS] != (sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32) ||
      header[0].e_shentsize != sizeof(ElfW(Shdr))) {
    return std::nullopt;
  }
  const auto sections = file.array_at<ElfW(Shdr)>(header[0].e_shoff, header[0].e_shnum);
  const std::uint64_t value = object.address - object.base;
  // The full symbol table has the file-local functions (kernels in anonymous namespaces); the
  // dynamic one, all a stripped library keeps, only exported ones.
  for (const ElfW(Word) kind : {ElfW(Word){SHT_SYMTAB}, ElfW(Word){SHT_DYNSYM}}) {
    for (const ElfW(Shdr) & section : sections) {
      if (section.sh_type == kind) {
        return find_in(file, sections, section, value);
      }
    }
  }
  return std::nullopt;
}

#else

std::optional<FunctionSymbol> function_symbol_at(const void*) {
  return std::nullopt;  // no ELF symbol tables here
}

#endif

}  // namespace gpulab::sim::detail
