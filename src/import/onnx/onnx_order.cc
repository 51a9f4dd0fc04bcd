// Stable topological sort of ONNX nodes (see onnx_order.h): Kahn's algorithm, always taking
// the ready node that comes first in the file, which keeps ties in file order and leaves an
// already sorted graph untouched.
#include "import/onnx/onnx_order.h"

#include <functional>
#include <queue>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace opscope::import::onnx_order {
namespace {

using Producers = std::unordered_map<std::string_view, int>;

std::string Label(const onnx::NodeProto& n, int index) {
  const std::string name = n.name().empty() ? n.op_type() + "_" + std::to_string(index) : n.name();
  return "node '" + name + "' (" + (n.domain().empty() ? "" : n.domain() + ".") + n.op_type() + ")";
}

// Names a graph reads from the scopes around it: what its nodes (and their subgraphs) read
// minus what it defines itself (inputs, initializers, node outputs).
void FreeNames(const onnx::GraphProto& g, std::vector<std::string_view>& out) {
  std::unordered_set<std::string_view> defined;
  for (const auto& vi : g.input()) defined.insert(vi.name());
  for (const auto& t : g.initializer()) defined.insert(t.name());
  for (const auto& t : g.sparse_initializer()) defined.insert(t.values().name());
  for (const auto& n : g.node()) {
    for (const auto& o : n.output()) defined.insert(o);
  }
  std::vector<std::string_view> read;
  for (const auto& n : g.node()) {
    for (const auto& in : n.input()) read.push_back(in);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) FreeNames(a.g(), read);
      for (const auto& sub : a.graphs()) FreeNames(sub, read);
    }
  }
  for (std::string_view name : read) {
    if (!name.empty() && !defined.contains(name)) out.push_back(name);
  }
}

bool HasSubgraph(const onnx::NodeProto& n) {
  for (const auto& a : n.attribute()) {
    if (a.has_g() || a.graphs_size() > 0) return true;
  }
  return false;
}

// Calls `f` with every name node `n` reads: its inputs, then the outer names its subgraphs read.
template <typename F>
void ForEachRead(const onnx::NodeProto& n, F f) {
  for (const auto& in : n.input()) f(std::string_view(in));
  if (!HasSubgraph(n)) return;
  std::vector<std::string_view> outer;
  for (const auto& a : n.attribute()) {
    if (a.has_g()) FreeNames(a.g(), outer);
    for (const auto& sub : a.graphs()) FreeNames(sub, outer);
  }
  for (std::string_view name : outer) f(name);
}

// Per node, the distinct nodes it depends on (with the name that links them).
struct Dep {
  int node;
  std::string_view via;
};

std::vector<std::vector<Dep>> Dependencies(const onnx::GraphProto& g, const Producers& producers) {
  std::vector<std::vector<Dep>> deps(static_cast<size_t>(g.node_size()));
  for (int i = 0; i < g.node_size(); ++i) {
    auto& mine = deps[static_cast<size_t>(i)];
    ForEachRead(g.node(i), [&](std::string_view name) {
      auto it = producers.find(name);
      if (it == producers.end()) return;  // a graph input, initializer or outer name
      for (const Dep& d : mine) {
        if (d.node == it->second) return;
      }
      mine.push_back({it->second, name});
    });
  }
  return deps;
}

// True when every node comes after the producers of what it reads (the common case, checked
// without building the dependency lists).
bool InOrder(const onnx::GraphProto& g, const Producers& producers) {
  bool sorted = true;
  for (int i = 0; i < g.node_size() && sorted; ++i) {
    ForEachRead(g.node(i), [&](std::string_view name) {
      auto it = producers.find(name);
      if (it != producers.end() && it->second >= i) sorted = false;
    });
  }
  return sorted;
}

// Among the nodes Kahn's algorithm could not take, walks dependencies from the first one
// until a node repeats: that node is on a cycle, which the error spells out.
std::unexpected<Error> CycleError(const onnx::GraphProto& g, const std::vector<std::vector<Dep>>& deps,
                                  const std::vector<int>& waiting) {
  int start = 0;
  while (waiting[static_cast<size_t>(start)] == 0) ++start;
  std::vector<int> path;
  std::vector<std::string_view> via;
  std::unordered_map<int, size_t> at;
  int cur = start;
  while (!at.contains(cur)) {
    at[cur] = path.size();
    path.push_back(cur);
    for (const Dep& d : deps[static_cast<size_t>(cur)]) {
      if (waiting[static_cast<size_t>(d.node)] > 0) {
        via.push_back(d.via);
        cur = d.node;
        break;
      }
    }
  }
  const size_t first = at[cur];
  std::string text = Label(g.node(cur), cur) + " is on a cycle: it reads '" +
                     std::string(via[first]) + "'";
  for (size_t k = first + 1; k < path.size(); ++k) {
    const onnx::NodeProto& n = g.node(path[k]);
    text += ", written by '" + (n.name().empty() ? n.op_type() + "_" + std::to_string(path[k]) : n.name()) +
            "', which reads '" + std::string(via[k]) + "'";
  }
  text += ", written by the node itself";
  return MakeError(text);
}

// The stable order of g's nodes; empty when they are already in order (or cannot be ordered
// because two nodes write one name, which the importer reports).
Result<std::vector<int>> Order(const onnx::GraphProto& g) {
  Producers producers;
  for (int i = 0; i < g.node_size(); ++i) {
    for (const auto& o : g.node(i).output()) {
      if (!o.empty() && !producers.emplace(o, i).second) return std::vector<int>{};
    }
  }
  if (InOrder(g, producers)) return std::vector<int>{};
  const auto deps = Dependencies(g, producers);
  const auto n = static_cast<size_t>(g.node_size());
  std::vector<int> waiting(n, 0);
  std::vector<std::vector<int>> consumers(n);
  for (size_t i = 0; i < n; ++i) {
    waiting[i] = static_cast<int>(deps[i].size());
    for (const Dep& d : deps[i]) consumers[static_cast<size_t>(d.node)].push_back(static_cast<int>(i));
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (size_t i = 0; i < n; ++i) {
    if (waiting[i] == 0) ready.push(static_cast<int>(i));
  }
  std::vector<int> order;
  order.reserve(n);
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int c : consumers[static_cast<size_t>(i)]) {
      if (--waiting[static_cast<size_t>(c)] == 0) ready.push(c);
    }
  }
  if (order.size() != n) return CycleError(g, deps, waiting);
  return order;
}

}  // namespace

Result<void> SortNodes(onnx::GraphProto& g) {
  auto order = Order(g);
  if (!order) return std::unexpected(order.error());
  if (!order->empty()) {
    auto* nodes = g.mutable_node();
    for (int i = 0; i < nodes->size(); ++i) {
      onnx::NodeProto* n = nodes->Mutable(i);
      if (n->name().empty()) n->set_name(n->op_type() + "_" + std::to_string(i));
    }
    std::vector<onnx::NodeProto*> owned(static_cast<size_t>(nodes->size()));
    nodes->ExtractSubrange(0, nodes->size(), owned.data());
    for (int i : *order) nodes->AddAllocated(owned[static_cast<size_t>(i)]);
  }
  for (auto& n : *g.mutable_node()) {
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) {
        if (auto ok = SortNodes(*a.mutable_g()); !ok) return ok;
      }
      for (auto& sub : *a.mutable_graphs()) {
        if (auto ok = SortNodes(sub); !ok) return ok;
      }
    }
  }
  return {};
}

}  // namespace opscope::import::onnx_order
