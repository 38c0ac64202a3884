// Unit tests of memory_history.hpp: a recorded history saved and loaded back unchanged, and
// hostile files refused with one error naming the field.
#include "gpulab/core/memory_history.hpp"

#include <gtest/gtest.h>

#include <unistd.h>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace gpulab {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

ResultsContext context() {
  ResultsContext c;
  c.gpulab_version = "0.1.0";
  c.backend = "sim";
  c.device = "gpulab sim (H100 SXM)";
  c.spec = "H100 SXM";
  c.date = "2026-11-26T10:00:00Z";
  c.clock = TimingClock::host;
  return c;
}

MemoryEvent event(MemoryEventKind kind, std::uint64_t id, std::size_t bytes, double time_ms,
                  std::size_t allocated, std::size_t reserved) {
  MemoryEvent e;
  e.kind = kind;
  e.id = id;
  e.bytes = bytes;
  e.time_ms = time_ms;
  e.allocated_after = allocated;
  e.reserved_after = reserved;
  return e;
}

MemoryHistory sample() {
  MemoryHistory h;
  h.context = context();
  h.capacity_bytes = 80'000'000'000;
  h.dropped_events = 2;
  h.events = {event(MemoryEventKind::allocate, 1, 4096, 0.5, 4096, 4096),
              event(MemoryEventKind::reserve, 2, 1 << 20, 0.75, 4096, 4096 + (1 << 20)),
              event(MemoryEventKind::free, 1, 4096, 1.0, 0, 1 << 20),
              event(MemoryEventKind::release, 2, 1 << 20, 2.0, 0, 0)};
  h.events[0].file = "labs/lab05_memory/memory.cu";
  h.events[0].line = 42;
  h.events[0].stream = 7;
  h.events[0].address = 0x7f0000001000;
  h.events[2].file = h.events[0].file;
  h.events[2].line = 42;
  return h;
}

void expect_equal(const MemoryHistory& a, const MemoryHistory& b) {
  EXPECT_EQ(a.context, b.context);
  EXPECT_EQ(a.capacity_bytes, b.capacity_bytes);
  EXPECT_EQ(a.dropped_events, b.dropped_events);
  ASSERT_EQ(a.events.size(), b.events.size());
  for (std::size_t i = 0; i < a.events.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(a.events[i].kind, b.events[i].kind);
    EXPECT_EQ(a.events[i].id, b.events[i].id);
    EXPECT_EQ(a.events[i].bytes, b.events[i].bytes);
    EXPECT_EQ(a.events[i].time_ms, b.events[i].time_ms);
    EXPECT_EQ(a.events[i].allocated_after, b.events[i].allocated_after);
    EXPECT_EQ(a.events[i].reserved_after, b.events[i].reserved_after);
    EXPECT_EQ(a.events[i].stream, b.events[i].stream);
    EXPECT_EQ(a.events[i].address, b.events[i].address);
    EXPECT_EQ(a.events[i].file, b.events[i].file);
    EXPECT_EQ(a.events[i].line, b.events[i].line);
  }
}

class MemoryHistoryFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("gpulab-memory-history-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(MemoryHistoryFile, SavesAndLoadsBackEveryField) {
  const fs::path path = dir_ / "run.memory.json";
  save_memory_history(path, sample());
  expect_equal(load_memory_history(path), sample());
}

TEST_F(MemoryHistoryFile, IsAlsoAResultsFileWithNoResults) {
  const fs::path path = dir_ / "run.memory.json";
  save_memory_history(path, sample());
  const ResultsFile file = load_results(path);
  EXPECT_EQ(file.context, context());
  EXPECT_TRUE(file.results.empty());
}

TEST_F(MemoryHistoryFile, MissingFilesAndFoldersAreOneClearError) {
  try {
    (void)load_memory_history(dir_ / "missing.json");
    FAIL() << "a missing file loaded";
  } catch (const ResultsError& e) {
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)load_memory_history(dir_), ResultsError);
  EXPECT_THROW(save_memory_history(dir_ / "no-such-folder" / "x.json", sample()), ResultsError);
  std::ofstream(dir_ / "bad.json") << "{\"context\": ";
  EXPECT_THROW((void)load_memory_history(dir_ / "bad.json"), ResultsError);
}

TEST(MemoryHistoryJson, ARecordedHistoryRoundTrips) {
  start_memory_history();
  const int block = 0;
  note_device_malloc(&block, 64, 3);
  note_device_free(&block);
  stop_memory_history();
  const MemoryHistory h = capture_memory_history(context(), 1000);
  ASSERT_EQ(h.events.size(), 2U);
  EXPECT_EQ(h.capacity_bytes, 1000U);
  expect_equal(memory_history_from_json(to_json(h), "test"), h);
}

// Each case: a change to a valid document, and the field its error must name.
struct Hostile {
  const char* name;
  void (*change)(json&);
  const char* field;
};

TEST(MemoryHistoryJson, HostileDocumentsAreRefusedNamingTheField) {
  const Hostile cases[] = {
      {"not an object", [](json& j) { j = json::array(); }, "(document)"},
      {"no history", [](json& j) { j.erase("memory_history"); }, "memory_history"},
      {"history not an object", [](json& j) { j["memory_history"] = 3; }, "memory_history"},
      {"no context", [](json& j) { j.erase("context"); }, "context"},
      {"bad context", [](json& j) { j["context"]["backend"] = ""; }, "backend"},
      {"negative capacity", [](json& j) { j["memory_history"]["capacity_bytes"] = -1; },
       "capacity_bytes"},
      {"events not an array", [](json& j) { j["memory_history"]["events"] = "x"; }, "events"},
      {"event not an object", [](json& j) { j["memory_history"]["events"][1] = 5; }, "events[1]"},
      {"unknown kind", [](json& j) { j["memory_history"]["events"][0]["kind"] = "steal"; },
       "events[0].kind"},
      {"id zero", [](json& j) { j["memory_history"]["events"][0]["id"] = std::uint64_t{0}; },
       "events[0].id"},
      {"time beyond 1e12 ms", [](json& j) { j["memory_history"]["events"][3]["time_ms"] = 1e300; },
       "events[3].time_ms"},
      {"negative address", [](json& j) { j["memory_history"]["events"][0]["address"] = -1; },
       "events[0].address"},
      {"fractional bytes", [](json& j) { j["memory_history"]["events"][0]["bytes"] = 1.5; },
       "events[0].bytes"},
      {"bytes beyond 2^53", [](json& j) { j["memory_history"]["events"][0]["bytes"] = 1e300; },
       "events[0].bytes"},
      {"bytes as text", [](json& j) { j["memory_history"]["events"][0]["bytes"] = "64"; },
       "events[0].bytes"},
      {"no time", [](json& j) { j["memory_history"]["events"][0].erase("time_ms"); },
       "events[0].time_ms"},
      {"negative time", [](json& j) { j["memory_history"]["events"][0]["time_ms"] = -1; },
       "events[0].time_ms"},
      {"time going back", [](json& j) { j["memory_history"]["events"][2]["time_ms"] = 0.1; },
       "events[2].time_ms"},
      {"free of another size", [](json& j) { j["memory_history"]["events"][2]["bytes"] = 1; },
       "events[2].bytes"},
      {"file not UTF-8", [](json& j) { j["memory_history"]["events"][0]["file"] = "\xff"; },
       "events[0].file"},
      {"line too large", [](json& j) { j["memory_history"]["events"][0]["line"] = 1e12; },
       "events[0].line"},
  };
  for (const Hostile& c : cases) {
    SCOPED_TRACE(c.name);
    json document = to_json(sample());
    c.change(document);
    try {
      (void)memory_history_from_json(document, "hostile.json");
      ADD_FAILURE() << "accepted";
    } catch (const ResultsError& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.rfind("hostile.json: ", 0), 0U) << message;
      EXPECT_NE(message.find(c.field), std::string::npos) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
    }
  }
}

TEST(MemoryHistoryJson, SignedIntegersAndTaggedAddressesAreAccepted) {
  json document = to_json(sample());
  document["memory_history"]["events"][0]["id"] = std::int64_t{1};  // built in code: a signed 1
  document["memory_history"]["events"][0]["address"] = std::uint64_t{0xff00'0000'0000'1000};
  const MemoryHistory h = memory_history_from_json(document, "test");
  EXPECT_EQ(h.events[0].id, 1U);
  EXPECT_EQ(h.events[0].address, 0xff00'0000'0000'1000U);
}

TEST(MemoryHistoryJson, AFreeOfAnAllocationMadeBeforeTheHistoryIsAccepted) {
  MemoryHistory h = sample();
  h.events.insert(h.events.begin(), event(MemoryEventKind::free, 99, 12, 0.25, 0, 0));
  expect_equal(memory_history_from_json(to_json(h), "test"), h);
}

TEST(MemoryHistoryJson, TheWriterRefusesWhatTheReaderWould) {
  MemoryHistory h = sample();
  h.events[1].time_ms = 0.1;  // before the first event
  EXPECT_THROW((void)to_json(h), ResultsError);
  h = sample();
  h.context.backend.clear();
  EXPECT_THROW((void)to_json(h), ResultsError);
}

}  // namespace
}  // namespace gpulab
