// Overflow-checked integer arithmetic for byte and FLOP counts: an overflow is an error the
// caller reports, never a wrapped number.
#pragma once

#include <cstdint>
#include <optional>

namespace opscope {

// `a op b` where `overflows(a, b, &r)` is one of the __builtin_*_overflow checks.
template <typename T, typename Overflows>
inline std::optional<T> Checked(T a, T b, Overflows overflows) {
  T r;
  if (overflows(a, b, &r)) return std::nullopt;
  return r;
}
inline constexpr auto kMulOverflows = [](auto a, auto b, auto* r) {
  return __builtin_mul_overflow(a, b, r);
};
inline constexpr auto kAddOverflows = [](auto a, auto b, auto* r) {
  return __builtin_add_overflow(a, b, r);
};
inline constexpr auto kSubOverflows = [](auto a, auto b, auto* r) {
  return __builtin_sub_overflow(a, b, r);
};

inline std::optional<uint64_t> CheckedMul(uint64_t a, uint64_t b) {
  return Checked(a, b, kMulOverflows);
}
inline std::optional<uint64_t> CheckedAdd(uint64_t a, uint64_t b) {
  return Checked(a, b, kAddOverflows);
}
inline std::optional<int64_t> CheckedMulSigned(int64_t a, int64_t b) {
  return Checked(a, b, kMulOverflows);
}
inline std::optional<int64_t> CheckedAddSigned(int64_t a, int64_t b) {
  return Checked(a, b, kAddOverflows);
}
inline std::optional<int64_t> CheckedSubSigned(int64_t a, int64_t b) {
  return Checked(a, b, kSubOverflows);
}

// Saturating add for totals that are reported, not used to size anything.
inline uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

// Parses a non-negative decimal integer that fits int64; no sign, no spaces, no suffix.
std::optional<int64_t> ParseNonNegativeInt(const char* begin, const char* end);

}  // namespace opscope
