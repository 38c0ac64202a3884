#include "files.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace gpulab::cli {

std::optional<std::string> read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_text_file(const std::filesystem::path& path, const std::string& text) {
  if (path.has_parent_path()) {
    std::filesystem::create_directories(path.parent_path());
  }
  const std::filesystem::path temp = path.string() + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) {
      throw std::runtime_error("cannot write " + temp.string());
    }
  }
  std::filesystem::rename(temp, path);
}

}  // namespace gpulab::cli
