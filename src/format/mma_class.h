// The compute classes a device publishes a peak for, and the class a node runs at.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace opscope::format {

// Ordered from widest to narrowest float, then integer; kNone means "not an MMA operand".
enum class MmaClass : uint8_t { kNone, kFp64, kFp32, kTf32, kBf16, kFp16, kFp8, kInt8, kFp4 };
inline constexpr int kNumMmaClasses = 9;

// The JSON/text spelling: "none", "fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4".
std::string_view MmaClassName(MmaClass c);
std::optional<MmaClass> ParseMmaClass(std::string_view name);

// Element width in bits of a float class (64, 32, 19 for tf32, 16, 8, 4); 8 for int8; 0 for none.
// Used to decide whether a plain float weight widens a node's class.
int MmaClassBits(MmaClass c);

// Every class except kNone, in declaration order (for tables and reports).
inline constexpr std::array<MmaClass, kNumMmaClasses - 1> kPeakClasses = {
    MmaClass::kFp64, MmaClass::kFp32, MmaClass::kTf32, MmaClass::kBf16,
    MmaClass::kFp16, MmaClass::kFp8,  MmaClass::kInt8, MmaClass::kFp4};

}  // namespace opscope::format
