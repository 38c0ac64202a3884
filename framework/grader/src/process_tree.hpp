// What the process runner (process.cpp) asks the operating system about processes, and nothing
// else does. One implementation per platform: process_tree_linux.cpp (prctl's child subreaper and
// /proc) and process_tree_macos.cpp (libproc: untested, there is no Mac here).
#pragma once

#include <sys/types.h>

#include <vector>

namespace gpulab::detail {

/// Makes this process the parent of every process orphaned below it (instead of init or launchd),
/// so a descendant that leaves its process group and loses its parent is still found. Whether
/// the platform can: Linux can (PR_SET_CHILD_SUBREAPER), macOS cannot.
bool adopt_orphans();

/// The processes whose parent is `parent` (ended ones not yet reaped included).
[[nodiscard]] std::vector<pid_t> children_of(pid_t parent);

}  // namespace gpulab::detail
