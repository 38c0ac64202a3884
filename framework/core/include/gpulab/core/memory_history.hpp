// Memory history files: the events memory_stats.hpp recorded, saved for the viewer and loaded
// back with the same care as a results file (a hostile file gives one clear error, never a crash).
//
//   gpulab::start_memory_history();
//   run();
//   gpulab::save_memory_history("run.memory.json", gpulab::capture_memory_history(context, cap));
//
// The file is a results file (context, an empty "results") with a "memory_history" object:
//   capacity_bytes, dropped_events, and "events": one object per event with kind ("allocate",
//   "free", "reserve", "release"), id, bytes, time_ms, allocated_after, reserved_after, stream,
//   file and line (the last two only when known).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpulab/core/memory_stats.hpp"
#include "gpulab/core/results.hpp"

namespace gpulab {

/// A recorded memory history with what produced it.
struct MemoryHistory {
  ResultsContext context;           ///< as in a results file
  std::size_t capacity_bytes = 0;   ///< the device's memory (0: unknown)
  std::size_t dropped_events = 0;   ///< events left out because the history was full
  std::vector<MemoryEvent> events;  ///< oldest first
};

/// The history recorded so far (memory_history(), dropped_memory_events()) with `context`.
[[nodiscard]] MemoryHistory capture_memory_history(ResultsContext context,
                                                   std::size_t capacity_bytes);

/// The history as JSON. Throws ResultsError for an invalid context (as to_json of a results
/// file) or invalid events (see memory_history_from_json).
[[nodiscard]] nlohmann::json to_json(const MemoryHistory& history);

/// Reads a history from JSON; `source` prefixes errors. Throws ResultsError naming the field
/// (e.g. "memory_history.events[3].bytes") for what a results file's context rejects, a missing
/// memory_history, an unknown kind, a count that is not a whole number in [0, 2^53], an address
/// or stream that is not an unsigned 64-bit integer, an id of 0, a time outside [0, 1e12] ms,
/// times that go backwards, a free or release of an id the file
/// allocated or reserved with another size, a file name that is not valid UTF-8, or more events
/// than the JSON limits allow.
[[nodiscard]] MemoryHistory memory_history_from_json(const nlohmann::json& json,
                                                     std::string_view source);

/// Loads a history file, with load_results' limits and checks of the file itself.
[[nodiscard]] MemoryHistory load_memory_history(const std::filesystem::path& path,
                                                const LoadLimits& limits = {});

/// Writes a history file atomically (as save_results); throws ResultsError.
void save_memory_history(const std::filesystem::path& path, const MemoryHistory& history);

}  // namespace gpulab
