// The IR every importer produces and every analysis reads: tensors with symbolic shapes,
// formats and roles; nodes of a closed list of op kinds, in topological order.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "expr/expr.h"
#include "format/format.h"
#include "support/error.h"

namespace opscope::ir {

enum class OpKind : uint16_t {
#define OPSCOPE_OP(kind, family) k##kind,
#include "ir/op_kinds.def"
#undef OPSCOPE_OP
};

enum class OpFamily : uint8_t {
  kMatMul, kExperts, kConv, kConvTranspose, kEinsum, kPagedAttention, kAttention,
  kRecurrence, kCausalConv1d, kRnn, kRope, kNorm, kBatchNorm, kElementwise, kReduction, kPool,
  kNoFlopModel, kEmbedding, kGather, kCopy, kSplit, kView, kShapeOnly, kControlFlow,
  kCollective, kUnknown, kIndexer,
};

struct OpKindInfo {
  std::string_view name;
  OpFamily family;
};

inline constexpr OpKindInfo kOpKinds[] = {
#define OPSCOPE_OP(kind, family) {#kind, OpFamily::family},
#include "ir/op_kinds.def"
#undef OPSCOPE_OP
};
inline constexpr int kNumOpKinds = static_cast<int>(sizeof(kOpKinds) / sizeof(kOpKinds[0]));
static_assert(kNumOpKinds == static_cast<int>(OpKind::kUnknown) + 1,
              "op_kinds.def and OpKind must have the same rows");

inline std::string_view OpName(OpKind k) { return kOpKinds[static_cast<int>(k)].name; }
inline OpFamily Family(OpKind k) { return kOpKinds[static_cast<int>(k)].family; }
// The kind with this exact name; std::nullopt for a name outside the list ("Unknown" itself
// is a valid name).
std::optional<OpKind> ParseOpKind(std::string_view name);
// Matrix and attention ops run on the MMA (tensor) units; everything else on vector units.
bool IsMmaFamily(OpFamily f);

enum class Role : uint8_t { kActivation, kInput, kOutput, kWeight, kConstant, kState };
std::string_view RoleName(Role r);
std::optional<Role> ParseRole(std::string_view name);
// Leaves exist before the step: graph inputs, weights, constants (state persists too).
inline bool IsLeaf(Role r) {
  return r == Role::kInput || r == Role::kWeight || r == Role::kConstant;
}

using TensorId = uint32_t;
using NodeId = uint32_t;

struct Tensor {
  std::string name;
  std::vector<expr::Expr> shape;
  format::Format format = format::Format::kF32;
  Role role = Role::kActivation;
};

using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>>;

// Linear nodes with the same value of this attribute that read the same input tensor are one
// GEMM in the engines (their weights concatenated along the output): costed per node, timed
// by engine profiles as one call (predict::StepPredictor). Set by the step-graph builder.
inline constexpr std::string_view kGemmGroupAttr = "gemm_group";

// The part of a mixture-of-experts layer's fused expert call a node is, beside the two grouped
// GEMMs (ExpertGateUp, ExpertDown): the engines' fused MoE kernels run some of these inside
// that call, and an engine profile whose grouped-GEMM parameters were fitted to whole calls
// names the parts its call includes (predict::EngineProfile::moe_call). Set by the step-graph
// builder; the router GEMM and shared experts are never part of the call.
inline constexpr std::string_view kMoePartAttr = "moe_part";
inline constexpr const char* kMoePartRouting = "routing";        // score function and top-k
inline constexpr const char* kMoePartPermute = "permute";        // each expert's rows gathered
inline constexpr const char* kMoePartActivation = "activation";  // between the grouped GEMMs
inline constexpr const char* kMoePartCombine = "combine";        // weighted sum of top_k outputs
inline constexpr std::array<std::string_view, 4> kMoeParts = {
    kMoePartRouting, kMoePartPermute, kMoePartActivation, kMoePartCombine};

struct Node {
  std::string name;
  OpKind op = OpKind::kUnknown;
  std::string source_op;  // the importer's original op name ("com.microsoft.FastGelu")
  std::vector<TensorId> inputs;
  std::vector<TensorId> outputs;
  std::vector<std::pair<std::string, AttrValue>> attrs;
  // An earlier node whose cost this one shares exactly (same op, attrs, shapes, formats and
  // roles), set by importers that stamp out identical layers; the ledger copies that cost
  // instead of recomputing it. -1 for none.
  int32_t cost_twin = -1;
  // How many times the node runs in the step (a loop body's constant trip count); its bytes
  // and FLOPs are multiplied by it. Weights still count once in the fused floor.
  uint64_t repeat = 1;

  const AttrValue* FindAttr(std::string_view key) const;
  std::optional<int64_t> IntAttr(std::string_view key) const;
  std::optional<std::string_view> StringAttr(std::string_view key) const;
  const std::vector<int64_t>* IntsAttr(std::string_view key) const;
};

// An If branch the importer did not take (its condition is known): neither imported nor
// costed. `nodes` counts the branch's nodes in the file (nested subgraphs included,
// Constant nodes excluded).
struct NotTaken {
  std::string node;    // the If node
  std::string branch;  // "then" | "else"
  uint64_t nodes = 0;
};

struct Graph {
  std::string name;
  expr::SymbolTable symbols;
  std::vector<std::pair<expr::SymbolId, int64_t>> dims;  // the model's own fixed dims
  std::vector<Tensor> tensors;
  std::vector<Node> nodes;
  // What the importer assumed (reported with the analysis), e.g. "no torch_dtype: bf16".
  std::vector<std::string> assumptions;
  // What makes the analysis incomplete and what to pass to fix it (an If whose condition
  // depends on an input given no value), reported on stderr and in JSON `warnings`.
  std::vector<std::string> warnings;
  std::vector<NotTaken> not_taken;

  TensorId AddTensor(Tensor t) {
    tensors.push_back(std::move(t));
    return static_cast<TensorId>(tensors.size() - 1);
  }
  NodeId AddNode(Node n) {
    nodes.push_back(std::move(n));
    return static_cast<NodeId>(nodes.size() - 1);
  }
  std::optional<int64_t> Dim(std::string_view symbol) const;
};

// Structural checks every importer's graph must pass (importers also check their own syntax):
// unique tensor and node names, ids in range, every non-leaf tensor a node reads is produced by
// exactly one earlier node, leaves never produced, cost twins point backwards at the same op.
// Errors name the node and tensor. Importers that already rejected duplicate names while
// reading (the graph JSON reader) may skip that pass with check_names = false.
Result<void> Validate(const Graph& g, bool check_names = true);

// Graph outputs: tensors with role output, or else those produced and never consumed.
std::vector<TensorId> GraphOutputs(const Graph& g);

}  // namespace opscope::ir
