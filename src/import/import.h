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

// Dispatches on the extension: .onnx → ONNX importer; anything else must be opscope graph
// JSON. Errors name the file.
Result<ir::Graph> ImportModel(const std::string& path, const DimBindings& dims);

}  // namespace opscope::import
