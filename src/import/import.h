// `opscope analyze MODEL`: picks the importer for a model file. Each importer produces an
// ir::Graph and nothing else; the analysis never knows which one ran.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "support/error.h"

namespace opscope::import {

// --dim NAME=VALUE bindings, in command-line order. Importers that evaluate shapes while
// importing (ONNX) use them; every name an importer understands is interned in the graph's
// symbol table, so the ledger can bind the rest and reject names no importer knew.
using DimBindings = std::vector<std::pair<std::string, int64_t>>;

// --input NAME=VALUE: a value for a graph input, which the ONNX importer uses to evaluate
// shapes and decide If branches (graph inputs such as a sample rate or a mode flag).
struct InputValue {
  std::string name;
  bool list = false;          // a 1-D list ("1,512"); else a scalar
  bool is_float = false;      // a float scalar ("0.5", "1e-3"); lists are integers
  std::vector<int64_t> ints;  // the integers (one for an integer scalar)
  double real = 0;            // the float scalar
  std::string text;           // VALUE as written, for messages
};
using InputBindings = std::vector<InputValue>;

// The longest list --input takes (values feed shape computations, not tensors of data).
inline constexpr size_t kMaxInputListElems = 4096;

// Parses repeated --input NAME=VALUE (split at the last '='). VALUE is an integer, a float,
// or a comma-separated list of integers, optionally in brackets ("1,512", "[1,512]"). Errors
// name the option and quote the text.
Result<InputBindings> ParseInputOptions(const std::vector<std::string>& options);

// What an importer is given besides the file.
struct ImportOptions {
  ImportOptions() = default;
  // Most callers bind dims only.
  ImportOptions(DimBindings d) : dims(std::move(d)) {}  // NOLINT(google-explicit-constructor)
  DimBindings dims;
  InputBindings inputs;
};

// Dispatches on the extension: .onnx → ONNX importer; .gguf → the GGUF model's step graph
// (gguf_model.h ImportGgufGraph); anything else must be opscope graph JSON (neither takes
// --input values). Errors name the file.
Result<ir::Graph> ImportModel(const std::string& path, const ImportOptions& options);

}  // namespace opscope::import
