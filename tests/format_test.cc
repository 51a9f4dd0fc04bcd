// The format table: every row of DESIGN's format table gives its closed-form byte size for a
// concrete shape; names round-trip; block mismatches, negative dims and overflow are errors;
// MMA classes and floor classes follow DESIGN "MMA class and peaks".
#include "format/format.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace opscope::format {
namespace {

uint64_t Bytes(std::string_view name, std::vector<int64_t> dims) {
  auto f = ParseFormat(name);
  EXPECT_TRUE(f.has_value()) << name;
  auto b = TensorBytes(f.value_or(Format::kF32), dims);
  EXPECT_TRUE(b.has_value()) << name;
  return b.value_or(0);
}

uint64_t CeilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// One row per format in DESIGN's table, with the closed form for a [rows, d] tensor.
TEST(FormatTest, EveryFormatsByteFormula) {
  constexpr uint64_t r = 256, d = 512;  // d a multiple of every block (16, 32, 128, 256)
  constexpr uint64_t n = r * d;
  struct Row {
    const char* name;
    uint64_t bytes;
  };
  const Row rows[] = {
      {"f64", n * 8},
      {"f32", n * 4},
      {"f16", n * 2},
      {"bf16", n * 2},
      {"int8", n * 1},
      {"uint8", n * 1},
      {"int16", n * 2},
      {"int32", n * 4},
      {"int64", n * 8},
      {"bool", n * 1},
      {"fp8_e4m3", n + 4},                                       // per-tensor f32 scale
      {"fp8_e5m2", n + 4},
      {"fp8_e4m3_rowwise", n + 4 * r},                           // one f32 scale per row
      {"fp8_e4m3_b128", n + 4 * n / 128},                        // one f32 per 1×128
      {"fp8_e4m3_b128x128", n + 4 * CeilDiv(r, 128) * CeilDiv(d, 128)},  // one per 128×128
      {"nvfp4", n / 2 + n / 16 + 4},                             // e2m1 + e4m3/16 + f32
      {"mxfp4", n / 2 + n / 32},                                 // e2m1 + e8m0/32
      {"mxfp8", n + n / 32},                                     // e4m3 + e8m0/32
      {"int8_rowwise", n + 4 * r},                               // int8 + f32 per row
      {"int4_g32", n / 2 + 2 * n / 32},                          // + f16 scale per 32
      {"int4_g32_zp", n / 2 + 2 * n / 32 + n / 64},              // + 4-bit zero per 32
      {"int4_g64", n / 2 + 2 * n / 64},
      {"int4_g64_zp", n / 2 + 2 * n / 64 + n / 128},
      {"int4_g128", n / 2 + 2 * n / 128},                        // + f16 scale per 128
      {"int4_g128_zp", n / 2 + 2 * n / 128 + n / 256},           // + 4-bit zero per 128
      {"int8_g128", n + 2 * n / 128},                            // int8 + f16 per 128
      {"nf4", n / 2 + 4 * n / 64},                               // + f32 absmax per 64
      {"nf4_dq", n / 2 + n / 64},                                // + 8-bit absmax per 64
      {"q4_0", n / 32 * 18},
      {"q4_1", n / 32 * 20},
      {"q5_0", n / 32 * 22},
      {"q5_1", n / 32 * 24},
      {"q8_0", n / 32 * 34},
      {"iq4_nl", n / 32 * 18},
      {"q2_k", n / 256 * 84},
      {"q3_k", n / 256 * 110},
      {"q4_k", n / 256 * 144},
      {"q5_k", n / 256 * 176},
      {"q6_k", n / 256 * 210},
      // The rest of ggml's types: bytes per block from ggml-common.h's block_* structs.
      {"q8_1", n / 32 * 36},       // f16 d, f16 s, 32 int8
      {"q8_k", n / 256 * 292},     // f32 d, 256 int8, 16 int16 sums
      {"iq2_xxs", n / 256 * 66},   // f16 d, 32 uint16
      {"iq2_xs", n / 256 * 74},    // f16 d, 32 uint16, 8 scales
      {"iq2_s", n / 256 * 82},     // f16 d, 64 qs, 8 qh, 8 scales
      {"iq3_xxs", n / 256 * 98},   // f16 d, 96 qs
      {"iq3_s", n / 256 * 110},    // f16 d, 64 qs, 8 qh, 32 signs, 4 scales
      {"iq1_s", n / 256 * 50},     // f16 d, 32 qs, 8 uint16 qh
      {"iq1_m", n / 256 * 56},     // 32 qs, 16 qh, 8 scales
      {"iq4_xs", n / 256 * 136},   // f16 d, uint16 scales_h, 4 scales_l, 128 qs
      {"tq1_0", n / 256 * 54},     // 48 qs (5 trits a byte), 4 qh, f16 d
      {"tq2_0", n / 256 * 66},     // 64 qs, f16 d
      {"q1_0", n / 128 * 18},      // f16 d, 16 bytes of bits
      {"nvfp4_ggml", n / 64 * 36}, // 4 e4m3 scales, 32 bytes of e2m1
  };
  std::set<std::string> covered;
  for (const Row& row : rows) {
    EXPECT_EQ(Bytes(row.name, {static_cast<int64_t>(r), static_cast<int64_t>(d)}), row.bytes)
        << row.name;
    auto f = ParseFormat(row.name);
    ASSERT_TRUE(f.has_value()) << row.name;
    EXPECT_EQ(MatrixBytes(*f, r, d).value(), row.bytes) << row.name;
    covered.insert(row.name);
  }
  // Every row of the table has a closed form above (a new row needs a test row too).
  for (const FormatInfo& info : kFormats) {
    EXPECT_TRUE(covered.count(std::string(info.name))) << info.name << " has no test row";
  }
}

TEST(FormatTest, NamesRoundTripAndUnknownNamesAreRejected) {
  std::set<std::string_view> names;
  for (int i = 0; i < kNumFormats; ++i) {
    const auto f = static_cast<Format>(i);
    EXPECT_EQ(ParseFormat(FormatName(f)), f);
    EXPECT_TRUE(names.insert(FormatName(f)).second) << "duplicate name " << FormatName(f);
  }
  for (const char* bad : {"", "F32", "float32", "fp8", "q4_0 ", "int4", "nvfp4x"}) {
    EXPECT_FALSE(ParseFormat(bad).has_value()) << bad;
  }
}

// Options take formats as people type them (FindFormat); files keep the exact names.
TEST(FormatTest, TypedNamesFoldCaseAndAliases) {
  struct Case {
    const char* typed;
    Format format;
  };
  for (const Case& c : {Case{"NVFP4", Format::kNvfp4}, Case{"nvfp4", Format::kNvfp4},
                        Case{"MXFP4", Format::kMxfp4}, Case{"fp8", Format::kFp8E4m3},
                        Case{"FP8", Format::kFp8E4m3}, Case{"e4m3", Format::kFp8E4m3},
                        Case{"float8_e4m3fn", Format::kFp8E4m3}, Case{"fp8-e5m2", Format::kFp8E5m2},
                        Case{"bfloat16", Format::kBf16}, Case{"BF16", Format::kBf16},
                        Case{"float16", Format::kF16}, Case{"fp16", Format::kF16},
                        Case{"half", Format::kF16}, Case{"float32", Format::kF32},
                        Case{"FP32", Format::kF32}, Case{"Q4_K", Format::kQ4K},
                        Case{"Q8_0", Format::kQ8_0}, Case{"INT4_G128_ZP", Format::kInt4G128Zp}}) {
    EXPECT_EQ(FindFormat(c.typed), c.format) << c.typed;
  }
  for (const char* bad : {"", "fp4", "int4", "nvfp4x", "q4_k_m"}) {
    EXPECT_FALSE(FindFormat(bad).has_value()) << bad;
  }
  EXPECT_EQ(NearestFormatName("nvfp5"), "nvfp4");
  EXPECT_EQ(NearestFormatName("fp8_e4m4"), "fp8_e4m3");
  EXPECT_FALSE(NearestFormatName("quantum").has_value());
}

// GGUF's published block sizes: q4_0 = n/32 · 18 for every multiple of 32.
TEST(FormatTest, Q4_0IsEighteenBytesPer32) {
  for (int64_t n : {32, 64, 4096, 11008, 32 * 1000003}) {
    EXPECT_EQ(Bytes("q4_0", {n}), static_cast<uint64_t>(n) / 32 * 18) << n;
    EXPECT_EQ(Bytes("q4_0", {3, n}), 3 * (static_cast<uint64_t>(n) / 32 * 18)) << n;
  }
}

TEST(FormatTest, TwoDimensionalBlocksUseCeilings) {
  // [300, 200]: 3 × 2 blocks of 128×128, partial blocks included.
  EXPECT_EQ(Bytes("fp8_e4m3_b128x128", {300, 200}), 300u * 200 + 4u * 3 * 2);
  EXPECT_EQ(Bytes("fp8_e4m3_b128x128", {1, 1}), 1u + 4);
  EXPECT_EQ(Bytes("fp8_e4m3_b128x128", {128, 128}), 128u * 128 + 4);
  EXPECT_EQ(Bytes("fp8_e4m3_b128x128", {129, 128}), 129u * 128 + 4 * 2);
  // Experts [E, out, k]: every matrix has its own blocks.
  EXPECT_EQ(Bytes("fp8_e4m3_b128x128", {8, 300, 200}), 8u * (300 * 200 + 4 * 3 * 2));
  // A vector is one row.
  EXPECT_EQ(Bytes("fp8_e4m3_b128x128", {200}), 200u + 4 * 2);
}

TEST(FormatTest, ScalesAreCountedPerTensorRowAndBlock) {
  // Per-tensor scales are counted once per tensor, whatever its rank.
  EXPECT_EQ(Bytes("fp8_e4m3", {4, 8, 16}), 4u * 8 * 16 + 4);
  EXPECT_EQ(Bytes("nvfp4", {4, 8, 16}), 4u * 8 * 16 / 2 + 4 * 8 * 16 / 16 + 4);
  // Rowwise: one scale per row, rows = product of the leading dims.
  EXPECT_EQ(Bytes("fp8_e4m3_rowwise", {4, 8, 16}), 4u * 8 * 16 + 4 * (4 * 8));
  // Rank 0 is one element.
  EXPECT_EQ(Bytes("f32", {}), 4u);
  EXPECT_EQ(Bytes("bf16", {}), 2u);
  EXPECT_EQ(Bytes("fp8_e4m3", {}), 1u + 4);
  // Zero-sized tensors.
  EXPECT_EQ(Bytes("f32", {0, 128}), 0u);
  EXPECT_EQ(Bytes("q4_k", {0, 256}), 0u);
}

// int4_g128_zp stores 4-bit zero points: an odd number of groups rounds up to a whole byte.
TEST(FormatTest, Int4ZeroPointsRoundUpToWholeBytes) {
  const uint64_t one_group = 128 / 2 + 2;  // 64 B of nibbles + one f16 scale
  EXPECT_EQ(Bytes("int4_g128", {1, 128}), one_group);
  EXPECT_EQ(Bytes("int4_g128_zp", {1, 128}), one_group + 1);      // ⌈4 bits / 8⌉
  EXPECT_EQ(Bytes("int4_g128_zp", {1, 256}), 2 * one_group + 1);  // two nibbles, one byte
  EXPECT_EQ(Bytes("int4_g128_zp", {3, 128}), 3 * one_group + 2);  // ⌈12 bits / 8⌉
}

TEST(FormatTest, BlockMismatchNegativeAndOverflow) {
  const struct {
    Format f;
    std::vector<int64_t> dims;
  } mismatches[] = {
      {Format::kNvfp4, {4, 24}},        // 24 not a multiple of 16
      {Format::kMxfp4, {4, 48}},        // 48 not a multiple of 32
      {Format::kQ4_0, {1, 33}},
      {Format::kQ4K, {1, 128}},         // k-quants need 256
      {Format::kInt4G128, {7, 64}},
      {Format::kFp8E4m3B128, {2, 100}},
      {Format::kNvfp4, {}},             // rank 0: one element, not a block
  };
  for (const auto& m : mismatches) {
    auto b = TensorBytes(m.f, m.dims);
    ASSERT_FALSE(b.has_value()) << FormatName(m.f);
    EXPECT_EQ(b.error(), SizeError::kBlockMismatch) << FormatName(m.f);
  }
  EXPECT_EQ(TensorBytes(Format::kF32, std::vector<int64_t>{4, -1}).error(),
            SizeError::kNegativeDim);
  // 2^62 elements of f64 = 2^65 bytes: overflow, never a wrapped count.
  EXPECT_EQ(TensorBytes(Format::kF64, std::vector<int64_t>{int64_t{1} << 31, int64_t{1} << 31})
                .error(),
            SizeError::kOverflow);
  EXPECT_EQ(TensorBytes(Format::kF32, std::vector<int64_t>{INT64_MAX, INT64_MAX}).error(),
            SizeError::kOverflow);
  // 2^60 elements of f64 = 2^63 bytes still fits.
  EXPECT_EQ(TensorBytes(Format::kF64, std::vector<int64_t>{int64_t{1} << 30, int64_t{1} << 30})
                .value(),
            uint64_t{1} << 63);
  // Quantized formats: 2^64 elements · 4.5 bits = 2^63 · 1.125 bytes: overflow.
  EXPECT_EQ(TensorBytes(Format::kQ4_0, std::vector<int64_t>{int64_t{1} << 34, int64_t{1} << 30})
                .error(),
            SizeError::kOverflow);
  // ... while 2^63 elements of q4_0 (2^63 / 32 · 18 bytes) fit.
  EXPECT_EQ(TensorBytes(Format::kQ4_0, std::vector<int64_t>{int64_t{1} << 33, int64_t{1} << 30})
                .value(),
            (uint64_t{1} << 63) / 32 * 18);
}

// DESIGN "MMA class and peaks": the class an activation of each format runs at, and the class
// an engine may run a weight of each format at (the fused floor).
TEST(FormatTest, MmaClassesOfActivationsAndWeights) {
  struct Row {
    Format f;
    MmaClass activation;
    MmaClass weight_floor;
  } rows[] = {
      {Format::kF64, MmaClass::kFp64, MmaClass::kFp64},
      {Format::kF32, MmaClass::kFp32, MmaClass::kFp32},
      {Format::kF16, MmaClass::kFp16, MmaClass::kFp16},
      {Format::kBf16, MmaClass::kBf16, MmaClass::kBf16},
      {Format::kInt8, MmaClass::kInt8, MmaClass::kInt8},
      {Format::kUint8, MmaClass::kInt8, MmaClass::kInt8},
      {Format::kFp8E4m3, MmaClass::kFp8, MmaClass::kFp8},
      {Format::kFp8E5m2, MmaClass::kFp8, MmaClass::kFp8},
      {Format::kFp8E4m3Rowwise, MmaClass::kFp8, MmaClass::kFp8},
      {Format::kFp8E4m3B128, MmaClass::kFp8, MmaClass::kFp8},
      {Format::kFp8E4m3B128x128, MmaClass::kFp8, MmaClass::kFp8},
      {Format::kMxfp8, MmaClass::kFp8, MmaClass::kFp8},
      {Format::kNvfp4, MmaClass::kFp4, MmaClass::kFp4},
      {Format::kMxfp4, MmaClass::kFp4, MmaClass::kFp4},
      // Weight-only formats: no class of their own; engines (llama.cpp) quantize activations
      // to 8 bits for them, so the floor may use int8.
      {Format::kInt4G128, MmaClass::kNone, MmaClass::kInt8},
      {Format::kInt4G128Zp, MmaClass::kNone, MmaClass::kInt8},
      {Format::kQ4_0, MmaClass::kNone, MmaClass::kInt8},
      {Format::kQ8_0, MmaClass::kNone, MmaClass::kInt8},
      {Format::kQ4K, MmaClass::kNone, MmaClass::kInt8},
      {Format::kQ6K, MmaClass::kNone, MmaClass::kInt8},
      // Wide integers are not MMA operands.
      {Format::kInt32, MmaClass::kNone, MmaClass::kNone},
      {Format::kInt64, MmaClass::kNone, MmaClass::kNone},
  };
  for (const Row& r : rows) {
    EXPECT_EQ(Info(r.f).mma, r.activation) << FormatName(r.f);
    EXPECT_EQ(WeightFloorClass(r.f), r.weight_floor) << FormatName(r.f);
  }
  for (int i = 0; i < kNumMmaClasses; ++i) {
    const auto c = static_cast<MmaClass>(i);
    EXPECT_EQ(ParseMmaClass(MmaClassName(c)), c);
  }
  EXPECT_FALSE(ParseMmaClass("fp6").has_value());
}

// Halving the element width halves the bytes, for every shape.
TEST(FormatTest, HalvingTheWidthHalvesTheBytes) {
  for (std::vector<int64_t> dims : {std::vector<int64_t>{1, 4096}, {4096, 4096}, {3, 5, 7}, {1}}) {
    const uint64_t f32 = TensorBytes(Format::kF32, dims).value();
    EXPECT_EQ(f32, 2 * TensorBytes(Format::kF16, dims).value());
    EXPECT_EQ(f32, 2 * TensorBytes(Format::kBf16, dims).value());
    EXPECT_EQ(f32, 4 * TensorBytes(Format::kInt8, dims).value());
    EXPECT_EQ(2 * f32, TensorBytes(Format::kF64, dims).value());
  }
}

// Gathering rows (embedding lookups) reads each row with its own scales.
TEST(FormatTest, GatheredRowsCarryTheirScales) {
  EXPECT_EQ(GatheredRowsBytes(Format::kBf16, 7, 4096).value(), 7u * 4096 * 2);
  EXPECT_EQ(GatheredRowsBytes(Format::kQ4_0, 7, 4096).value(), 7u * (4096 / 32 * 18));
  EXPECT_EQ(GatheredRowsBytes(Format::kFp8E4m3Rowwise, 7, 4096).value(), 7u * (4096 + 4));
  // A row of a 128×128-blocked table crosses ⌈d/128⌉ blocks, each with its f32 scale.
  EXPECT_EQ(GatheredRowsBytes(Format::kFp8E4m3B128x128, 5, 300).value(), 5u * (300 + 4 * 3));
  EXPECT_EQ(GatheredRowsBytes(Format::kNvfp4, 2, 30).error(), SizeError::kBlockMismatch);
}

}  // namespace
}  // namespace opscope::format
