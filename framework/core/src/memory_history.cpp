// Memory history files (memory_history.hpp).
#include "gpulab/core/memory_history.hpp"

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "gpulab/core/files.hpp"
#include "results_errors.hpp"
#include "text.hpp"

namespace gpulab {
namespace {

using detail::describe;
using nlohmann::json;

constexpr double kMaxCount = 9007199254740992.0;  // 2^53: every whole number up to it is exact
constexpr double kMaxTimeMs = 1e12;               // 30 years: anything later is not a run

constexpr MemoryEventKind kKinds[] = {MemoryEventKind::allocate, MemoryEventKind::free,
                                      MemoryEventKind::reserve, MemoryEventKind::release};

class Reader {
 public:
  explicit Reader(std::string_view source) : source_(source) {}

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    detail::fail(source_, where, what);
  }

  const json& member(const json& object, const std::string& base, const char* key,
                     const char* what) const {
    const auto it = object.find(key);
    if (it == object.end()) {
      fail(base + "." + key, std::string("expected ") + what + ", found nothing");
    }
    return *it;
  }

  // A whole number in [0, 2^53] (an integer, or a float such as 1e3 with no fraction).
  std::size_t count(const json& value, const std::string& where) const {
    double number = -1;
    if (value.is_number_unsigned()) {
      number = static_cast<double>(value.get<std::uint64_t>());
    } else if (value.is_number_integer()) {
      number = static_cast<double>(value.get<std::int64_t>());
    } else if (value.is_number_float() && value.get<double>() == std::floor(value.get<double>())) {
      number = value.get<double>();
    }
    if (!(number >= 0 && number <= kMaxCount)) {
      fail(where, "expected a whole number from 0 to 2^53, found " + describe(value));
    }
    return static_cast<std::size_t>(number);
  }

  // An address or a stream handle: any unsigned 64-bit integer.
  std::uint64_t word(const json& value, const std::string& where) const {
    if (value.is_number_unsigned()) {
      return value.get<std::uint64_t>();
    }
    if (value.is_number_integer() && value.get<std::int64_t>() >= 0) {
      return static_cast<std::uint64_t>(value.get<std::int64_t>());
    }
    fail(where, "expected an unsigned integer, found " + describe(value));
  }

  std::string text(const json& value, const std::string& where) const {
    if (!value.is_string()) {
      fail(where, "expected a string, found " + describe(value));
    }
    const auto& s = value.get_ref<const std::string&>();
    if (!detail::is_valid_utf8(s)) {
      fail(where, "expected UTF-8 text, found ill-formed bytes");
    }
    return s;
  }

  MemoryEvent event(const json& value, const std::string& at) const {
    if (!value.is_object()) {
      fail(at, "expected an event object, found " + describe(value));
    }
    MemoryEvent e;
    const std::string kind = text(member(value, at, "kind", "the event's kind"), at + ".kind");
    bool known = false;
    for (const MemoryEventKind k : kKinds) {
      if (kind == to_string(k)) {
        e.kind = k;
        known = true;
      }
    }
    if (!known) {
      fail(at + ".kind",
           "expected allocate, free, reserve or release, found " + detail::quote_text(kind));
    }
    e.id = count(member(value, at, "id", "the allocation's id"), at + ".id");
    if (e.id == 0) {
      fail(at + ".id", "expected an id of 1 or more, found 0");
    }
    e.bytes = count(member(value, at, "bytes", "a size"), at + ".bytes");
    const json& time = member(value, at, "time_ms", "a time");
    if (!time.is_number() || !(time.get<double>() >= 0 && time.get<double>() <= kMaxTimeMs)) {
      fail(at + ".time_ms", "expected a time from 0 to 1e12 ms, found " + describe(time));
    }
    e.time_ms = time.get<double>();
    e.allocated_after =
        count(member(value, at, "allocated_after", "a byte count"), at + ".allocated_after");
    e.reserved_after =
        count(member(value, at, "reserved_after", "a byte count"), at + ".reserved_after");
    if (const auto it = value.find("stream"); it != value.end()) {
      e.stream = word(*it, at + ".stream");
    }
    if (const auto it = value.find("address"); it != value.end()) {
      e.address = word(*it, at + ".address");
    }
    if (const auto it = value.find("file"); it != value.end()) {
      e.file = text(*it, at + ".file");
    }
    if (const auto it = value.find("line"); it != value.end()) {
      const std::size_t line = count(*it, at + ".line");
      if (line > 0xffffffffU) {
        fail(at + ".line", "expected a line number, found " + describe(*it));
      }
      e.line = static_cast<unsigned>(line);
    }
    return e;
  }

  MemoryHistory history(const json& root) const {
    if (!root.is_object()) {
      fail("(document)", "expected a memory history object, found " + describe(root));
    }
    MemoryHistory h;
    // The context is checked as a results file's is.
    json envelope = {{"context", member(root, "(document)", "context", "a context object")},
                     {"results", json::array()}};
    h.context = results_from_json(envelope, source_).context;
    const json& section = member(root, "(document)", "memory_history", "a memory_history object");
    if (!section.is_object()) {
      fail("memory_history", "expected an object, found " + describe(section));
    }
    h.capacity_bytes = count(member(section, "memory_history", "capacity_bytes", "a byte count"),
                             "memory_history.capacity_bytes");
    h.dropped_events = count(member(section, "memory_history", "dropped_events", "a count"),
                             "memory_history.dropped_events");
    const json& events = member(section, "memory_history", "events", "an array of events");
    if (!events.is_array()) {
      fail("memory_history.events", "expected an array of events, found " + describe(events));
    }
    std::map<std::uint64_t, std::size_t> sizes;  // id -> bytes, of what the file made
    h.events.reserve(events.size());
    for (std::size_t i = 0; i < events.size(); ++i) {
      const std::string at = "memory_history.events[" + std::to_string(i) + "]";
      MemoryEvent e = event(events[i], at);
      if (!h.events.empty() && e.time_ms < h.events.back().time_ms) {
        fail(at + ".time_ms", "expected times in order, found " + std::to_string(e.time_ms) +
                                  " ms after " + std::to_string(h.events.back().time_ms) + " ms");
      }
      const bool makes = e.kind == MemoryEventKind::allocate || e.kind == MemoryEventKind::reserve;
      if (makes) {
        sizes[e.id] = e.bytes;
      } else if (const auto it = sizes.find(e.id); it != sizes.end() && it->second != e.bytes) {
        fail(at + ".bytes", "expected " + std::to_string(it->second) + " bytes, the size of id " +
                                std::to_string(e.id) + " when it was made, found " +
                                std::to_string(e.bytes));
      }
      h.events.push_back(std::move(e));
    }
    return h;
  }

 private:
  std::string source_;
};

}  // namespace

MemoryHistory capture_memory_history(ResultsContext context, std::size_t capacity_bytes) {
  return {std::move(context), capacity_bytes, dropped_memory_events(), memory_history()};
}

nlohmann::json to_json(const MemoryHistory& history) {
  json events = json::array();
  for (const MemoryEvent& e : history.events) {
    json entry = {{"kind", to_string(e.kind)},
                  {"id", e.id},
                  {"bytes", e.bytes},
                  {"time_ms", e.time_ms},
                  {"allocated_after", e.allocated_after},
                  {"reserved_after", e.reserved_after},
                  {"stream", e.stream},
                  {"address", e.address}};
    if (!e.file.empty()) {
      entry["file"] = e.file;
      entry["line"] = e.line;
    }
    events.push_back(std::move(entry));
  }
  json root = to_json(ResultsFile{history.context, {}});
  root["memory_history"] = {{"capacity_bytes", history.capacity_bytes},
                            {"dropped_events", history.dropped_events},
                            {"events", std::move(events)}};
  // What the reader checks, the writer checks: a history that would not load is not written.
  (void)Reader("memory history to write").history(root);
  return root;
}

MemoryHistory memory_history_from_json(const nlohmann::json& document, std::string_view source) {
  return Reader(source).history(document);
}

MemoryHistory load_memory_history(const std::filesystem::path& path, const LoadLimits& limits) {
  return Reader(path.string()).history(load_results_json(path, limits));
}

void save_memory_history(const std::filesystem::path& path, const MemoryHistory& history) {
  const std::string text = to_json(history).dump() + "\n";  // compact: histories are long
  try {
    write_file_atomically(path, text, ParentFolders::must_exist);
  } catch (const std::runtime_error& error) {
    throw ResultsError(error.what());
  }
}

}  // namespace gpulab
