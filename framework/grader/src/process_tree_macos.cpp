// Untested: there is no Mac here (README.md, its table of platforms).
#include <libproc.h>

#include <cstdint>

#include "process_tree.hpp"

namespace gpulab::detail {

// macOS has no subreaper: an orphan goes to launchd. The run's process group is still killed
// whole (process.cpp), but a descendant that leaves it (setsid) is not found.
bool adopt_orphans() {
  return false;
}

std::vector<pid_t> children_of(pid_t parent) {
  // proc_listpids answers in bytes; the list may grow between the two calls, hence the margin.
  const int bytes = proc_listpids(PROC_PPID_ONLY, static_cast<uint32_t>(parent), nullptr, 0);
  if (bytes <= 0) {
    return {};
  }
  std::vector<pid_t> children(static_cast<std::size_t>(bytes) / sizeof(pid_t) + 16);
  const int filled = proc_listpids(PROC_PPID_ONLY, static_cast<uint32_t>(parent), children.data(),
                                   static_cast<int>(children.size() * sizeof(pid_t)));
  children.resize(filled > 0 ? static_cast<std::size_t>(filled) / sizeof(pid_t) : 0);
  std::erase(children, 0);
  return children;
}

}  // namespace gpulab::detail
