// Tensors with their shapes evaluated under one set of bindings: what a cost rule reads.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "format/format.h"
#include "ir/graph.h"

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

}  // namespace opscope::cost
