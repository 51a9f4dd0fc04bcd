// The GGUF reader and its model mapping: every ggml type costs Σ elements × its block bytes
// (ggml-common.h), every metadata type reads back, a header cut at any byte or bent by a
// hostile field is an error naming the file and the field, and each fixture architecture
// gives the spec its keys say and a step graph whose weights are the file's bytes exactly.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "import/gguf/gguf_model.h"
#include "import/gguf/gguf_reader.h"
#include "import/hf_config/recipe.h"
#include "import/hf_config/step_graph.h"

namespace opscope::import::gguf {
namespace {

const std::string kDir = std::string(OPSCOPE_SOURCE_DIR) + "/tests/fixtures/gguf/";

// ggml's block sizes and block bytes (ggml-common.h's block_* structs), by type id: written
// out here, apart from the format table, so the reader is checked against a second source.
struct Block {
  uint32_t id;
  uint64_t elements, bytes;
};
constexpr Block kGgmlBlocks[] = {
    {0, 1, 4},      {1, 1, 2},      {2, 32, 18},    {3, 32, 20},    {6, 32, 22},
    {7, 32, 24},    {8, 32, 34},    {9, 32, 36},    {10, 256, 84},  {11, 256, 110},
    {12, 256, 144}, {13, 256, 176}, {14, 256, 210}, {15, 256, 292}, {16, 256, 66},
    {17, 256, 74},  {18, 256, 98},  {19, 256, 50},  {20, 32, 18},   {21, 256, 110},
    {22, 256, 82},  {23, 256, 136}, {24, 1, 1},     {25, 1, 2},     {26, 1, 4},
    {27, 1, 8},     {28, 1, 8},     {29, 256, 56},  {30, 1, 2},     {34, 256, 54},
    {35, 256, 66},  {39, 32, 17},   {40, 64, 36},   {41, 128, 18},
};

const Block& BlockOf(uint32_t id) {
  for (const Block& b : kGgmlBlocks) {
    if (b.id == id) return b;
  }
  ADD_FAILURE() << "no block for ggml type " << id;
  return kGgmlBlocks[0];
}

std::vector<uint8_t> ReadBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// A GGUF header built field by field, for the synthetic and hostile cases.
class Writer {
 public:
  Writer& U32(uint32_t v) { return Raw(&v, 4); }
  Writer& U64(uint64_t v) { return Raw(&v, 8); }
  Writer& Str(std::string_view s) {
    U64(s.size());
    return Raw(s.data(), s.size());
  }
  // Out of line: inlined into long tests, g++ 12's -Wstringop-overflow misreads the vector
  // insert (GCC bug 107852).
  [[gnu::noinline]] Writer& Raw(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    bytes.insert(bytes.end(), b, b + n);
    return *this;
  }
  Writer& Header(uint64_t tensors, uint64_t keys, uint32_t version = 3) {
    Raw("GGUF", 4);
    U32(version);
    U64(tensors);
    return U64(keys);
  }
  Writer& KeyU32(std::string_view key, uint32_t v) {
    Str(key);
    U32(4);
    return U32(v);
  }
  Writer& Tensor(std::string_view name, std::vector<uint64_t> ne, uint32_t type, uint64_t offset) {
    Str(name);
    U32(static_cast<uint32_t>(ne.size()));
    for (uint64_t d : ne) U64(d);
    U32(type);
    return U64(offset);
  }
  // Pads to the alignment (the data section's start).
  uint64_t DataOffset(uint64_t alignment = 32) const {
    return (bytes.size() + alignment - 1) / alignment * alignment;
  }
  std::vector<uint8_t> bytes;
};

Result<GgufFile> Parse(const Writer& w, uint64_t data_bytes) {
  return ParseGgufHeader(w.bytes, w.DataOffset() + data_bytes, "t.gguf");
}

std::string ErrorOf(const Result<GgufFile>& r) {
  EXPECT_FALSE(r.has_value());
  return r ? "" : r.error().message;
}

TEST(GgufReader, EveryGgmlTypeCostsElementsOverBlockTimesBlockBytes) {
  auto f = ReadGgufHeader(kDir + "every_type.gguf");
  ASSERT_TRUE(f.has_value()) << f.error().message;
  EXPECT_EQ(f->version, 3u);
  EXPECT_EQ(f->alignment, 64u);  // make_gguf.py writes general.alignment 64
  std::set<uint32_t> types;
  uint64_t padded_end = 0;
  for (const TensorInfo& t : f->tensors) {
    const Block& b = BlockOf(t.ggml_type);
    EXPECT_EQ(t.elements, 512u) << t.name;                     // ne [256, 2]
    EXPECT_EQ(t.bytes, 512 / b.elements * b.bytes) << t.name;  // n / block · block bytes
    EXPECT_EQ(t.offset % 64, 0u) << t.name;
    types.insert(t.ggml_type);
    padded_end = (t.offset + t.bytes + 63) / 64 * 64;
  }
  // Every type ggml can store in a file is in the fixture and in the reader's table.
  for (const Block& b : kGgmlBlocks) EXPECT_TRUE(types.contains(b.id)) << b.id;
  size_t stored = 0;
  for (const GgmlType& g : GgmlTypes()) stored += g.format.has_value();
  EXPECT_EQ(stored, std::size(kGgmlBlocks));
  // The tensors are the data section: the last one ends at the end of the file.
  const TensorInfo& last = f->tensors.back();
  EXPECT_EQ(f->data_offset + last.offset + last.bytes, f->file_bytes);
  EXPECT_LE(f->data_offset + padded_end - f->file_bytes, 63u);
}

TEST(GgufReader, EveryMetadataValueTypeReadsBack) {
  auto f = ReadGgufHeader(kDir + "every_type.gguf");
  ASSERT_TRUE(f.has_value()) << f.error().message;
  auto value = [&](std::string_view k) {
    const Value* v = f->Find(k);
    EXPECT_NE(v, nullptr) << k;
    return v != nullptr ? *v : Value{};
  };
  EXPECT_EQ(*value("general.name").AsString(), "every ggml type");
  EXPECT_EQ(value("general.flag").AsBool(), true);
  EXPECT_EQ(value("general.u8").AsInt(), 200);
  EXPECT_EQ(value("general.i8").AsInt(), -3);
  EXPECT_EQ(value("general.u16").AsInt(), 7);
  EXPECT_EQ(value("general.i16").AsInt(), -7);
  EXPECT_EQ(value("general.i32").AsInt(), -70000);
  EXPECT_EQ(value("general.u64").AsInt(), int64_t{1} << 40);
  EXPECT_EQ(value("general.i64").AsInt(), -(int64_t{1} << 40));
  EXPECT_EQ(value("general.f32").AsFloat(), 0.5);
  EXPECT_EQ(value("general.f64").AsFloat(), 0.25);
  EXPECT_EQ(value("general.alignment").type, ValueType::kUint32);
  const Value list = value("general.list");
  EXPECT_EQ(list.type, ValueType::kArray);
  EXPECT_EQ(list.element, ValueType::kUint64);
  ASSERT_EQ(list.array.size(), 3u);
  EXPECT_EQ(std::get<uint64_t>(list.array[2]), 3u);
  EXPECT_TRUE(value("general.empty").array.empty());
  EXPECT_FALSE(value("general.flag").AsInt().has_value());  // a bool is not an integer
}

// Long arrays (tokenizer vocabularies) are read through and checked, but keep their length
// and a bounded prefix only.
TEST(GgufReader, LongArraysKeepTheirLengthAndAPrefix) {
  const uint64_t n = kMaxArrayElements + 10;
  auto strings = [&](uint64_t count, bool last_runs_past) {
    Writer w;
    w.Header(0, 1).Str("tokens").U32(9).U32(8).U64(n);
    for (uint64_t i = 0; i + 1 < count; ++i) w.Str(std::to_string(i));
    if (last_runs_past) {
      w.U64(1000);  // a string longer than what is left
    } else {
      w.Str("last");
    }
    return w;
  };
  auto f = Parse(strings(n, false), 0);
  ASSERT_TRUE(f.has_value()) << f.error().message;
  const Value& tokens = f->metadata[0].value;
  EXPECT_EQ(tokens.count, n);
  ASSERT_EQ(tokens.array.size(), kMaxArrayElements);
  EXPECT_EQ(std::get<std::string>(tokens.array.back()), std::to_string(kMaxArrayElements - 1));
  EXPECT_NE(ErrorOf(Parse(strings(n, true), 0)).find("truncated header"), std::string::npos);
  // A bool past the kept prefix is still checked.
  Writer bools;
  bools.Header(0, 1).Str("flags").U32(9).U32(7).U64(n);
  for (uint64_t i = 0; i + 1 < n; ++i) bools.Raw("\x01", 1);
  bools.Raw("\x02", 1);
  EXPECT_NE(ErrorOf(Parse(bools, 0)).find("bool byte is 2"), std::string::npos);
}

// Large shapes without their data (the header claims a file that large): every ggml type,
// a 4096 × 14336 matrix and 8 experts of it.
TEST(GgufReader, LargeTensorsOfEveryTypeAreExactWithoutReadingData) {
  for (const Block& b : kGgmlBlocks) {
    for (const std::vector<uint64_t>& ne :
         {std::vector<uint64_t>{4096, 14336}, std::vector<uint64_t>{4096, 14336, 8}}) {
      Writer w;
      w.Header(1, 0).Tensor("w", ne, b.id, 0);
      uint64_t n = 1;
      for (uint64_t d : ne) n *= d;
      const uint64_t bytes = n / b.elements * b.bytes;
      auto f = Parse(w, bytes);
      ASSERT_TRUE(f.has_value()) << b.id << ": " << f.error().message;
      EXPECT_EQ(f->tensors[0].bytes, bytes) << b.id;
      EXPECT_EQ(f->tensors[0].Shape().front(), static_cast<int64_t>(ne.back()));
      // One byte short of the data: the tensor runs past the end of the file.
      EXPECT_FALSE(Parse(w, bytes - 1).has_value()) << b.id;
    }
  }
}

// A header cut at any byte is an error naming the file, never a crash or a success.
TEST(GgufReader, HeaderTruncatedAtEveryOffsetIsAnError) {
  for (const char* name : {"every_type.gguf", "tiny-llama.gguf", "tiny-gpt-oss.gguf"}) {
    const std::vector<uint8_t> bytes = ReadBytes(kDir + name);
    auto whole = ParseGgufHeader(bytes, bytes.size(), name);
    ASSERT_TRUE(whole.has_value()) << whole.error().message;
    // Cut inside the header: the file ends there.
    for (uint64_t k = 0; k < whole->data_offset; ++k) {
      auto r = ParseGgufHeader(std::span(bytes).first(k), k, name);
      ASSERT_FALSE(r.has_value()) << name << " cut at " << k;
      EXPECT_TRUE(r.error().message.starts_with(std::string(name) + ": ")) << r.error().message;
    }
    // Cut in the data: the header reads, and the tensors past the end are named.
    for (uint64_t k : {whole->data_offset, (whole->data_offset + bytes.size()) / 2,
                       uint64_t{bytes.size() - 1}}) {
      auto r = ParseGgufHeader(bytes, k, name);
      ASSERT_FALSE(r.has_value()) << name << " cut at " << k;
      EXPECT_NE(r.error().message.find("end past the end of the file"), std::string::npos)
          << r.error().message;
    }
  }
}

// Each hostile field gives its own error, naming what is wrong.
TEST(GgufReader, HostileFieldsAreNamedErrors) {
  struct Case {
    const char* what;
    Writer w;
    uint64_t data_bytes;
    const char* error;
  };
  auto header = [](uint64_t tensors, uint64_t keys) {
    Writer w;
    w.Header(tensors, keys);
    return w;
  };
  std::vector<Case> cases;
  {
    Writer w;
    w.Raw("GGML", 4).U32(3).U64(0).U64(0);
    cases.push_back({"magic", w, 0, "not a GGUF file: it starts with bytes 47474d4c"});
  }
  cases.push_back({"v1", Writer().Header(0, 0, 1), 0, "GGUF version 1 is not supported"});
  cases.push_back({"big-endian", Writer().Header(0, 0, 0x03000000), 0,
                   "big-endian GGUF files are not supported"});
  cases.push_back({"v4", Writer().Header(0, 0, 4), 0, "unsupported GGUF version 4"});
  cases.push_back({"tensor count", header(uint64_t{1} << 62, 0), 0,
                   "header claims 0 metadata keys and 4611686018427387904 tensors"});
  cases.push_back({"key count", header(0, ~uint64_t{0}), 0, "metadata keys and 0 tensors, more"});
  // A sparse file claiming 64 GiB: the counts must still fit the header's 512 MiB limit
  // (fuzz_gguf found a billion keys reserved up front).
  cases.push_back({"sparse key count", header(10753, 982'000'000), uint64_t{1} << 36,
                   "header claims 982000000 metadata keys and 10753 tensors, more than the "
                   "536870888 bytes"});
  {
    Writer w = header(0, 1);
    w.U64(~uint64_t{0});
    cases.push_back({"key length", w, 64, "metadata key 0: length 18446744073709551615 is above"});
  }
  {
    // A 1 GiB string in a sparse 64 GiB file: read until the bytes end, never allocated whole.
    Writer w = header(0, 1);
    w.Str("k").U32(8).U64(uint64_t{1} << 30);
    cases.push_back({"sparse string", w, uint64_t{1} << 36, "'k' at byte 45 could not be read"});
  }
  {
    Writer w = header(0, 1);
    w.Str("k").U32(13).U32(0);
    cases.push_back({"value type", w, 64, "metadata key 0 'k': value type: unknown value type 13"});
  }
  {
    Writer w = header(0, 1);
    w.Str("k").U32(9).U32(9).U64(1);
    cases.push_back({"nested array", w, 64, "'k': an array of arrays"});
  }
  {
    Writer w = header(0, 1);
    w.Str("k").U32(9).U32(8).U64(uint64_t{1} << 61);
    cases.push_back({"array count", w, 64, "array of 2305843009213693952 string values, more"});
  }
  {
    Writer w = header(0, 1);
    w.Str("k").U32(7).Raw("\x02", 1);
    cases.push_back({"bool", w, 64, "bool byte is 2, not 0 or 1"});
  }
  {
    Writer w = header(0, 2);
    w.KeyU32("k", 1).KeyU32("k", 2);
    cases.push_back({"duplicate key", w, 64, "metadata key 1 'k': duplicate of metadata key 0"});
  }
  {
    Writer w = header(0, 1);
    w.KeyU32("general.alignment", 48);
    cases.push_back({"alignment", w, 64, "'general.alignment': 48 is not a power of two"});
  }
  {
    Writer w = header(0, 1);
    w.Str("general.alignment").U32(10).U64(32);
    cases.push_back({"alignment type", w, 64, "expected a uint32, got uint64"});
  }
  cases.push_back({"ggml type", header(1, 0).Tensor("w", {32}, 42, 0), 64,
                   "tensor 0 'w': unknown ggml type 42"});
  cases.push_back({"removed type", header(1, 0).Tensor("w", {32}, 31, 0), 64,
                   "ggml type 31 (q4_0_4_4) was removed from GGUF"});
  cases.push_back({"dims", header(1, 0).Tensor("w", {1, 1, 1, 1, 1}, 0, 0), 64,
                   "5 dims, more than ggml's 4"});
  cases.push_back({"dim overflow", header(1, 0).Tensor("w", {uint64_t{1} << 40, uint64_t{1} << 40}, 0, 0),
                   64, "ne[1] = 1099511627776 overflows the element count"});
  cases.push_back({"negative dim", header(1, 0).Tensor("w", {~uint64_t{0}}, 0, 0), 64,
                   "ne[0] = 18446744073709551615 overflows"});
  cases.push_back({"block", header(1, 0).Tensor("w", {100, 2}, 12, 0), 4096,
                   "'w': ne0 = 100 is not a multiple of q4_K's 256-element block"});
  cases.push_back({"byte overflow", header(1, 0).Tensor("w", {uint64_t{1} << 62, 2}, 28, 0), 64,
                   "overflows"});
  cases.push_back({"misaligned", header(1, 0).Tensor("w", {8}, 0, 4), 64,
                   "offset 4 is not a multiple of the alignment 32"});
  cases.push_back({"past the end", header(1, 0).Tensor("w", {64}, 0, 0), 255,
                   "tensor 'w': its 256 bytes at data offset 0 end past the end of the file"});
  cases.push_back({"offset overflow", header(1, 0).Tensor("w", {8}, 0, ~uint64_t{31}), 64,
                   "end past the end of the file"});
  cases.push_back({"overlap", header(2, 0).Tensor("a", {64}, 0, 0).Tensor("b", {8}, 0, 128), 512,
                   "tensor 'b' at data offset 128 overlaps tensor 'a' (0 + 256 bytes)"});
  cases.push_back({"duplicate tensor", header(2, 0).Tensor("a", {8}, 0, 0).Tensor("a", {8}, 0, 32),
                   64, "tensor 1 'a': duplicate of tensor 0"});
  cases.push_back({"empty name", header(1, 0).Tensor("", {8}, 0, 0), 64, "tensor 0: empty name"});
  cases.push_back({"long name", header(1, 0).Tensor(std::string(65, 'x'), {8}, 0, 0), 64,
                   "tensor 0: name: length 65 is above the limit of 64 bytes"});
  cases.push_back({"utf-8", header(1, 0).Tensor("a\xff", {8}, 0, 0), 64,
                   "tensor 0: name 'a\\xff' is not UTF-8"});
  for (const Case& c : cases) {
    const std::string error = ErrorOf(Parse(c.w, c.data_bytes));
    EXPECT_TRUE(error.starts_with("t.gguf: ")) << c.what << ": " << error;
    EXPECT_NE(error.find(c.error), std::string::npos) << c.what << ": " << error;
  }
  EXPECT_NE(ErrorOf(ParseGgufHeader({}, 0, "t.gguf")).find("shorter than the 4-byte magic"),
            std::string::npos);
}

TEST(GgufReader, FilesThatAreNotThereOrNotFiles) {
  EXPECT_NE(ErrorOf(ReadGgufHeader(kDir + "missing.gguf")).find("missing.gguf: cannot open"),
            std::string::npos);
  EXPECT_NE(ErrorOf(ReadGgufHeader(kDir)).find("is a directory"), std::string::npos);
}

// ---- Models --------------------------------------------------------------------------------

struct Loaded {
  GgufModel model;
  hf::StepGraph step;
};

// The fixture's spec, its step graph in llama.cpp's layout (separate q, k, v), checked
// against the file.
Loaded Load(const std::string& name) {
  auto model = LoadGgufModel(kDir + name);
  EXPECT_TRUE(model.has_value()) << model.error().message;
  if (!model) return {};
  auto recipe = hf::ResolveRecipe(model->spec, {.weights = "q8_0"});
  EXPECT_TRUE(recipe.has_value()) << recipe.error().message;
  auto step = hf::BuildStepGraph(model->spec, *recipe);
  EXPECT_TRUE(step.has_value()) << step.error().message;
  if (!step) return {};
  const GraphCheck check = CheckGgufGraph(*model, step->graph);
  for (const std::string& e : check.errors) ADD_FAILURE() << name << ": " << e;
  EXPECT_TRUE(check.warnings.empty()) << name;
  return {std::move(*model), std::move(*step)};
}

// The graph's weights at the file's formats are the file's tensor bytes, exactly (less the
// tensors the graph does not use, which the model lists).
void ExpectExactWeightBytes(const Loaded& l, const std::string& name) {
  uint64_t graph_bytes = 0;
  for (const ir::Tensor& t : l.step.graph.tensors) {
    if (t.role != ir::Role::kWeight) continue;
    std::vector<int64_t> dims;
    for (const expr::Expr& d : t.shape) dims.push_back(d.constant());
    auto b = format::TensorBytes(l.model.weight_formats.at(t.name), dims);
    ASSERT_TRUE(b.has_value()) << t.name;
    graph_bytes += *b;
  }
  uint64_t unused = 0;
  for (const std::string& u : l.model.unused_tensors) {
    for (const GgufFile& f : l.model.files) {
      if (const TensorInfo* t = f.FindTensor(u)) unused += t->bytes;
    }
  }
  EXPECT_EQ(graph_bytes + unused, l.model.TensorBytes()) << name;
}

TEST(GgufModel, LlamaSpecFromKeysAndWeightsAtTheFilesTypes) {
  const Loaded l = Load("tiny-llama.gguf");
  const hf::ModelSpec& s = l.model.spec;
  // make_gguf.py: hidden 64, 4 heads of 16, 2 KV heads, FFN 128, vocab 96, 2 layers, untied.
  EXPECT_EQ(s.model_type, "llama");
  EXPECT_EQ(s.hidden, 64);
  EXPECT_EQ(s.vocab, 96);
  EXPECT_EQ(s.num_layers(), 2);
  EXPECT_EQ(s.attn.heads, 4);
  EXPECT_EQ(s.attn.kv_heads, 2);
  EXPECT_EQ(s.attn.head_dim, 16);  // embedding_length / head_count: no key_length
  EXPECT_EQ(s.mlp.intermediate, 128);
  EXPECT_FALSE(s.tie_embeddings);
  EXPECT_FALSE(s.attn.qkv_bias);
  EXPECT_EQ(s.layers[0].window, 0);
  const auto& f = l.model.weight_formats;
  EXPECT_EQ(f.at("embed_tokens.weight"), format::Format::kQ8_0);
  EXPECT_EQ(f.at("lm_head.weight"), format::Format::kF16);
  EXPECT_EQ(f.at("layers.0.attn.v_proj.weight"), format::Format::kQ8_0);
  EXPECT_EQ(f.at("layers.1.attn.v_proj.weight"), format::Format::kQ5_0);
  EXPECT_EQ(f.at("layers.1.mlp.gate_up_proj.weight"), format::Format::kQ4_1);
  EXPECT_EQ(f.at("layers.1.mlp.down_proj.weight"), format::Format::kIq4Nl);
  EXPECT_EQ(f.at("final_norm.weight"), format::Format::kF32);
  // rope_freqs is a real tensor the step graph has no weight for: listed and warned.
  EXPECT_EQ(l.model.unused_tensors, std::vector<std::string>{"rope_freqs.weight"});
  ASSERT_EQ(l.model.warnings.size(), 1u);
  EXPECT_NE(l.model.warnings[0].find("rope_freqs.weight"), std::string::npos);
  ExpectExactWeightBytes(l, "tiny-llama.gguf");
}

TEST(GgufModel, SplitFileIsReadShardByShard) {
  const Loaded whole = Load("tiny-llama.gguf");
  const Loaded split = Load("tiny-split-00001-of-00002.gguf");
  EXPECT_EQ(split.model.files.size(), 2u);
  EXPECT_EQ(split.model.TensorBytes(), whole.model.TensorBytes());
  EXPECT_EQ(split.model.TensorCount(), whole.model.TensorCount());
  EXPECT_EQ(split.model.weight_formats, whole.model.weight_formats);
  ExpectExactWeightBytes(split, "tiny-split");
  auto second = LoadGgufModel(kDir + "tiny-split-00002-of-00002.gguf");
  ASSERT_FALSE(second.has_value());
  EXPECT_NE(second.error().message.find("is shard 2 of 2 of a split model; give the first shard"),
            std::string::npos);
}

TEST(GgufModel, Qwen3MoeExpertsTiedEmbeddingsAndQkNorm) {
  const Loaded l = Load("tiny-qwen3moe.gguf");
  const hf::ModelSpec& s = l.model.spec;
  EXPECT_EQ(s.model_type, "qwen3_moe");
  EXPECT_TRUE(s.tie_embeddings);  // no output.weight
  EXPECT_TRUE(s.attn.qk_norm);
  EXPECT_EQ(s.attn.head_dim, 32);  // key_length, not 64 / 4
  EXPECT_EQ(s.moe.experts, 4);
  EXPECT_EQ(s.moe.top_k, 2);
  EXPECT_EQ(s.moe.intermediate, 32);
  for (const hf::LayerSpec& layer : s.layers) EXPECT_EQ(layer.ffn, hf::Ffn::kMoe);
  EXPECT_EQ(l.model.weight_formats.at("embed_tokens.weight"), format::Format::kBf16);
  EXPECT_EQ(l.model.weight_formats.at("layers.0.moe.experts.gate_up_proj.weight"),
            format::Format::kQ4_0);
  ExpectExactWeightBytes(l, "tiny-qwen3moe.gguf");
}

TEST(GgufModel, GptOssSinksBiasesMxfp4AndEveryOtherLayerSliding) {
  const Loaded l = Load("tiny-gpt-oss.gguf");
  const hf::ModelSpec& s = l.model.spec;
  EXPECT_EQ(s.model_type, "gpt_oss");
  EXPECT_TRUE(s.attn.sinks);
  EXPECT_TRUE(s.attn.qkv_bias);
  EXPECT_TRUE(s.attn.o_bias);
  EXPECT_TRUE(s.moe.router_bias);
  EXPECT_TRUE(s.moe.expert_bias);
  EXPECT_NE(s.norm_layout, hf::NormLayout::kSandwich);  // post_attention_norm is gpt-oss's FFN norm
  EXPECT_EQ(s.layers[0].window, 8);  // layer 0 slides, layer 1 is full (llama.cpp pattern 2)
  EXPECT_EQ(s.layers[1].window, 0);
  EXPECT_EQ(l.model.weight_formats.at("layers.1.moe.experts.down_proj.weight"),
            format::Format::kMxfp4);
  EXPECT_EQ(l.model.weight_formats.at("layers.1.ffn_norm.weight"), format::Format::kF32);
  EXPECT_TRUE(l.model.unused_tensors.empty());
  ExpectExactWeightBytes(l, "tiny-gpt-oss.gguf");
}

TEST(GgufModel, Deepseek2MlaLeadingDenseLayerSharedExpertAndSigmoidGating) {
  const Loaded l = Load("tiny-deepseek2.gguf");
  const hf::ModelSpec& s = l.model.spec;
  EXPECT_EQ(s.layers[0].mixer, hf::Mixer::kMla);
  EXPECT_EQ(s.layers[0].ffn, hf::Ffn::kDense);
  EXPECT_EQ(s.layers[1].ffn, hf::Ffn::kMoe);
  EXPECT_EQ(s.mla.q_lora_rank, 32);
  EXPECT_EQ(s.mla.kv_lora_rank, 32);
  EXPECT_EQ(s.mla.qk_rope_head_dim, 16);
  EXPECT_EQ(s.mla.qk_nope_head_dim, 32);  // key_length 48 − rope 16
  EXPECT_EQ(s.mla.v_head_dim, 32);
  EXPECT_EQ(s.moe.shared_intermediate, 32);  // ffn_down_shexp's ne0
  EXPECT_TRUE(s.moe.sigmoid_scores);
  EXPECT_TRUE(s.moe.score_correction_bias);
  EXPECT_EQ(s.mlp.intermediate, 128);
  ExpectExactWeightBytes(l, "tiny-deepseek2.gguf");
}

TEST(GgufModel, Phi3FusedTensorsFeedSplitGraphWeights) {
  const Loaded l = Load("tiny-phi3.gguf");
  const hf::ModelSpec& s = l.model.spec;
  EXPECT_EQ(s.layers[0].window, 0);  // llama.cpp runs phi3 without its sliding window
  bool noted = false;
  for (const std::string& a : s.assumptions) noted = noted || a.find("PR 13676") != std::string::npos;
  EXPECT_TRUE(noted);
  for (const char* w : {"layers.0.attn.q_proj.weight", "layers.0.attn.k_proj.weight",
                        "layers.0.attn.v_proj.weight", "layers.0.attn.qkv_proj.weight"}) {
    EXPECT_EQ(l.model.weight_formats.at(w), format::Format::kQ5_0) << w;
  }
  EXPECT_EQ(l.model.weight_formats.at("layers.0.mlp.gate_up_proj.weight"), format::Format::kQ4_0);
  ExpectExactWeightBytes(l, "tiny-phi3.gguf");
}

TEST(GgufModel, Gemma3SandwichNormsAndFiveOfSixLayersSliding) {
  const Loaded l = Load("tiny-gemma3.gguf");
  const hf::ModelSpec& s = l.model.spec;
  EXPECT_EQ(s.norm_layout, hf::NormLayout::kSandwich);
  EXPECT_TRUE(s.attn.qk_norm);
  EXPECT_TRUE(s.tie_embeddings);
  EXPECT_EQ(s.mlp.act, hf::Activation::kGeluGated);
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_EQ(s.layers[static_cast<size_t>(i)].window, i == 5 ? 0 : 16) << i;
  }
  ExpectExactWeightBytes(l, "tiny-gemma3.gguf");
}

// The weights of a step graph by name, element counts; q, k and v counted as the fused
// qkv_proj the HF layout builds.
std::map<std::string, int64_t> WeightElements(const ir::Graph& g) {
  std::map<std::string, int64_t> by_name;
  for (const ir::Tensor& t : g.tensors) {
    if (t.role != ir::Role::kWeight) continue;
    std::string name = t.name;
    for (const char* part : {"attn.q_proj", "attn.k_proj", "attn.v_proj"}) {
      if (auto at = name.find(part); at != std::string::npos) name.replace(at, 11, "attn.qkv_proj");
    }
    int64_t n = 1;
    for (const expr::Expr& d : t.shape) n *= d.constant();
    by_name[name] += n;
  }
  return by_name;
}

// The step graph of an HF config's text, at q8_0.
ir::Graph ConfigGraph(std::string_view config, const std::string& origin) {
  auto spec = hf::ParseHfConfig(config, origin);
  EXPECT_TRUE(spec.has_value()) << spec.error().message;
  if (!spec) return {};
  auto recipe = hf::ResolveRecipe(*spec, {.weights = "q8_0"});
  EXPECT_TRUE(recipe.has_value());
  if (!recipe) return {};
  auto step = hf::BuildStepGraph(*spec, *recipe);
  EXPECT_TRUE(step.has_value()) << step.error().message;
  return step ? std::move(step->graph) : ir::Graph{};
}

// make_gguf.py's hybrids: hidden 64; full attention 4 heads of 16 (2 KV) gated per head;
// GatedDeltaNet 2 key heads, 4 value heads of 16, conv 4; layer 3 full attention.
void ExpectQwenHybrid(const hf::ModelSpec& s) {
  ASSERT_EQ(s.num_layers(), 4);
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(s.layers[static_cast<size_t>(i)].mixer,
              i == 3 ? hf::Mixer::kAttention : hf::Mixer::kGatedDeltaNet)
        << i;
  }
  EXPECT_EQ(s.gdn.key_heads, 2);
  EXPECT_EQ(s.gdn.value_heads, 4);
  EXPECT_EQ(s.gdn.key_head_dim, 16);
  EXPECT_EQ(s.gdn.value_head_dim, 16);  // ssm.inner_size 64 / ssm.time_step_rank 4
  EXPECT_EQ(s.gdn.conv_kernel, 4);
  EXPECT_EQ(s.attn.heads, 4);
  EXPECT_EQ(s.attn.kv_heads, 2);
  EXPECT_EQ(s.attn.head_dim, 16);
  EXPECT_TRUE(s.attn.output_gate);
  EXPECT_TRUE(s.attn.qk_norm);
  EXPECT_FALSE(s.attn.qk_norm_full);
  ASSERT_TRUE(s.ssm_state_dtype.has_value());  // llama.cpp's recurrent states are f32
  EXPECT_EQ(*s.ssm_state_dtype, format::Format::kF32);
}

bool Notes(const hf::ModelSpec& s, std::string_view text) {
  for (const std::string& a : s.assumptions) {
    if (a.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(GgufModel, Qwen35MoeGatedDeltaNetLayersAndTheNextnBlockLeftOut) {
  const Loaded l = Load("tiny-qwen35moe.gguf");
  const hf::ModelSpec& s = l.model.spec;
  EXPECT_EQ(s.model_type, "qwen3_5_moe");
  ExpectQwenHybrid(s);
  for (const hf::LayerSpec& layer : s.layers) EXPECT_EQ(layer.ffn, hf::Ffn::kMoe);
  EXPECT_EQ(s.moe.experts, 4);
  EXPECT_EQ(s.moe.top_k, 2);
  EXPECT_EQ(s.moe.intermediate, 32);
  EXPECT_EQ(s.moe.shared_intermediate, 32);
  EXPECT_TRUE(s.moe.shared_gate);
  EXPECT_FALSE(s.moe.sigmoid_scores);
  // attn_qkv + attn_gate are one graph weight, ssm_beta + ssm_alpha another; the
  // suffix-less ssm_a is A_log.
  const auto& f = l.model.weight_formats;
  EXPECT_EQ(f.at("layers.0.linear_attn.in_proj_qkvz.weight"), format::Format::kQ8_0);
  EXPECT_EQ(f.at("layers.0.linear_attn.in_proj_ba.weight"), format::Format::kF32);
  EXPECT_EQ(f.at("layers.0.linear_attn.A_log"), format::Format::kF32);
  EXPECT_EQ(f.at("layers.2.linear_attn.out_proj.weight"), format::Format::kQ4_0);
  EXPECT_EQ(f.at("layers.3.attn.q_proj.weight"), format::Format::kQ8_0);
  // Block 4, the nextn block, is not the model's: every one of its tensors is listed unused.
  EXPECT_TRUE(Notes(s, "blocks 4..4 are 1 nextn (MTP) block(s)"));
  ASSERT_FALSE(l.model.unused_tensors.empty());
  for (const std::string& u : l.model.unused_tensors) EXPECT_TRUE(u.starts_with("blk.4.")) << u;
  // 2 norms + 6 attention (q, k, v, their norms, output) + 8 MoE (router, 3 experts, the
  // shared expert's gate and 3 matrices) + 4 nextn (eh_proj, enorm, hnorm, shared_head_norm).
  EXPECT_EQ(l.model.unused_tensors.size(), 2u + 6u + 8u + 4u);
  ExpectExactWeightBytes(l, "tiny-qwen35moe.gguf");
}

// The same model from its HF config (Qwen3_5MoeTextConfig fields with make_gguf.py's sizes):
// the config's step graph and the GGUF file's hold the same weights, element for element (the
// config's fused qkv_proj is the file's q, k and v together).
TEST(GgufModel, Qwen35MoeFileAndConfigGiveTheSameWeights) {
  const Loaded l = Load("tiny-qwen35moe.gguf");
  constexpr std::string_view kConfig = R"({"model_type": "qwen3_5_moe", "text_config": {
      "hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4,
      "num_key_value_heads": 2, "head_dim": 16, "linear_num_key_heads": 2,
      "linear_num_value_heads": 4, "linear_key_head_dim": 16, "linear_value_head_dim": 16,
      "linear_conv_kernel_dim": 4, "full_attention_interval": 4, "num_experts": 4,
      "num_experts_per_tok": 2, "moe_intermediate_size": 32,
      "shared_expert_intermediate_size": 32, "vocab_size": 64, "tie_word_embeddings": false}})";
  EXPECT_EQ(WeightElements(l.step.graph), WeightElements(ConfigGraph(kConfig, "qwen35moe")));
}

TEST(GgufModel, Qwen35DenseHybrid) {
  const Loaded l = Load("tiny-qwen35.gguf");
  const hf::ModelSpec& s = l.model.spec;
  EXPECT_EQ(s.model_type, "qwen3_5");
  ExpectQwenHybrid(s);
  for (const hf::LayerSpec& layer : s.layers) EXPECT_EQ(layer.ffn, hf::Ffn::kDense);
  EXPECT_EQ(s.mlp.intermediate, 96);
  EXPECT_TRUE(l.model.unused_tensors.empty());
  EXPECT_FALSE(Notes(s, "nextn"));
  ExpectExactWeightBytes(l, "tiny-qwen35.gguf");
}

TEST(GgufModel, Qwen3NextFusedSsmInAndSsmBa) {
  const Loaded l = Load("tiny-qwen3next.gguf");
  const hf::ModelSpec& s = l.model.spec;
  EXPECT_EQ(s.model_type, "qwen3_next");
  ExpectQwenHybrid(s);
  EXPECT_EQ(l.model.weight_formats.at("layers.1.linear_attn.in_proj_qkvz.weight"),
            format::Format::kQ8_0);
  EXPECT_TRUE(l.model.unused_tensors.empty());
  ExpectExactWeightBytes(l, "tiny-qwen3next.gguf");
}

TEST(GgufModel, Glm4MoeBiasesLeadingDenseSharedExpertSigmoidAndNextnBlock) {
  const Loaded l = Load("tiny-glm4moe.gguf");
  const hf::ModelSpec& s = l.model.spec;
  EXPECT_EQ(s.model_type, "glm4_moe");
  ASSERT_EQ(s.num_layers(), 3);  // block_count 4 less one nextn block
  EXPECT_EQ(s.layers[0].ffn, hf::Ffn::kDense);
  EXPECT_EQ(s.layers[1].ffn, hf::Ffn::kMoe);
  EXPECT_EQ(s.layers[2].ffn, hf::Ffn::kMoe);
  EXPECT_TRUE(s.attn.qkv_bias);
  EXPECT_FALSE(s.attn.o_bias);
  EXPECT_FALSE(s.attn.qk_norm);
  EXPECT_FALSE(s.attn.output_gate);
  EXPECT_TRUE(s.moe.sigmoid_scores);
  EXPECT_TRUE(s.moe.score_correction_bias);
  EXPECT_EQ(s.moe.shared_intermediate, 32);
  EXPECT_FALSE(s.moe.shared_gate);
  for (const std::string& u : l.model.unused_tensors) EXPECT_TRUE(u.starts_with("blk.3.")) << u;
  ExpectExactWeightBytes(l, "tiny-glm4moe.gguf");
  // The same model from its Glm4MoeConfig (its MTP layer is beside the step graph there too).
  constexpr std::string_view kConfig = R"({"model_type": "glm4_moe", "hidden_size": 64,
      "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2,
      "head_dim": 16, "intermediate_size": 96, "moe_intermediate_size": 32,
      "n_routed_experts": 4, "num_experts_per_tok": 2, "n_shared_experts": 1,
      "first_k_dense_replace": 1, "attention_bias": true, "use_qk_norm": false,
      "num_nextn_predict_layers": 1, "vocab_size": 64, "tie_word_embeddings": false})";
  EXPECT_EQ(WeightElements(l.step.graph), WeightElements(ConfigGraph(kConfig, "glm4_moe")));
}

TEST(GgufModel, MinimaxM2QkNormOverTheWholeProjection) {
  const Loaded l = Load("tiny-minimax-m2.gguf");
  const hf::ModelSpec& s = l.model.spec;
  EXPECT_EQ(s.model_type, "minimax_m2");
  EXPECT_TRUE(s.attn.qk_norm);
  EXPECT_TRUE(s.attn.qk_norm_full);  // attn_q_norm is {head_dim · head_count}
  EXPECT_TRUE(s.moe.sigmoid_scores);
  EXPECT_TRUE(s.moe.score_correction_bias);
  EXPECT_EQ(s.moe.shared_intermediate, 0);
  EXPECT_TRUE(l.model.unused_tensors.empty());
  ExpectExactWeightBytes(l, "tiny-minimax-m2.gguf");
  constexpr std::string_view kConfig = R"({"model_type": "minimax_m2", "hidden_size": 64,
      "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
      "head_dim": 16, "intermediate_size": 32, "num_local_experts": 4,
      "num_experts_per_tok": 2, "use_qk_norm": true, "qk_norm_type": "per_layer",
      "scoring_func": "sigmoid", "use_routing_bias": true, "vocab_size": 64,
      "tie_word_embeddings": false})";
  EXPECT_EQ(WeightElements(l.step.graph), WeightElements(ConfigGraph(kConfig, "minimax_m2")));
}

// Gemma 4 (make_gguf.py's tiny-gemma4*.gguf): sliding layers of 2 KV heads of 16, full ones
// with heads of 32, five of six layers sliding over 16 tokens (the bool pattern), normed value
// heads. The MoE file's full layers have 1 KV head and no attn_v (K = V, as the released
// models); the dense file's 2 and attn_v (attention_k_eq_v false). The 26B-A4B shape keeps its
// dense MLP beside the experts, with the router's input scale and the per-expert scale read
// from their ".scale" tensors; rope_freqs and layer_output_scale are the file's only tensors
// outside the step graph. Each file builds the weights the same model's HF config builds,
// element for element, and its bytes exactly.
TEST(GgufModel, Gemma4LayersOfTwoShapesAndTheMoeBesideTheMlp) {
  for (const bool moe : {true, false}) {
    const std::string file = moe ? "tiny-gemma4-moe.gguf" : "tiny-gemma4.gguf";
    const Loaded l = Load(file);
    const hf::ModelSpec& s = l.model.spec;
    EXPECT_EQ(s.model_type, "gemma4_text") << file;
    EXPECT_EQ(s.norm_layout, hf::NormLayout::kSandwich) << file;
    EXPECT_TRUE(s.attn.qk_norm && s.attn.v_norm) << file;
    EXPECT_TRUE(s.tie_embeddings) << file;
    EXPECT_EQ(s.attn.head_dim, 16);
    EXPECT_EQ(s.attn.kv_heads, 2);
    for (int64_t i = 0; i < 6; ++i) {
      const hf::LayerSpec& layer = s.layers[static_cast<size_t>(i)];
      const bool full = i == 5;
      EXPECT_EQ(layer.window, full ? 0 : 16) << file << " " << i;
      EXPECT_EQ(layer.head_dim, full ? 32 : 0) << file << " " << i;
      EXPECT_EQ(layer.kv_heads, full && moe ? 1 : 0) << file << " " << i;
      EXPECT_EQ(layer.k_eq_v, moe && full) << file << " " << i;
      EXPECT_EQ(layer.ffn, moe ? hf::Ffn::kMoe : hf::Ffn::kDense) << file << " " << i;
    }
    EXPECT_EQ(s.mlp.intermediate, 64);
    EXPECT_EQ(s.mlp.act, hf::Activation::kGeluGated);
    if (moe) {
      EXPECT_TRUE(s.moe.parallel_dense && s.moe.router_norm);
      EXPECT_EQ(s.moe.experts, 4);
      EXPECT_EQ(s.moe.top_k, 2);
      EXPECT_EQ(s.moe.intermediate, 32);
    }
    std::vector<std::string> unused = l.model.unused_tensors;
    std::sort(unused.begin(), unused.end());
    std::vector<std::string> expected{"rope_freqs.weight"};
    for (int i = 0; i < 6; ++i) expected.push_back("blk." + std::to_string(i) + ".layer_output_scale.weight");
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(unused, expected) << file;
    ExpectExactWeightBytes(l, file);
    const std::string config =
        std::string(R"({"model_type": "gemma4_text", "hidden_size": 64, "num_hidden_layers": 6,
        "num_attention_heads": 2, "num_key_value_heads": 2, "head_dim": 16,
        "global_head_dim": 32, "num_global_key_value_heads": 1, "intermediate_size": 64,
        "sliding_window": 16, "layer_types": ["sliding_attention", "sliding_attention",
        "sliding_attention", "sliding_attention", "sliding_attention", "full_attention"],
        "hidden_activation": "gelu_pytorch_tanh", "vocab_size": 64, "tie_word_embeddings": true,
        )") +
        (moe ? R"("attention_k_eq_v": true, "enable_moe_block": true, "num_experts": 4,
        "top_k_experts": 2, "moe_intermediate_size": 32})"
             : R"("attention_k_eq_v": false})");
    EXPECT_EQ(WeightElements(l.step.graph), WeightElements(ConfigGraph(config, "gemma4_text")))
        << file;
  }
}

// Seed-OSS: a Llama layer with q/k/v biases whose FFN norm llama.cpp stores as
// post_attention_norm; ERNIE-4.5 MoE: a leading dense layer, then experts beside two shared
// experts, softmax routing with the score-correction bias, a tied embedding. Each file builds
// the weights its model's HF config builds, element for element, and its bytes exactly.
TEST(GgufModel, SeedOssAndErnie45MoeAsTheirConfigs) {
  const Loaded seed = Load("tiny-seed-oss.gguf");
  EXPECT_EQ(seed.model.spec.model_type, "seed_oss");
  EXPECT_TRUE(seed.model.spec.attn.qkv_bias);
  EXPECT_FALSE(seed.model.spec.attn.o_bias);
  EXPECT_TRUE(seed.model.unused_tensors.empty());
  ExpectExactWeightBytes(seed, "tiny-seed-oss.gguf");
  constexpr std::string_view kSeed = R"({"model_type": "seed_oss", "hidden_size": 64,
      "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
      "head_dim": 16, "intermediate_size": 128, "attention_bias": true,
      "attention_out_bias": false, "vocab_size": 64, "tie_word_embeddings": false})";
  EXPECT_EQ(WeightElements(seed.step.graph), WeightElements(ConfigGraph(kSeed, "seed_oss")));

  const Loaded ernie = Load("tiny-ernie4_5-moe.gguf");
  const hf::ModelSpec& s = ernie.model.spec;
  EXPECT_EQ(s.model_type, "ernie4_5_moe");
  EXPECT_EQ(s.layers[0].ffn, hf::Ffn::kDense);
  EXPECT_EQ(s.layers[1].ffn, hf::Ffn::kMoe);
  EXPECT_EQ(s.moe.shared_intermediate, 64);
  EXPECT_TRUE(s.moe.score_correction_bias);
  EXPECT_FALSE(s.moe.sigmoid_scores);
  EXPECT_TRUE(s.tie_embeddings);
  EXPECT_TRUE(ernie.model.unused_tensors.empty());
  ExpectExactWeightBytes(ernie, "tiny-ernie4_5-moe.gguf");
  constexpr std::string_view kErnie = R"({"model_type": "ernie4_5_moe", "hidden_size": 64,
      "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2,
      "intermediate_size": 128, "moe_intermediate_size": 32, "moe_num_experts": 4, "moe_k": 2,
      "moe_num_shared_experts": 2, "moe_layer_start_index": 1, "moe_layer_interval": 1,
      "use_bias": false, "vocab_size": 64, "tie_word_embeddings": true})";
  EXPECT_EQ(WeightElements(ernie.step.graph),
            WeightElements(ConfigGraph(kErnie, "ernie4_5_moe")));
}

// Llama 4 (make_gguf.py's Maverick pattern): MoE where ffn_gate_inp is (every second layer)
// beside a shared expert, dense MLPs between; layer 3 global without RoPE, the others chunked
// over 8192 tokens; a weightless q/k norm; sigmoid routing; rope_freqs outside the step graph.
// The file builds the weights its HF config builds, element for element, and its bytes.
TEST(GgufModel, Llama4ChunkedAndGlobalNopeLayersAndInterleavedMoe) {
  const Loaded l = Load("tiny-llama4.gguf");
  const hf::ModelSpec& s = l.model.spec;
  EXPECT_EQ(s.model_type, "llama4_text");
  for (int64_t i = 0; i < 4; ++i) {
    const hf::LayerSpec& layer = s.layers[static_cast<size_t>(i)];
    EXPECT_EQ(layer.rope, i != 3) << i;
    EXPECT_EQ(layer.chunk, i != 3 ? 8192 : 0) << i;
    EXPECT_EQ(layer.ffn, i % 2 == 1 ? hf::Ffn::kMoe : hf::Ffn::kDense) << i;
  }
  EXPECT_TRUE(s.attn.qk_norm && s.attn.qk_norm_weightless);
  EXPECT_TRUE(s.moe.sigmoid_scores);
  EXPECT_EQ(s.moe.shared_intermediate, 32);
  EXPECT_EQ(s.mlp.intermediate, 128);
  EXPECT_EQ(l.model.unused_tensors, std::vector<std::string>{"rope_freqs.weight"});
  ExpectExactWeightBytes(l, "tiny-llama4.gguf");
  constexpr std::string_view kConfig = R"({"model_type": "llama4_text", "hidden_size": 64,
      "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2,
      "head_dim": 16, "intermediate_size": 32, "intermediate_size_mlp": 128,
      "num_local_experts": 4, "num_experts_per_tok": 1, "interleave_moe_layer_step": 2,
      "use_qk_norm": true, "attention_chunk_size": 8192, "vocab_size": 64,
      "tie_word_embeddings": false})";
  EXPECT_EQ(WeightElements(l.step.graph), WeightElements(ConfigGraph(kConfig, "llama4_text")));
}

// Gemma 4 E2B's features (make_gguf.py's tiny-gemma4-e2b.gguf): per-layer embeddings of 32
// from a 64-row table, the last two blocks reading an earlier block's KV — their attn_k,
// attn_v and attn_k_norm, kept in the file, left out of the step graph and listed — with an MLP
// twice as wide. The file builds the weights its HF config builds, element for element, and
// its bytes exactly (the left-out tensors among the unused).
TEST(GgufModel, Gemma4E2bPerLayerEmbeddingsAndSharedKv) {
  const Loaded l = Load("tiny-gemma4-e2b.gguf");
  const hf::ModelSpec& s = l.model.spec;
  EXPECT_EQ(s.per_layer_width, 32);
  EXPECT_EQ(s.per_layer_vocab, 64);
  EXPECT_EQ(s.mlp.intermediate, 64);
  for (int64_t i = 0; i < 5; ++i) {
    const hf::LayerSpec& layer = s.layers[static_cast<size_t>(i)];
    EXPECT_EQ(layer.kv_shared, i >= 3) << i;
    EXPECT_EQ(layer.ffn_width, i >= 3 ? 128 : 0) << i;
    EXPECT_FALSE(layer.k_eq_v) << i;
  }
  std::vector<std::string> unused = l.model.unused_tensors;
  std::sort(unused.begin(), unused.end());
  EXPECT_EQ(unused, (std::vector<std::string>{
                        "blk.3.attn_k.weight", "blk.3.attn_k_norm.weight", "blk.3.attn_v.weight",
                        "blk.4.attn_k.weight", "blk.4.attn_k_norm.weight", "blk.4.attn_v.weight"}));
  ExpectExactWeightBytes(l, "tiny-gemma4-e2b.gguf");
  constexpr std::string_view kConfig = R"({"model_type": "gemma4_text", "hidden_size": 64,
      "num_hidden_layers": 5, "num_attention_heads": 2, "num_key_value_heads": 1,
      "head_dim": 16, "global_head_dim": 32, "intermediate_size": 64, "sliding_window": 16,
      "layer_types": ["sliding_attention", "sliding_attention", "sliding_attention",
      "sliding_attention", "full_attention"], "num_kv_shared_layers": 2,
      "use_double_wide_mlp": true, "hidden_size_per_layer_input": 32,
      "vocab_size_per_layer_input": 64, "attention_k_eq_v": false,
      "hidden_activation": "gelu_pytorch_tanh", "vocab_size": 64, "tie_word_embeddings": true})";
  EXPECT_EQ(WeightElements(l.step.graph), WeightElements(ConfigGraph(kConfig, "gemma4_text")));
}

// The error building a model from `file` with metadata `key` set to `v` (added when absent),
// or "(no error)".
std::string MetadataError(GgufFile file, std::string_view key, const Value& v) {
  bool found = false;
  for (KeyValue& kv : file.metadata) {
    if (kv.key == key) kv.value = v, found = true;
  }
  if (!found) file.metadata.push_back({std::string(key), v});
  auto m = BuildGgufModel({file});
  return m ? std::string("(no error)") : m.error().message;
}

// Gemma 4's small-model keys must agree with the file (a per-layer width needs its table, the
// KV-sharing blocks must leave one that owns KV), and a layer pattern that is not one bool per
// block is named.
TEST(GgufModel, Gemma4SmallModelFeaturesAndBadPatternsAreNamedErrors) {
  auto base = ReadGgufHeader(kDir + "tiny-gemma4.gguf");
  ASSERT_TRUE(base.has_value());
  auto with = [&](std::string_view key, const Value& v) { return MetadataError(*base, key, v); };
  Value u32;
  u32.type = ValueType::kUint32;
  u32.scalar = uint64_t{256};
  Value bools;
  bools.type = ValueType::kArray;
  bools.element = ValueType::kBool;
  bools.count = 3;
  bools.array = {true, true, false};
  const std::string origin = kDir + "tiny-gemma4.gguf: metadata 'gemma4.";
  EXPECT_EQ(with("gemma4.embedding_length_per_layer_input", u32),
            origin + "embedding_length_per_layer_input': 256, but the file has no "
                     "'per_layer_token_embd.weight' of ne [1536 (blocks x 256), vocabulary size]");
  u32.scalar = uint64_t{6};
  EXPECT_EQ(with("gemma4.attention.shared_kv_layers", u32),
            origin + "attention.shared_kv_layers': 6 is not below block_count 6 (the shared "
                     "blocks read an earlier block's KV)");
  EXPECT_EQ(with("gemma4.attention.sliding_window_pattern", bools),
            origin + "attention.sliding_window_pattern': has 3 entries, block_count is 6");
  EXPECT_EQ(with("gemma4.attention.sliding_window_pattern", u32),
            origin + "attention.sliding_window_pattern': expected an array of bools (true: the "
                     "layer slides)");
  u32.scalar = uint64_t{24};
  EXPECT_EQ(with("gemma4.attention.value_length_swa", u32),
            origin + "attention.value_length_swa': 24 differs from attention.key_length_swa 16 "
                     "(llama.cpp's gemma4 requires them equal)");
}

// make_gguf.py's Nemotron-H: hidden 64; Mamba2 4 heads of 16, state 16, 2 groups, conv 4 with
// its bias; attention 4 heads of 16, 2 KV heads, no RoPE; recurrent states in f32.
void ExpectNemotronH(const hf::ModelSpec& s, std::string_view pattern) {
  ASSERT_EQ(s.num_layers(), static_cast<int64_t>(pattern.size()));
  for (size_t i = 0; i < pattern.size(); ++i) {
    const hf::LayerSpec& l = s.layers[i];
    const char kind = pattern[i];
    EXPECT_EQ(l.mixer, kind == 'M'   ? hf::Mixer::kMamba2
                       : kind == '*' ? hf::Mixer::kAttention
                                     : hf::Mixer::kNone)
        << i;
    EXPECT_EQ(l.ffn, kind == 'E'   ? hf::Ffn::kMoe
                     : kind == '-' ? hf::Ffn::kDense
                                   : hf::Ffn::kNone)
        << i;
  }
  EXPECT_EQ(s.model_type, "nemotron_h");
  EXPECT_EQ(s.mamba.heads, 4);
  EXPECT_EQ(s.mamba.head_dim, 16);  // ssm.inner_size 64 / ssm.time_step_rank 4
  EXPECT_EQ(s.mamba.state_size, 16);
  EXPECT_EQ(s.mamba.groups, 2);
  EXPECT_EQ(s.mamba.conv_kernel, 4);
  EXPECT_TRUE(s.mamba.conv_bias);
  EXPECT_FALSE(s.mamba.proj_bias);
  EXPECT_EQ(s.attn.heads, 4);
  EXPECT_EQ(s.attn.kv_heads, 2);  // the per-layer array's entry on the attention block
  EXPECT_FALSE(s.attn.rope);
  ASSERT_TRUE(s.ssm_state_dtype.has_value());
  EXPECT_EQ(*s.ssm_state_dtype, format::Format::kF32);
}

TEST(GgufModel, NemotronHMoeBlocksLatentExpertsAndTheNextnBlockLeftOut) {
  const Loaded l = Load("tiny-nemotron-h-moe.gguf");
  const hf::ModelSpec& s = l.model.spec;
  ExpectNemotronH(s, "MEM*E");
  EXPECT_EQ(s.moe.experts, 4);
  EXPECT_EQ(s.moe.top_k, 2);  // expert_used_count is per layer: 2 on every MoE block
  EXPECT_EQ(s.moe.intermediate, 32);
  EXPECT_EQ(s.moe.latent, 32);
  EXPECT_EQ(s.moe.shared_intermediate, 32);
  EXPECT_EQ(s.moe.act, hf::Activation::kRelu2);
  EXPECT_TRUE(s.moe.sigmoid_scores);  // llama.cpp routes Nemotron-H by sigmoid
  EXPECT_TRUE(s.moe.score_correction_bias);
  // The block norm of a MoE block is the graph's ffn_norm; a Mamba2 block's its input_norm.
  EXPECT_EQ(l.model.weight_formats.at("layers.1.ffn_norm.weight"), format::Format::kF32);
  EXPECT_EQ(l.model.weight_formats.at("layers.0.input_norm.weight"), format::Format::kF32);
  EXPECT_EQ(l.model.weight_formats.at("layers.0.mamba.D"), format::Format::kF32);
  EXPECT_EQ(l.model.weight_formats.at("layers.4.moe.shared_expert.up_proj.weight"),
            format::Format::kQ8_0);
  for (const std::string& u : l.model.unused_tensors) EXPECT_TRUE(u.starts_with("blk.5.")) << u;
  ExpectExactWeightBytes(l, "tiny-nemotron-h-moe.gguf");
  // The same model from its NemotronHConfig: the same weights, element for element.
  constexpr std::string_view kConfig = R"({"model_type": "nemotron_h", "hidden_size": 64,
      "hybrid_override_pattern": "MEM*E", "num_hidden_layers": 5, "mamba_num_heads": 4,
      "mamba_head_dim": 16, "ssm_state_size": 16, "n_groups": 2, "conv_kernel": 4,
      "use_conv_bias": true, "num_attention_heads": 4, "num_key_value_heads": 2,
      "head_dim": 16, "n_routed_experts": 4, "num_experts_per_tok": 2,
      "moe_intermediate_size": 32, "moe_shared_expert_intermediate_size": 32,
      "shared_expert_intermediate_size": 32, "moe_latent_size": 32,
      "mlp_hidden_act": "relu2", "vocab_size": 64, "tie_word_embeddings": false})";
  EXPECT_EQ(WeightElements(l.step.graph), WeightElements(ConfigGraph(kConfig, "nemotron-h")));
}

TEST(GgufModel, NemotronHDenseBlocksHaveUpOnlyMlps) {
  const Loaded l = Load("tiny-nemotron-h.gguf");
  const hf::ModelSpec& s = l.model.spec;
  ExpectNemotronH(s, "M-M*-");
  EXPECT_EQ(s.mlp.intermediate, 96);  // feed_forward_length's entry on the MLP blocks
  EXPECT_EQ(s.mlp.act, hf::Activation::kRelu2);
  EXPECT_EQ(l.model.weight_formats.at("layers.1.mlp.up_proj.weight"), format::Format::kQ4_0);
  EXPECT_TRUE(l.model.unused_tensors.empty());
  ExpectExactWeightBytes(l, "tiny-nemotron-h.gguf");
}

// The hybrids' own keys: a bad value names the key, and a file without them the missing key.
TEST(GgufModel, BadHybridMetadataIsANamedError) {
  auto base = ReadGgufHeader(kDir + "tiny-qwen35moe.gguf");
  ASSERT_TRUE(base.has_value());
  auto with = [&](std::string_view key, std::optional<uint64_t> x) {
    GgufFile f = *base;
    for (size_t i = 0; i < f.metadata.size(); ++i) {
      if (f.metadata[i].key != key) continue;
      if (x) {
        f.metadata[i].value.scalar = *x;
      } else {
        f.metadata.erase(f.metadata.begin() + static_cast<std::ptrdiff_t>(i));
      }
      break;
    }
    auto m = BuildGgufModel({f});
    EXPECT_FALSE(m.has_value()) << key;
    return m ? std::string() : m.error().message;
  };
  const std::string origin = kDir + "tiny-qwen35moe.gguf: metadata ";
  EXPECT_EQ(with("qwen35moe.nextn_predict_layers", 5),
            origin + "'qwen35moe.nextn_predict_layers': 5 is not below block_count 5");
  EXPECT_EQ(with("qwen35moe.ssm.time_step_rank", 3),
            origin + "'qwen35moe.ssm.time_step_rank': 3 value heads are not a multiple of "
                     "ssm.group_count 2");
  EXPECT_EQ(with("qwen35moe.ssm.inner_size", 66),
            origin + "'qwen35moe.ssm.inner_size': 66 is not a multiple of ssm.time_step_rank 4");
  EXPECT_EQ(with("qwen35moe.ssm.state_size", std::nullopt),
            origin + "'qwen35moe.ssm.state_size': missing (required for architecture "
                     "'qwen35moe')");
  // nextn_predict_layers is what leaves the fifth block out: without it the block is read
  // as a fifth layer (full attention, no ssm_out).
  auto model = BuildGgufModel({*base});
  ASSERT_TRUE(model.has_value());
  EXPECT_EQ(model->spec.num_layers(), 4);
  GgufFile without = *base;
  for (size_t i = 0; i < without.metadata.size(); ++i) {
    if (without.metadata[i].key == "qwen35moe.nextn_predict_layers") {
      without.metadata.erase(without.metadata.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  }
  auto five = BuildGgufModel({without});
  ASSERT_TRUE(five.has_value());
  ASSERT_EQ(five->spec.num_layers(), 5);
  EXPECT_EQ(five->spec.layers[4].mixer, hf::Mixer::kAttention);
}

// The same graph built with one fused qkv_proj (the HF layout) also checks against the file.
TEST(GgufModel, FusedAttentionLayoutChecksToo) {
  auto model = LoadGgufModel(kDir + "tiny-llama.gguf");
  ASSERT_TRUE(model.has_value());
  auto recipe = hf::ResolveRecipe(model->spec, {});
  ASSERT_TRUE(recipe.has_value());
  auto step = hf::BuildStepGraph(model->spec, *recipe);
  ASSERT_TRUE(step.has_value());
  const GraphCheck check = CheckGgufGraph(*model, step->graph);
  EXPECT_TRUE(check.errors.empty()) << (check.errors.empty() ? "" : check.errors[0]);
  // q4_0 q and k with a q8_0 (layer 0) or q5_0 (layer 1) v: the fused weight is mixed.
  ASSERT_EQ(check.warnings.size(), 2u);
  EXPECT_NE(check.warnings[0].find("layers.0.attn.qkv_proj.weight: its tensors have different "
                                   "types"),
            std::string::npos)
      << check.warnings[0];
}

// A graph from another spec (one layer fewer, a wider FFN) is named tensor by tensor.
TEST(GgufModel, MismatchedGraphIsNamed) {
  auto model = LoadGgufModel(kDir + "tiny-llama.gguf");
  ASSERT_TRUE(model.has_value());
  hf::ModelSpec other = model->spec;
  other.mlp.intermediate = 256;
  auto recipe = hf::ResolveRecipe(other, {.weights = "q8_0"});
  auto step = hf::BuildStepGraph(other, *recipe);
  ASSERT_TRUE(step.has_value());
  const GraphCheck check = CheckGgufGraph(*model, step->graph);
  ASSERT_FALSE(check.errors.empty());
  EXPECT_NE(check.errors[0].find("weight layers.0.mlp.gate_up_proj.weight holds 32768 elements, "
                                 "tensor(s) blk.0.ffn_gate.weight, blk.0.ffn_up.weight 16384"),
            std::string::npos)
      << check.errors[0];
}

// Metadata errors name the file and the key.
TEST(GgufModel, BadMetadataIsANamedError) {
  auto base = ReadGgufHeader(kDir + "tiny-llama.gguf");
  ASSERT_TRUE(base.has_value());
  auto with = [&](std::string_view key, const Value& v) { return MetadataError(*base, key, v); };
  auto str = [](std::string s) {
    Value v;
    v.type = ValueType::kString;
    v.scalar = std::move(s);
    return v;
  };
  auto u32 = [](uint64_t x) {
    Value v;
    v.type = ValueType::kUint32;
    v.scalar = x;
    return v;
  };
  const std::string origin = kDir + "tiny-llama.gguf: ";
  EXPECT_EQ(with("general.architecture", str("rwkv7")),
            origin + "metadata 'general.architecture': \"rwkv7\" is not supported (supported: "
                     "llama, mistral3, qwen2, qwen2moe, qwen3, qwen3moe, qwen3next, qwen35, "
                     "qwen35moe, gemma2, gemma3, gemma4, phi3, deepseek2, glm4moe, minimax-m2, "
                     "nemotron_h, nemotron_h_moe, gpt-oss, gptoss, seed_oss, ernie4_5-moe, llama4)");
  EXPECT_EQ(with("general.architecture", u32(1)),
            origin + "metadata 'general.architecture': expected a string, got uint32");
  EXPECT_EQ(with("llama.attention.head_count_kv", u32(3)),
            origin + "metadata 'llama.attention.head_count_kv': 3 does not divide "
                     "attention.head_count 4");
  EXPECT_EQ(with("llama.block_count", u32(5000)),
            origin + "metadata 'llama.block_count': 5000 is above 1024 layers");
  EXPECT_EQ(with("llama.embedding_length", u32(0)),
            origin + "metadata 'llama.embedding_length': 0 is outside [1, 16777216]");
  EXPECT_EQ(with("llama.embedding_length", u32(32)),
            origin + "tensor 'token_embd.weight' has ne [64, 96], expected [32 "
                     "(embedding_length), vocabulary size]");
  EXPECT_EQ(with("llama.block_count", u32(3)),
            origin + "layer 2 has neither 'blk.2.ffn_down.weight' nor "
                     "'blk.2.ffn_gate_inp.weight' (a dense or MoE feed-forward)");
  Value per_layer;
  per_layer.type = ValueType::kArray;
  per_layer.element = ValueType::kUint32;
  per_layer.array = {uint64_t{128}, uint64_t{64}};
  per_layer.count = 2;
  EXPECT_EQ(with("llama.feed_forward_length", per_layer),
            origin + "metadata 'llama.feed_forward_length': differs between layers (128 and 64), "
                     "which opscope's model does not describe");
  GgufFile no_arch = *base;
  no_arch.metadata.erase(no_arch.metadata.begin());
  auto m = BuildGgufModel({no_arch});
  ASSERT_FALSE(m.has_value());
  EXPECT_EQ(m.error().message, origin + "metadata 'general.architecture': missing");
}

}  // namespace
}  // namespace opscope::import::gguf
