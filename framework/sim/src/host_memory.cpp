// The memcpy family, checked, for lab code on sim. The C library's memcpy, memmove, memset and
// memcmp are not instrumented, so host code could read or write device memory through them
// unseen (std::copy of floats becomes a memmove). cmake/GpulabLabs.cmake renames those calls in a
// lab's sim library to these (objcopy --redefine-sym): outside device code each checks that
// neither range touches device memory (check_host_access, counting.cpp), then does the C
// library's work.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "counting.hpp"

namespace {

void check(const void* address, std::size_t bytes, bool store, const void* pc) noexcept {
  gpulab::sim::detail::check_host_access(reinterpret_cast<std::uintptr_t>(address), bytes, store,
                                         pc);
}

}  // namespace

extern "C" {

void* gpulab_sim_checked_memcpy(void* destination, const void* source, std::size_t bytes) {
  check(source, bytes, false, __builtin_return_address(0));
  check(destination, bytes, true, __builtin_return_address(0));
  return std::memcpy(destination, source, bytes);
}

void* gpulab_sim_checked_memmove(void* destination, const void* source, std::size_t bytes) {
  check(source, bytes, false, __builtin_return_address(0));
  check(destination, bytes, true, __builtin_return_address(0));
  return std::memmove(destination, source, bytes);
}

void* gpulab_sim_checked_memset(void* destination, int value, std::size_t bytes) {
  check(destination, bytes, true, __builtin_return_address(0));
  return std::memset(destination, value, bytes);
}

int gpulab_sim_checked_memcmp(const void* a, const void* b, std::size_t bytes) {
  check(a, bytes, false, __builtin_return_address(0));
  check(b, bytes, false, __builtin_return_address(0));
  return std::memcmp(a, b, bytes);
}

// _FORTIFY_SOURCE's forms: the destination's size is checked by the C library.
void* __memcpy_chk(void*, const void*, std::size_t, std::size_t);
void* __memmove_chk(void*, const void*, std::size_t, std::size_t);
void* __memset_chk(void*, int, std::size_t, std::size_t);

void* gpulab_sim_checked___memcpy_chk(void* destination, const void* source, std::size_t bytes,
                                      std::size_t destination_bytes) {
  check(source, bytes, false, __builtin_return_address(0));
  check(destination, bytes, true, __builtin_return_address(0));
  return __memcpy_chk(destination, source, bytes, destination_bytes);
}

void* gpulab_sim_checked___memmove_chk(void* destination, const void* source, std::size_t bytes,
                                       std::size_t destination_bytes) {
  check(source, bytes, false, __builtin_return_address(0));
  check(destination, bytes, true, __builtin_return_address(0));
  return __memmove_chk(destination, source, bytes, destination_bytes);
}

void* gpulab_sim_checked___memset_chk(void* destination, int value, std::size_t bytes,
                                      std::size_t destination_bytes) {
  check(destination, bytes, true, __builtin_return_address(0));
  return __memset_chk(destination, value, bytes, destination_bytes);
}

}  // extern "C"
