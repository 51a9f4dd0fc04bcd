// A Hugging Face checkpoint as a table of tensors: model.safetensors.index.json (which tensor
// lives in which shard) and every shard's header, never the data. Each tensor carries its
// dtype, shape and exact bytes, what it is (a parameter, or quantization metadata: a scale,
// zero point, index or shape), and how many parameters it holds.
//
// Quantization metadata is recognised by name and dtype (docs/model_files.md lists the
// conventions): FP8 checkpoints' `.weight_scale` / `.weight_scale_inv` (per tensor, per
// channel or per 128×128 block, DeepSeek-V3), ModelOpt's NVFP4 `.weight_scale` (e4m3 per 16)
// and `.weight_scale_2` (f32 global), compressed-tensors' `.weight_global_scale`,
// `.weight_zero_point`, `.weight_g_idx`, `.weight_shape`, activation `.input_scale` /
// `.input_global_scale` and attention `.k_scale` / `.v_scale`, GPTQ/AWQ's `.scales`, `.qzeros`,
// `.g_idx`, and gpt-oss's MXFP4 `_scales` (e8m0 bytes beside `_blocks`). Metadata counts in
// the bytes, never in the parameters. Packed weights count their logical parameters: two per
// byte for NVFP4 (a U8 weight with an e4m3 `.weight_scale`) and MXFP4 (`_blocks`), eight per
// I32 for `.qweight` / `.weight_packed` (4-bit packing, noted as an assumption).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "import/safetensors/safetensors_reader.h"
#include "support/error.h"

namespace opscope::import::safetensors {

enum class TensorRole : uint8_t { kParameter, kScale, kZeroPoint, kIndex, kShape };
std::string_view TensorRoleName(TensorRole r);

struct CheckpointTensor {
  std::string name;
  size_t shard = 0;             // index into Checkpoint::shards
  const Dtype* dtype = nullptr;
  std::vector<int64_t> shape;
  uint64_t elements = 0, bytes = 0;
  TensorRole role = TensorRole::kParameter;
  uint64_t parameters = 0;      // logical elements of a parameter; 0 for metadata
  std::string owner;            // metadata: the tensor it belongs to ("" for attention scales)
};

struct Checkpoint {
  std::string origin;                   // the folder or file given
  std::vector<SafetensorsFile> shards;  // in file-name order
  std::vector<CheckpointTensor> tensors;  // the indexed tensors, shard by shard
  std::vector<std::string> warnings;      // index vs shards, total_size
  std::vector<std::string> assumptions;   // packing assumed

  uint64_t Bytes() const;        // Σ tensor bytes, metadata included
  uint64_t Parameters() const;   // Σ parameters (metadata excluded)
  uint64_t MetadataBytes() const;
  const CheckpointTensor* Find(std::string_view name) const;
};

// Reads a checkpoint folder (model.safetensors.index.json and its shards, or a single
// model.safetensors) or one .safetensors file.
Result<Checkpoint> ReadCheckpoint(const std::string& path);

// The table of tensors for headers already read (tests, the fuzzer): every tensor of every
// shard is in the checkpoint.
Result<Checkpoint> BuildCheckpoint(std::string origin, std::vector<SafetensorsFile> shards);

// What a tensor is, from its name and dtype alone (the suffix rules above); `owner` gets the
// name of the tensor it belongs to when it is metadata.
TensorRole ClassifyTensor(std::string_view name, const Dtype& dtype, std::string* owner);

}  // namespace opscope::import::safetensors
