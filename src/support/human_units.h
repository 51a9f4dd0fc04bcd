// Human-readable numbers for text reports. Decimal SI throughout (1 GB = 1e9 bytes), the
// same units bandwidth figures are quoted in.
#pragma once

#include <string>

namespace opscope {

std::string HumanBytes(double bytes);           // "1.50 GB", "512 B"
std::string HumanFlops(double flops);           // "3.20 TFLOP", "12 FLOP"
std::string HumanRate(double per_s, const char* unit);  // "3.35 TB/s", "989 TFLOP/s"
std::string HumanSeconds(double seconds);       // "5.60 ms", "12.0 us", "1.20 s"
std::string HumanCount(double count);           // "8.03 G", "1.2 M" (parameters, tokens)

}  // namespace opscope
