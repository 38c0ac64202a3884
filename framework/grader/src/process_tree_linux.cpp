#include <sys/prctl.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "process_tree.hpp"

namespace gpulab::detail {

bool adopt_orphans() {
  return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;
}

// Read from /proc/<pid>/stat: "pid (comm) state ppid ...", where comm may hold spaces and
// parentheses, so the fields are counted from the last ')'.
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> children;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    std::getline(in, stat);
    const std::size_t close = stat.rfind(')');
    if (close == std::string::npos) {
      continue;
    }
    char state = 0;
    int ppid = 0;
    if (std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) == 2 && ppid == parent) {
      children.push_back(static_cast<pid_t>(std::stoi(name)));
    }
  }
  return children;
}

}  // namespace gpulab::detail
