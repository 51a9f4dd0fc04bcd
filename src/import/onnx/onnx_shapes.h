// opscope's own ONNX shape inference: output shapes and dtypes per shape rule, plus the
// contents of small integer tensors (Shape -> Gather -> Concat -> Reshape, Range, ...), so
// shapes that exporters compute at run time resolve once dims are bound. Dims are symbolic
// expressions; a dim nobody can know is std::nullopt (never a guess).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "expr/expr.h"
#include "expr/fold.h"
#include "import/onnx/onnx_ops.h"
#include "support/error.h"

#include <onnx/onnx_pb.h>

namespace opscope::import::onnx_shapes {

using Dim = expr::MaybeExpr;

// What is known about one tensor.
struct Info {
  bool rank_known = false;
  std::vector<Dim> dims;
  int32_t dtype = 0;  // onnx::TensorProto::DataType; 0 = unknown
  // Row-major contents of a small tensor (integers; floats only when integral), element by
  // element known or not; absent when the tensor is large or its contents are unknown.
  std::optional<std::vector<Dim>> value;

  bool AllDimsKnown() const;
  // The element count when every dim is a constant.
  std::optional<int64_t> ConstantElems() const;
};

// Tensors with at most this many elements carry their contents.
inline constexpr int64_t kMaxValueElems = 4096;

// The contents of a small TensorProto (initializer or Constant value) with embedded data.
std::optional<std::vector<Dim>> TensorValue(const onnx::TensorProto& t);
// Info for an initializer or Constant value: dims, dtype and (small) contents.
Result<Info> InfoFromTensor(const onnx::TensorProto& t);
// Info for a Constant node (value, value_int(s), value_float(s) attributes).
Result<Info> InfoFromConstantNode(const onnx::NodeProto& n);

struct NodeView {
  const onnx::NodeProto& node;
  std::vector<const Info*> inputs;  // nullptr for an absent optional input
  int64_t opset = 0;                // the node's domain's opset version
  const expr::SymbolTable* symbols = nullptr;
  std::vector<std::string>* notes = nullptr;  // assumptions a rule made (reported)
};

// Infers the node's outputs (one Info per node.output(), unknown ones left unknown). An error
// says why the shape cannot be inferred; it never throws.
Result<std::vector<Info>> InferOutputs(onnx_ops::Rule rule, const NodeView& v);

// A dim as text ("?" when unknown).
std::string DimString(const Dim& d, const expr::SymbolTable& symbols);

// Attribute readers.
std::optional<int64_t> IntAttr(const onnx::NodeProto& n, std::string_view name);
std::optional<std::vector<int64_t>> IntsAttr(const onnx::NodeProto& n, std::string_view name);
std::optional<std::string> StringAttr(const onnx::NodeProto& n, std::string_view name);

}  // namespace opscope::import::onnx_shapes
