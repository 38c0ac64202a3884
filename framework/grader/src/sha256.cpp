#include "gpulab/grader/sha256.hpp"

// The x86 SHA extensions, through GCC's and Clang's intrinsics where the target is x86-64.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define GPULAB_SHA_NI 1
#include <immintrin.h>
#else
#define GPULAB_SHA_NI 0
#endif

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <vector>

namespace gpulab {

namespace {

// FIPS 180-4, section 4.2.2: the first 32 bits of the fractional parts of the cube roots of the
// first 64 primes.
constexpr std::array<std::uint32_t, 64> kRound = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr std::uint32_t rotr(std::uint32_t x, int n) {
  return (x >> n) | (x << (32 - n));
}

using State = std::array<std::uint32_t, 8>;

// Section 6.2.2 on `blocks` 64-byte blocks, in portable C++.
void compress_portable(State& state, const std::uint8_t* data, std::size_t blocks) {
  for (; blocks > 0; --blocks, data += 64) {
    std::array<std::uint32_t, 64> w{};
    for (std::size_t t = 0; t < 16; ++t) {
      w[t] = (std::uint32_t{data[4 * t]} << 24) | (std::uint32_t{data[4 * t + 1]} << 16) |
             (std::uint32_t{data[4 * t + 2]} << 8) | std::uint32_t{data[4 * t + 3]};
    }
    for (std::size_t t = 16; t < 64; ++t) {
      const std::uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
      const std::uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
      w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    std::uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    std::uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    for (std::size_t t = 0; t < 64; ++t) {
      const std::uint32_t t1 =
          h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kRound[t] + w[t];
      const std::uint32_t t2 =
          (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
    state[4] += e;
    state[5] += f;
    state[6] += g;
    state[7] += h;
  }
}

#if GPULAB_SHA_NI
// The same with the x86 SHA extensions (Intel SHA-NI: sha256rnds2 does two rounds, sha256msg1
// and sha256msg2 the message schedule), about 5x faster where the CPU has them. The registers
// hold the state as ABEF and CDGH (sha256rnds2's operands), the message words byte-swapped.
__attribute__((target("sha,sse4.1,ssse3"))) void compress_sha_ni(State& state,
                                                                 const std::uint8_t* data,
                                                                 std::size_t blocks) {
  const __m128i swap = _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);
  __m128i dcba = _mm_loadu_si128(reinterpret_cast<const __m128i*>(&state[0]));
  __m128i hgfe = _mm_loadu_si128(reinterpret_cast<const __m128i*>(&state[4]));
  const __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
  const __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
  __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
  __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);
  for (; blocks > 0; --blocks, data += 64) {
    const __m128i abef_before = abef;
    const __m128i cdgh_before = cdgh;
    __m128i w[16];  // four message words per group of four rounds
    for (std::size_t i = 0; i < 16; ++i) {
      if (i < 4) {
        w[i] = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(data + 16 * i)),
                                swap);
      } else {
        const __m128i sum = _mm_add_epi32(_mm_sha256msg1_epu32(w[i - 4], w[i - 3]),
                                          _mm_alignr_epi8(w[i - 1], w[i - 2], 4));
        w[i] = _mm_sha256msg2_epu32(sum, w[i - 1]);
      }
      __m128i wk =
          _mm_add_epi32(w[i], _mm_loadu_si128(reinterpret_cast<const __m128i*>(&kRound[4 * i])));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);  // now ABEF two rounds on
      wk = _mm_shuffle_epi32(wk, 0x0E);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, wk);  // and two more; cdgh holds the CDGH
    }
    abef = _mm_add_epi32(abef, abef_before);
    cdgh = _mm_add_epi32(cdgh, cdgh_before);
  }
  const __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  const __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  dcba = _mm_blend_epi16(feba, dchg, 0xF0);
  hgfe = _mm_alignr_epi8(dchg, feba, 8);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&state[0]), dcba);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&state[4]), hgfe);
}

bool cpu_has_sha_ni() {
  static const bool has = __builtin_cpu_supports("sha") && __builtin_cpu_supports("sse4.1");
  return has;
}
#endif

class Sha256 {
 public:
  explicit Sha256(Sha256Engine engine) {
#if GPULAB_SHA_NI
    if (engine == Sha256Engine::automatic && cpu_has_sha_ni()) {
      compress_ = compress_sha_ni;
    }
#else
    static_cast<void>(engine);
#endif
  }

  void update(std::string_view text) {
    const auto* data = reinterpret_cast<const std::uint8_t*>(text.data());
    std::size_t size = text.size();
    length_ += size;
    if (fill_ > 0) {
      const std::size_t take = std::min(size, block_.size() - fill_);
      std::copy_n(data, take, block_.begin() + static_cast<std::ptrdiff_t>(fill_));
      fill_ += take;
      data += take;
      size -= take;
      if (fill_ < block_.size()) {
        return;
      }
      compress_(state_, block_.data(), 1);
      fill_ = 0;
    }
    compress_(state_, data, size / 64);
    fill_ = size % 64;
    std::copy_n(data + size - fill_, fill_, block_.begin());
  }

  std::string hex() {
    // Section 5.1.1: a 1 bit, zeros, and the message length in bits as a 64-bit big-endian
    // number, to a multiple of 512 bits.
    const std::uint64_t bits = length_ * 8;
    std::array<char, 72> padding{};
    padding[0] = static_cast<char>(0x80);
    const std::size_t zeros = (fill_ < 56 ? 56 : 120) - fill_ - 1;
    for (int i = 0; i < 8; ++i) {
      padding[1 + zeros + static_cast<std::size_t>(i)] =
          static_cast<char>((bits >> (8 * (7 - i))) & 0xff);
    }
    update(std::string_view(padding.data(), 1 + zeros + 8));
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    for (const std::uint32_t word : state_) {
      for (int shift = 28; shift >= 0; shift -= 4) {
        out += kDigits[(word >> shift) & 0xf];
      }
    }
    return out;
  }

 private:
  // Section 5.3.3: the initial hash value.
  State state_ = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                  0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  void (*compress_)(State&, const std::uint8_t*, std::size_t) = compress_portable;
  std::array<std::uint8_t, 64> block_{};
  std::size_t fill_ = 0;
  std::uint64_t length_ = 0;
};

}  // namespace

std::string sha256_hex(std::string_view data, Sha256Engine engine) {
  Sha256 hash(engine);
  hash.update(data);
  return hash.hex();
}

std::string sha256_file(const std::filesystem::path& path, Sha256Engine engine) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw std::runtime_error("cannot read " + path.string());
  }
  Sha256 hash(engine);
  std::vector<char> buffer(1 << 16);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    hash.update(std::string_view(buffer.data(), static_cast<std::size_t>(in.gcount())));
  }
  if (in.bad()) {
    throw std::runtime_error("error reading " + path.string());
  }
  return hash.hex();
}

}  // namespace gpulab
