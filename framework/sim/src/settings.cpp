#include "settings.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <thread>
#include <utility>

#include "queue.hpp"

namespace gpulab::sim::detail {

namespace {

// A variable that is set and not empty.
const char* value_of(const char* (*get)(const char*), const char* name) {
  const char* text = get(name);
  return text != nullptr && *text != '\0' ? text : nullptr;
}

}  // namespace

Settings read_settings(const char* (*get)(const char*)) {
  Settings s;
  const auto fail = [&](std::string why) {
    if (s.error.empty()) {
      s.error = std::move(why);
    }
  };
  if (const char* spec = value_of(get, "GPULAB_SIM_SPEC")) {
    s.spec = spec;
  }
  if (const char* limit = get("GPULAB_SIM_MEMORY_BYTES"); limit != nullptr) {
    const auto bytes = parse_decimal(limit);
    if (!bytes || *bytes == 0) {
      fail(std::string("GPULAB_SIM_MEMORY_BYTES must be a positive byte count, not '") + limit +
           "'");
    } else {
      s.memory_bytes = static_cast<std::size_t>(*bytes);
    }
  }
  if (const char* file = value_of(get, "GPULAB_SIM_COUNTERS")) {
    if (!counting_available()) {
      fail("GPULAB_SIM_COUNTERS is set, but " + counting_unavailable_reason());
    } else if (std::FILE* out = std::fopen(file, "a"); out == nullptr) {
      fail(std::string("GPULAB_SIM_COUNTERS: cannot write '") + file + "'");
    } else {
      std::fclose(out);
      s.counters_file = file;
    }
  }
  if (const char* text = value_of(get, "GPULAB_SIM_COUNTERS_BY_LINE")) {
    if (std::string_view(text) == "1") {
      s.by_line = true;
      if (!counting_available()) {
        fail("GPULAB_SIM_COUNTERS_BY_LINE=1 needs memory counting, but " +
             counting_unavailable_reason());
      }
    } else if (std::string_view(text) != "0") {
      fail(std::string("GPULAB_SIM_COUNTERS_BY_LINE must be 0 or 1, not '") + text + "'");
    }
  }
  if (const char* text = value_of(get, "GPULAB_SIM_CLOCK")) {
    if (std::string_view(text) == "modeled") {
      s.clock = ClockMode::modeled;
      if (!counting_available()) {
        fail("GPULAB_SIM_CLOCK=modeled needs memory counting, but " +
             counting_unavailable_reason());
      }
    } else if (std::string_view(text) == "host") {
      s.clock = ClockMode::host;
    } else {
      fail(std::string("GPULAB_SIM_CLOCK must be 'host' or 'modeled', not '") + text + "'");
    }
  }
  if (const char* control = get("GPULAB_SIM_CACHE_CONTROL"); control != nullptr) {
    if (std::string_view(control) == "all") {
      s.cold_l2 = true;
    } else if (std::string_view(control) != "none") {
      fail(std::string("GPULAB_SIM_CACHE_CONTROL must be 'all' or 'none', not '") + control + "'");
    }
  }
  if (const char* text = value_of(get, "GPULAB_SIM_SCHEDULE")) {
    if (std::string why; !Schedule::parse(text, s.schedule, why)) {
      fail("GPULAB_SIM_SCHEDULE: " + why);
    }
  }
  s.workers = std::max(1u, std::thread::hardware_concurrency());
  if (const char* text = get("GPULAB_SIM_WORKERS"); text != nullptr) {
    const auto parsed = parse_decimal(text);
    if (parsed && *parsed >= 1 && *parsed <= 1024) {
      s.workers = static_cast<unsigned>(*parsed);
    } else {
      std::fprintf(stderr, "gpulab sim: ignoring GPULAB_SIM_WORKERS='%s' (1 to 1024)\n", text);
    }
  }
#if defined(__SANITIZE_ADDRESS__)
  s.stack_bytes = 1024 * 1024;  // AddressSanitizer's frames are several times larger
#else
  s.stack_bytes = 256 * 1024;
#endif
  if (const char* text = get("GPULAB_SIM_STACK_BYTES"); text != nullptr) {
    const auto parsed = parse_decimal(text);
    if (parsed && *parsed >= 16 * 1024) {
      s.stack_bytes = static_cast<std::size_t>(*parsed);
    } else {
      std::fprintf(stderr,
                   "gpulab sim: ignoring GPULAB_SIM_STACK_BYTES='%s' (a byte count >= 16384)\n",
                   text);
    }
  }
  if (const char* text = value_of(get, "GPULAB_SIM_SANITIZE")) {
    if (std::string_view(text) == "1") {
      s.sanitize = true;
      if (!counting_available()) {
        fail("GPULAB_SIM_SANITIZE=1 needs memory counting, but " + counting_unavailable_reason());
      }
    } else if (std::string_view(text) != "0") {
      fail(std::string("GPULAB_SIM_SANITIZE must be 0 or 1, not '") + text + "'");
    }
  }
  // As the CUDA runtime reads it: 1 makes every kernel launch synchronous (for debugging).
  if (const char* text = get("CUDA_LAUNCH_BLOCKING"); text != nullptr) {
    if (std::string_view(text) == "1") {
      s.launch_blocking = true;
    } else if (std::string_view(text) != "0") {
      std::fprintf(stderr, "gpulab sim: ignoring CUDA_LAUNCH_BLOCKING='%s' (0 or 1)\n", text);
    }
  }
  return s;
}

const Settings& settings() {
  // Never destroyed: the device thread reads it after main returns.
  static const Settings& instance = *new Settings(
      read_settings([](const char* name) -> const char* { return std::getenv(name); }));
  return instance;
}

}  // namespace gpulab::sim::detail
