// Large per-analysis arrays (a million nodes' costs) are first-touched once and read once: on
// Linux, backing them with transparent huge pages replaces ~50,000 4 KiB page faults per
// million nodes with a few hundred. Advisory only: without THP nothing changes.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace opscope {

// Reserves room for `n` elements of a contiguous container (std::vector, std::string) and,
// when the buffer is large, asks the kernel to back it with huge pages before anything touches
// it. Call before resize() or the first append.
template <typename Container>
void ReserveHugePages(Container& v, size_t n) {
  using T = typename Container::value_type;
  v.reserve(n);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  const auto begin = reinterpret_cast<uintptr_t>(v.data());
  const uintptr_t end = begin + n * sizeof(T);
  const uintptr_t first = (begin + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t last = end & ~(kHuge - 1);
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#endif
}

}  // namespace opscope
