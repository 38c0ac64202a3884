// Kernel launches on the sim backend.
//
// The build rewrites `EXPR<<<grid, block, shared_bytes, stream>>>(args...)` in every .cu file
// (framework/sim/translate) into
//
//   ::gpulab::sim::detail::make_launcher(GPULAB_SIM_KERNEL(EXPR), "EXPR", grid, block,
//   ...)(args...)
//
// GPULAB_SIM_KERNEL wraps the kernel expression in a lambda that can call it (once per CUDA
// thread, with that thread's copy of the arguments) and, when EXPR names one function, return its
// address (for cudaFuncSetAttribute limits) and its name as the compiler spells it, template
// arguments resolved ("ns::{anonymous}::tile_kernel<16>" for `tile_kernel<kTile>`), by which the
// modeled clock finds the kernel's registers in ptxas's kernel table. The arguments are copied
// once, at the launch, as nvcc's launch stubs copy them; the launch is then validated like a GPU
// launch and queued on the stream.
#pragma once

#include <cstddef>
#include <source_location>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "gpulab/sim/runtime.hpp"

namespace gpulab::sim::detail {

struct AddressTag {
  static constexpr bool address = true;
};
struct InvokeTag {
  static constexpr bool address = false;
};

/// The address of a kernel named by one function (the Tag makes the call dependent, so a name
/// that needs its template arguments deduced gives no address instead of an error).
template <class Tag, class F>
const void* kernel_address(F* function) noexcept {
  return reinterpret_cast<const void*>(function);
}

/// `function`'s qualified name with its template arguments, as GCC and clang print a function
/// template argument in __PRETTY_FUNCTION__ ("... [with ...; auto F = ns::k<2>; ...]" or
/// "[..., F = &ns::k<2>]"); empty when the text has no such argument.
constexpr std::string_view function_name_in(std::string_view pretty) noexcept {
  constexpr std::string_view kMarker = " F = ";
  const std::size_t at = pretty.find(kMarker);
  if (at == std::string_view::npos) {
    return {};
  }
  std::size_t begin = at + kMarker.size();
  while (begin < pretty.size() && (pretty[begin] == '&' || pretty[begin] == ' ')) {
    ++begin;
  }
  int depth = 0;
  for (std::size_t i = begin; i < pretty.size(); ++i) {
    const char c = pretty[i];
    if (c == '<' || c == '(' || c == '[') {
      ++depth;
    } else if ((c == '>' || c == ')' || c == ']') && depth > 0) {
      --depth;
    } else if (depth == 0 && (c == ';' || c == ']' || c == ',')) {
      return pretty.substr(begin, i - begin);
    }
  }
  return {};
}

/// The name of the function F (see function_name_in); the Tag makes the use dependent, so an
/// expression that is not a constant function gives no name instead of an error.
template <class Tag, auto F>
constexpr std::string_view function_name() noexcept {
  return function_name_in(__PRETTY_FUNCTION__);
}

/// What GPULAB_SIM_KERNEL knows of the function a launch expression names.
struct KernelIdentity {
  const void* address = nullptr;  // null when the expression does not name one function
  std::string_view function;      // empty unless it names one function at compile time
};

/// Where and how a kernel is launched.
struct LaunchSpec {
  const char* name = "";
  const void* kernel = nullptr;  // null when the expression does not name one function
  std::string_view function;     // KernelIdentity::function
  dim3 grid;
  dim3 block;
  std::size_t shared_bytes = 0;
  cudaStream_t stream = nullptr;
  std::source_location where;
};

/// The kernel with its copied arguments, type-erased.
struct KernelCall {
  void (*invoke)(void* payload) = nullptr;  // runs the kernel body for the current CUDA thread
  void (*destroy)(void* payload) = nullptr;
  void* payload = nullptr;
  std::size_t payload_bytes = 0;  // the copied arguments (memory counting ignores reads of them)
};

/// Validates the launch, queues it on its stream and sets the caller's last error on failure.
/// Takes ownership of the call's payload in every case.
void submit_launch(const LaunchSpec& spec, KernelCall call) noexcept;

template <class Kernel>
class Launcher {
 public:
  Launcher(Kernel kernel, LaunchSpec spec) : kernel_(std::move(kernel)), spec_(spec) {}

  template <class... Args>
  void operator()(Args&&... args) && {
    using Payload = std::tuple<Kernel, std::decay_t<Args>...>;
    const KernelIdentity identity = kernel_(AddressTag{});
    spec_.kernel = identity.address;
    spec_.function = identity.function;
    auto* payload = new Payload(std::move(kernel_), std::forward<Args>(args)...);
    submit_launch(spec_, KernelCall{
                             [](void* p) {
                               std::apply([](Kernel& k, auto&... a) { k(InvokeTag{}, a...); },
                                          *static_cast<Payload*>(p));
                             },
                             [](void* p) { delete static_cast<Payload*>(p); },
                             payload,
                             sizeof(Payload),
                         });
  }

 private:
  Kernel kernel_;
  LaunchSpec spec_;
};

template <class Kernel>
Launcher<Kernel> make_launcher(Kernel kernel, const char* name, dim3 grid, dim3 block,
                               std::size_t shared_bytes = 0, cudaStream_t stream = nullptr,
                               std::source_location where = std::source_location::current()) {
  return Launcher<Kernel>(std::move(kernel),
                          LaunchSpec{name, nullptr, {}, grid, block, shared_bytes, stream, where});
}

}  // namespace gpulab::sim::detail

// The kernel expression as a callable; see the top of this file.
#define GPULAB_SIM_KERNEL(...)                                                                  \
  [=](auto gpulab_sim_tag, auto&... gpulab_sim_args) -> ::gpulab::sim::detail::KernelIdentity { \
    using GpulabSimTag = decltype(gpulab_sim_tag);                                              \
    ::gpulab::sim::detail::KernelIdentity gpulab_sim_identity;                                  \
    if constexpr (GpulabSimTag::address) {                                                      \
      if constexpr (requires {                                                                  \
                      ::gpulab::sim::detail::kernel_address<GpulabSimTag>(__VA_ARGS__);         \
                    }) {                                                                        \
        gpulab_sim_identity.address =                                                           \
            ::gpulab::sim::detail::kernel_address<GpulabSimTag>(__VA_ARGS__);                   \
      }                                                                                         \
      if constexpr (requires {                                                                  \
                      ::gpulab::sim::detail::function_name<GpulabSimTag, __VA_ARGS__>();        \
                    }) {                                                                        \
        gpulab_sim_identity.function =                                                          \
            ::gpulab::sim::detail::function_name<GpulabSimTag, __VA_ARGS__>();                  \
      }                                                                                         \
    } else {                                                                                    \
      __VA_ARGS__(gpulab_sim_args...);                                                          \
    }                                                                                           \
    return gpulab_sim_identity;                                                                 \
  }
