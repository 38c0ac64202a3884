// Unit tests of sha256.hpp: the FIPS 180-4 example messages (NIST "Examples with intermediate
// values", SHA-256), lengths around the padding boundaries (55/56 bytes: whether the length field
// still fits in the last block; 64 bytes: one full block), and sha256_file; each with both engines
// (the CPU's SHA instructions, where it has them, and portable C++).
#include "gpulab/grader/sha256.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace gpulab {
namespace {

namespace fs = std::filesystem;

constexpr Sha256Engine kEngines[] = {Sha256Engine::automatic, Sha256Engine::portable};

const char* name(Sha256Engine engine) {
  return engine == Sha256Engine::automatic ? "automatic" : "portable";
}

TEST(Sha256, NistExampleMessages) {
  for (const Sha256Engine e : kEngines) {
    EXPECT_EQ(sha256_hex("", e), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        << name(e);
    EXPECT_EQ(sha256_hex("abc", e),
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        << name(e);
    // 448 bits: the padding needs a second block.
    EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", e),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        << name(e);
  }
}

TEST(Sha256, OneMillionAs) {
  for (const Sha256Engine e : kEngines) {
    EXPECT_EQ(sha256_hex(std::string(1'000'000, 'a'), e),
              "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        << name(e);
  }
}

// "abcd...zabcd..." of `length` bytes.
std::string alphabet(std::size_t length) {
  std::string out;
  for (std::size_t i = 0; i < length; ++i) {
    out += static_cast<char>('a' + i % 26);
  }
  return out;
}

TEST(Sha256, LengthsAroundThePaddingBoundaries) {
  // Digests from coreutils `sha256sum` of the same bytes.
  const struct {
    std::size_t length;
    const char* digest;
  } cases[] = {
      {1, "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"},
      {55, "595615dbe4f0f407ae397d08b4c2cb870cb9b0e11937416f950c5160acf9c005"},
      {56, "784f623b787495078e93ff28a25b581df0584055a7e71d8cd90c454716b92f51"},
      {57, "808f0738aa4401bdee842e5a15a7baad5809f976d8eb6f9bd2683cebd2e8d671"},
      {63, "5ca3e1ef5207490eac01a795e5cc94d59582a5118bf9534665c8668d87aa647c"},
      {64, "2fcd5a0d60e4c941381fcc4e00a4bf8be422c3ddfafb93c809e8d1e2bfffae8e"},
      {65, "1b3cd1877ab2f2f19f7be001722554f336cb799df0329de0bb4c118dc6abc06d"},
      {119, "faef67da856d6fd9c8d12f9ed0a4fefd3cf0ce085ab43e2907418d457e3c354b"},
      {120, "c9512b08619c19fbb503c7da6b46ef20301e5f7a7a5f43989182398536f5c5c8"},
      {127, "1b9907986f18ddc2b37e18be502d82d69d6e18bb9dff9e16f2aceea7d88cb933"},
      {128, "6c05be2c4268843ae47e68e611277ce62c02153f2f4d2e1e2a1a4b44f766cf74"},
      {129, "cd6bba8374324cbcc0c296b94f35299c0b9820393116358ac3afaf091a4955a5"},
  };
  for (const Sha256Engine e : kEngines) {
    for (const auto& c : cases) {
      EXPECT_EQ(sha256_hex(alphabet(c.length), e), c.digest) << c.length << " bytes, " << name(e);
    }
  }
}

TEST(Sha256, EveryByteValueIncludingNulAndHighBytes) {
  std::string bytes;
  for (int i = 0; i < 256; ++i) {
    bytes += static_cast<char>(i);
  }
  ASSERT_EQ(bytes.size(), 256u);
  for (const Sha256Engine e : kEngines) {
    EXPECT_EQ(sha256_hex(bytes, e),
              "40aff2e9d2d8922e47afd4648e6967497158785fbd1da870e7110266bf944880")
        << name(e);
  }
}

// A file in the temporary directory, removed at the end of the test.
class TempFile {
 public:
  explicit TempFile(const std::string& stem)
      : path_(fs::temp_directory_path() /
              (stem + "-" +
               std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()))) {}
  ~TempFile() {
    std::error_code ignored;
    fs::remove(path_, ignored);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  [[nodiscard]] const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

TEST(Sha256File, HashesTheFilesBytes) {
  const TempFile file("gpulab-sha256-test");
  // More than the 64 KiB the file is read in, with bytes that text mode would change.
  std::string contents = alphabet(200'000);
  contents[1000] = '\0';
  contents[2000] = '\r';
  contents[3000] = '\n';
  {
    std::ofstream out(file.path(), std::ios::binary);
    out << contents;
  }
  for (const Sha256Engine e : kEngines) {
    EXPECT_EQ(sha256_file(file.path(), e), sha256_hex(contents, Sha256Engine::portable)) << name(e);
  }
  EXPECT_NE(sha256_file(file.path()), sha256_hex(alphabet(200'000)));
}

TEST(Sha256File, AnEmptyFileHasTheEmptyDigest) {
  const TempFile file("gpulab-sha256-test-empty");
  { std::ofstream out(file.path(), std::ios::binary); }
  EXPECT_EQ(sha256_file(file.path()),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256File, AMissingFileIsARuntimeErrorNamingIt) {
  const fs::path missing = fs::temp_directory_path() / "gpulab-no-such-dir" / "missing.txt";
  try {
    (void)sha256_file(missing);
    FAIL() << "a missing file was hashed";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(missing.string()), std::string::npos) << e.what();
  }
}

TEST(Sha256File, ADirectoryIsARuntimeError) {
  // Opening a directory for reading succeeds on Linux; reading it fails, and that is not the
  // digest of an empty file.
  EXPECT_THROW((void)sha256_file(fs::temp_directory_path()), std::runtime_error);
}

}  // namespace
}  // namespace gpulab
