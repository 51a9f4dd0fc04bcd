// Tensors with their shapes evaluated under one set of bindings: what a cost rule reads.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "format/format.h"
#include "ir/graph.h"
#include "support/error.h"

namespace opscope::cost {

struct ResolvedTensor {
  enum class Status : uint8_t { kOk, kUnbound, kBlockMismatch };
  Status status = Status::kOk;
  ir::Role role = ir::Role::kActivation;
  format::Format format = format::Format::kF32;
  expr::SymbolId unbound = 0;  // kUnbound: the first unbound symbol
  std::span<const int64_t> dims;
  uint64_t elems = 0;
  uint64_t bytes = 0;

  int64_t Rank() const { return static_cast<int64_t>(dims.size()); }
  // Dim i, counted from the end when negative (-1 is the last dim); 1 for a missing dim.
  uint64_t Dim(int64_t i) const {
    const int64_t r = Rank();
    const int64_t k = i < 0 ? r + i : i;
    return k >= 0 && k < r ? static_cast<uint64_t>(dims[k]) : 1;
  }
  uint64_t Last() const { return Dim(-1); }
  // Elements per last-dim row: all dims but the last multiplied.
  uint64_t Rows() const { return Last() == 0 ? 0 : elems / Last(); }
  bool IsWeight() const { return role == ir::Role::kWeight || role == ir::Role::kConstant; }
};

// Evaluates one tensor's dims into `dims` (its rank long) and its exact byte size under `b`.
// An unbound symbol or a block mismatch that appears only after binding marks the tensor
// (the nodes using it are not costed); negative, inexact or overflowing dims and block
// mismatches on concrete shapes are errors naming the tensor. Shared by the ledger and the
// sweep's per-node evaluator.
Result<void> ResolveTensor(const ir::Graph& g, const ir::Tensor& t, const expr::Bindings& b,
                           std::span<int64_t> dims, ResolvedTensor& r);

}  // namespace opscope::cost
