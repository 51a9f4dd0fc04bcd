// The opscope graph JSON format (DESIGN "Graph JSON"), the native input of `analyze`:
//
//   { "name": "mm",
//     "dims": {"k": 128},                                     symbol -> non-negative integer
//     "tensors": [ {"name": "x", "shape": ["n", "k"], "format": "f32", "role": "input"}, ...],
//     "nodes":   [ {"name": "mm", "op": "MatMul", "inputs": ["x", "w"], "outputs": ["y"],
//                   "attrs": {"top_k": 8, "layout": "contiguous", "kernel_shape": [3, 3]},
//                   "source_op": "aten::mm"} ] }
//
// Shapes are arrays of non-negative integers or dim-expression strings; "format" defaults to
// f32 and "role" to activation; "attrs" values are integers, numbers, strings or integer
// arrays. Unknown fields are errors (they are usually typos); an op outside the closed list
// becomes Unknown with the name kept in source_op.
#pragma once

#include <string>
#include <string_view>

#include "ir/graph.h"
#include "support/error.h"

namespace opscope::import {

// Parses and validates `text`; `origin` (the file name) prefixes every error.
Result<ir::Graph> ParseGraphJson(std::string_view text, std::string_view origin);
Result<ir::Graph> LoadGraphJson(const std::string& path);

}  // namespace opscope::import
