// The ONNX importer (`opscope analyze model.onnx`): reads an ONNX ModelProto without loading
// its weights, infers every tensor's shape (the file's value_info, the ONNX library's shape
// inference, then opscope's own evaluator of small integer shape subgraphs with the --dim
// bindings), and maps every node onto the closed op-kind list (docs/onnx.md).
//
// Format (onnx.proto, protobuf wire format): ModelProto{ir_version=1, opset_import=8,
// graph=7{node=1, initializer=5, input=11, output=12, value_info=13}, functions=25, ...}.
// Initializer payloads (TensorProto raw_data=9 and the typed *_data fields) are skipped at
// the wire level when larger than a few KB, so a model's weights are never copied or even
// paged in; weights stored as external data (data_location=EXTERNAL) are never opened.
#pragma once

#include <string>
#include <string_view>

#include "import/import.h"
#include "ir/graph.h"
#include "support/error.h"

namespace opscope::import {

// Imports `path`. Symbolic dims (ONNX dim_param) are interned verbatim; an unnamed dynamic
// dim of graph input X at axis i is the symbol "X:i". Bound dims are substituted while
// shapes are inferred (so shape subgraphs evaluate); the names stay interned for the ledger.
// A --dim name the model does not have is an error listing the names it has. Values given
// with --input feed the same evaluation and decide If branches: the branch not taken is
// left out (graph.not_taken), and an If whose condition depends on an input or dim with no
// value is listed as not costed and warned about once, naming what to pass (graph.warnings).
// Bad input (not a model, truncated, undefined tensor, unknown opset, negative dims) is an
// error naming the file and node; a node whose shape cannot be inferred carries the string
// attribute `unresolved_reason` and is listed as not costed.
Result<ir::Graph> ImportOnnx(const std::string& path, const ImportOptions& options);

// The same, from bytes in memory (`origin` names them in errors). For tests and benchmarks.
Result<ir::Graph> ImportOnnxBytes(std::string_view bytes, std::string_view origin,
                                  const ImportOptions& options);

}  // namespace opscope::import
