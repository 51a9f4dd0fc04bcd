// Op-kind lookup, attribute access and structural validation of graphs.
#include "ir/graph.h"

#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include "support/name_index.h"

namespace opscope::ir {

std::optional<OpKind> ParseOpKind(std::string_view name) {
  static const auto* const kByName = [] {
    auto* m = new std::unordered_map<std::string_view, OpKind>();
    for (int i = 0; i < kNumOpKinds; ++i) m->emplace(kOpKinds[i].name, static_cast<OpKind>(i));
    return m;
  }();
  auto it = kByName->find(name);
  if (it == kByName->end()) return std::nullopt;
  return it->second;
}

bool IsMmaFamily(OpFamily f) {
  switch (f) {
    case OpFamily::kMatMul:
    case OpFamily::kExperts:
    case OpFamily::kConv:
    case OpFamily::kConvTranspose:
    case OpFamily::kEinsum:
    case OpFamily::kPagedAttention:
    case OpFamily::kAttention:
    case OpFamily::kRnn:
    case OpFamily::kIndexer:
      return true;
    default:
      return false;
  }
}

std::string_view RoleName(Role r) {
  switch (r) {
    case Role::kActivation: return "activation";
    case Role::kInput: return "input";
    case Role::kOutput: return "output";
    case Role::kWeight: return "weight";
    case Role::kConstant: return "constant";
    case Role::kState: return "state";
  }
  return "activation";
}

std::optional<Role> ParseRole(std::string_view name) {
  for (Role r : {Role::kActivation, Role::kInput, Role::kOutput, Role::kWeight,
                 Role::kConstant, Role::kState}) {
    if (RoleName(r) == name) return r;
  }
  return std::nullopt;
}

const AttrValue* Node::FindAttr(std::string_view key) const {
  for (const auto& [k, v] : attrs) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::optional<int64_t> Node::IntAttr(std::string_view key) const {
  const AttrValue* v = FindAttr(key);
  if (v == nullptr) return std::nullopt;
  if (const auto* i = std::get_if<int64_t>(v)) return *i;
  // JSON writers may spell an integer as 8.0; an integral float is that integer.
  if (const auto* d = std::get_if<double>(v)) {
    if (*d == std::floor(*d) && std::fabs(*d) < 9.0e15) return static_cast<int64_t>(*d);
  }
  return std::nullopt;
}

std::optional<std::string_view> Node::StringAttr(std::string_view key) const {
  const AttrValue* v = FindAttr(key);
  if (v == nullptr) return std::nullopt;
  if (const auto* s = std::get_if<std::string>(v)) return std::string_view(*s);
  return std::nullopt;
}

const std::vector<int64_t>* Node::IntsAttr(std::string_view key) const {
  const AttrValue* v = FindAttr(key);
  return v == nullptr ? nullptr : std::get_if<std::vector<int64_t>>(v);
}

std::optional<int64_t> Graph::Dim(std::string_view symbol) const {
  auto id = symbols.Find(symbol);
  if (!id) return std::nullopt;
  for (const auto& [sym, value] : dims) {
    if (sym == *id) return value;
  }
  return std::nullopt;
}

Result<void> Validate(const Graph& g, bool check_names) {
  if (check_names) {
    auto tensor_name = [&g](uint32_t id) -> std::string_view { return g.tensors[id].name; };
    NameIndex<decltype(tensor_name)> names(tensor_name, g.tensors.size());
    for (TensorId i = 0; i < g.tensors.size(); ++i) {
      if (names.InsertOrFind(g.tensors[i].name, i)) {
        return MakeError("duplicate tensor name '" + g.tensors[i].name + "'");
      }
    }
  }
  auto node_name = [&g](uint32_t id) -> std::string_view { return g.nodes[id].name; };
  NameIndex<decltype(node_name)> node_names(node_name, check_names ? g.nodes.size() : 0);
  constexpr NodeId kNone = UINT32_MAX;
  std::vector<NodeId> producer(g.tensors.size(), kNone);
  for (NodeId i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    // Built only for a message: a million-node graph must not pay a million strings.
    auto where = [&n] { return "node '" + n.name + "'"; };
    if (check_names && node_names.InsertOrFind(n.name, i)) {
      return MakeError("duplicate node name '" + n.name + "'");
    }
    for (TensorId t : n.outputs) {
      if (t >= g.tensors.size()) return MakeError(where() + ": output id out of range");
      const Tensor& out = g.tensors[t];
      if (IsLeaf(out.role)) {
        return MakeError(where() + ": writes '" + out.name + "', which is a " +
                         std::string(RoleName(out.role)) + " and cannot be produced by a node");
      }
      if (out.role != Role::kState && producer[t] != kNone) {
        return MakeError(where() + ": tensor '" + out.name + "' is already produced by node '" +
                         g.nodes[producer[t]].name + "'");
      }
      if (producer[t] == kNone) producer[t] = i;
    }
    if (n.cost_twin >= 0) {
      if (static_cast<NodeId>(n.cost_twin) >= i || g.nodes[n.cost_twin].op != n.op) {
        return MakeError(where() + ": cost twin must be an earlier node of the same op");
      }
    }
  }
  // Inputs: a non-leaf, non-state tensor must be produced by an earlier node.
  for (NodeId i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    for (TensorId t : n.inputs) {
      if (t >= g.tensors.size()) return MakeError("node '" + n.name + "': input id out of range");
      const Tensor& in = g.tensors[t];
      if (IsLeaf(in.role) || in.role == Role::kState) continue;
      if (producer[t] == kNone) {
        return MakeError("node '" + n.name + "': input '" + in.name +
                         "' is not produced by any node (declare it with role input, weight, "
                         "constant or state)");
      }
      if (producer[t] >= i) {
        return MakeError("node '" + n.name + "': input '" + in.name + "' is produced by node '" +
                         g.nodes[producer[t]].name + "', which comes later (nodes must be in "
                         "topological order)");
      }
    }
  }
  return {};
}

std::vector<TensorId> GraphOutputs(const Graph& g) {
  std::vector<TensorId> outputs;
  for (TensorId t = 0; t < g.tensors.size(); ++t) {
    if (g.tensors[t].role == Role::kOutput) outputs.push_back(t);
  }
  if (!outputs.empty()) return outputs;
  std::vector<uint8_t> produced(g.tensors.size(), 0), consumed(g.tensors.size(), 0);
  for (const Node& n : g.nodes) {
    for (TensorId t : n.outputs) produced[t] = 1;
    for (TensorId t : n.inputs) consumed[t] = 1;
  }
  for (TensorId t = 0; t < g.tensors.size(); ++t) {
    if (produced[t] && !consumed[t] && g.tensors[t].role != Role::kState) outputs.push_back(t);
  }
  return outputs;
}

}  // namespace opscope::ir
