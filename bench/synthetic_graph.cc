// The chain: per block of five nodes, norm → up projection → SwiGLU → down projection →
// residual add, each Linear reading its own [rows, 256] bf16 weight.
#include "bench/synthetic_graph.h"

#include <string>

namespace opscope::bench {
namespace {

constexpr int kHidden = 256;
constexpr int kInter = 512;

struct NodeSpec {
  const char* op;
  int weight_rows;  // 0: no weight
  int weight_cols;
  int out_cols;
};

// Block position i % 5.
constexpr NodeSpec kBlock[5] = {
    {"RMSNorm", 0, 0, kHidden},
    {"Linear", 2 * kInter, kHidden, 2 * kInter},
    {"SiluMul", 0, 0, kInter},
    {"Linear", kHidden, kInter, kHidden},
    {"Add", 0, 0, kHidden},
};

}  // namespace

ir::Graph MakeChainGraph(size_t nodes) {
  ir::Graph g;
  g.name = "chain";
  const expr::Expr n = expr::Expr::Symbol(g.symbols.Intern("n"));
  g.tensors.reserve(2 * nodes + 1);
  g.nodes.reserve(nodes);
  ir::TensorId prev = g.AddTensor({"x", {n, expr::Expr::Constant(kHidden)},
                                   format::Format::kBf16, ir::Role::kInput});
  ir::TensorId resid = prev;
  for (size_t i = 0; i < nodes; ++i) {
    const NodeSpec& s = kBlock[i % 5];
    ir::Node node;
    node.name = "n" + std::to_string(i);
    node.op = *ir::ParseOpKind(s.op);
    node.inputs.push_back(prev);
    if (s.weight_rows > 0) {
      node.inputs.push_back(g.AddTensor(
          {"w" + std::to_string(i),
           {expr::Expr::Constant(s.weight_rows), expr::Expr::Constant(s.weight_cols)},
           format::Format::kBf16, ir::Role::kWeight}));
    }
    if (i % 5 == 4) node.inputs.push_back(resid);
    const ir::TensorId out = g.AddTensor({"t" + std::to_string(i),
                                          {n, expr::Expr::Constant(s.out_cols)},
                                          format::Format::kBf16, ir::Role::kActivation});
    node.outputs.push_back(out);
    g.AddNode(std::move(node));
    prev = out;
    if (i % 5 == 4) resid = out;
  }
  return g;
}

std::string MakeChainGraphJson(size_t nodes) {
  std::string tensors = "{\"name\":\"x\",\"shape\":[\"n\"," + std::to_string(kHidden) +
                        "],\"format\":\"bf16\",\"role\":\"input\"}";
  std::string node_text;
  std::string prev = "x", resid = "x";
  for (size_t i = 0; i < nodes; ++i) {
    const NodeSpec& s = kBlock[i % 5];
    const std::string id = std::to_string(i);
    std::string inputs = "\"" + prev + "\"";
    if (s.weight_rows > 0) {
      tensors += ",\n{\"name\":\"w" + id + "\",\"shape\":[" + std::to_string(s.weight_rows) + "," +
                 std::to_string(s.weight_cols) + "],\"format\":\"bf16\",\"role\":\"weight\"}";
      inputs += ",\"w" + id + "\"";
    }
    if (i % 5 == 4) inputs += ",\"" + resid + "\"";
    tensors += ",\n{\"name\":\"t" + id + "\",\"shape\":[\"n\"," + std::to_string(s.out_cols) +
               "],\"format\":\"bf16\"}";
    node_text += std::string(i ? ",\n" : "") + "{\"name\":\"n" + id + "\",\"op\":\"" + s.op +
                 "\",\"inputs\":[" + inputs + "],\"outputs\":[\"t" + id + "\"]}";
    prev = "t" + id;
    if (i % 5 == 4) resid = prev;
  }
  return "{\"name\":\"chain\",\"dims\":{\"n\":1},\"tensors\":[\n" + tensors + "],\n\"nodes\":[\n" +
         node_text + "]}\n";
}

}  // namespace opscope::bench
