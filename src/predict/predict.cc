// Per-node and per-step predictions (see predict.h).
#include "predict/predict.h"

#include <algorithm>
#include <cmath>

#include "cost/expert_balance.h"
#include "format/format.h"

namespace opscope::predict {

using format::Format;
using format::MmaClass;
using ir::OpFamily;
using ir::OpKind;

namespace {

// A paged-attention step with at most this many new query rows per sequence after a cached
// context runs the decode kernel (engines verify speculative tokens with it); more rows, or
// any prompt with nothing cached yet, run the prefill kernel.
constexpr double kDecodeMaxQueryRows = 16;

// "a, b and c".
std::string Joined(const std::vector<std::string>& items) {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) s += i + 1 == items.size() ? " and " : ", ";
    s += items[i];
  }
  return s;
}

// Where a class missing from a profile borrows its parameters: the nearest kernel of the
// same shape family, and the memory class for everything memory-bound.
KernelClass FallbackClass(KernelClass c) {
  switch (c) {
    case KernelClass::kGroupedGemm: return KernelClass::kGemm;
    case KernelClass::kMlaDecode: return KernelClass::kAttentionDecode;
    case KernelClass::kMlaPrefill: return KernelClass::kAttentionPrefill;
    case KernelClass::kAttentionDecode: return KernelClass::kMemory;
    case KernelClass::kAttentionPrefill: return KernelClass::kGemm;
    default: return KernelClass::kNone;
  }
}

}  // namespace

KernelClass ClassOfOp(OpKind op) {
  switch (op) {
    case OpKind::kAllReduce: return KernelClass::kAllReduce;
    case OpKind::kAllGather: return KernelClass::kAllGather;
    case OpKind::kReduceScatter: return KernelClass::kReduceScatter;
    case OpKind::kAllToAll: return KernelClass::kAllToAll;
    case OpKind::kSendRecv: return KernelClass::kSendRecv;
    default: break;
  }
  switch (ir::Family(op)) {
    case OpFamily::kMatMul:
    case OpFamily::kConv:
    case OpFamily::kConvTranspose:
    case OpFamily::kEinsum: return KernelClass::kGemm;
    case OpFamily::kExperts: return KernelClass::kGroupedGemm;
    case OpFamily::kPagedAttention: return KernelClass::kAttentionDecode;  // or prefill, by shape
    case OpFamily::kAttention: return KernelClass::kAttentionPrefill;
    case OpFamily::kView:
    case OpFamily::kShapeOnly: return KernelClass::kNone;
    default: return KernelClass::kMemory;
  }
}

std::string GemmVariant(Format activation, Format weight) {
  const format::FormatInfo& a = format::Info(activation);
  const format::FormatInfo& w = format::Info(weight);
  MmaClass cls = a.mma;
  // A plain float weight wider than the activation widens the class (as the ledger does).
  if (w.kind == format::Kind::kFloat && format::MmaClassBits(w.mma) > format::MmaClassBits(cls)) {
    cls = w.mma;
  }
  switch (cls) {
    case MmaClass::kFp4: return "fp4";
    case MmaClass::kFp8:
      if (w.bits <= 4) return "w4a8";
      return w.block_rows > 1 || a.block == 128 ? "fp8_block" : "fp8";
    case MmaClass::kInt8: return "int8";
    case MmaClass::kFp64:
    case MmaClass::kFp32:
    case MmaClass::kTf32:
    case MmaClass::kFp16:
    case MmaClass::kBf16:
    case MmaClass::kNone: break;
  }
  // Wide activations: weight-only quantization first (GGUF, int4 groups, fp4 or fp8 weights
  // under 16-bit activations), then the activation's own type.
  if (w.bits <= 4) return "w4a16";
  if (w.bits <= 8) return "w8a16";
  if (cls == MmaClass::kFp16) return "fp16";
  if (cls == MmaClass::kBf16) return "bf16";
  return "fp32";
}

std::string AttentionVariant(Format kv_cache) {
  return format::Info(kv_cache).bits <= 8 ? "fp8_kv" : "bf16";
}

// What Compile fixes per node.
struct StepPredictor::Node {
  KernelClass cls = KernelClass::kNone;
  std::string variant;
  const KernelParams* params = nullptr;          // MMA and memory classes; attention: decode
  const KernelParams* prefill_params = nullptr;  // paged attention: the prefill kernel
  std::vector<const CollectiveParams*> algorithms;
  bool roofline = false;  // predicted at its roofline time (transparent, fused, no parameters)
  bool fused = false;     // fused into a neighbour: no kernel of its own
  // A GEMM group (ir::kGemmGroupAttr) runs as one call of the members' summed width N: each
  // member is timed as that call, its inputs' bytes and FLOPs scaled by `group_scale` = N / n,
  // and keeps n / N = 1 / group_scale of its time; the members after the first launch none.
  double group_scale = 1;
  bool group_follower = false;
  bool mla = false;
  // Shape sources: gemm: the output; experts: x and w; attention: q and its cache.
  ir::TensorId main = 0, second = 0;
  int64_t heads = 0, window = 0, top_k = 0, experts_total = 0, busiest_of = 1;
  int64_t latent = 0, rope = 0, nope = 0, v_dim = 0;  // MLA dims
  bool causal = true;
};

StepPredictor::StepPredictor(const ir::Graph& graph, const EngineProfile& profile)
    : graph_(graph), profile_(profile), fp16_mma_(profile.defaults.mma_16bit == "fp16") {}
StepPredictor::~StepPredictor() = default;

Result<std::unique_ptr<StepPredictor>> StepPredictor::Compile(const ir::Graph& graph,
                                                              const device::Device& device,
                                                              const EngineProfile& profile) {
  std::unique_ptr<StepPredictor> p(new StepPredictor(graph, profile));
  if (auto ok = p->Build(device); !ok) return std::unexpected(ok.error());
  return p;
}

namespace {

// Parameters for (cls, variant) following the variant chain, then the class chain; records
// what was substituted in `notes` (once per substitution).
const KernelParams* Lookup(const DeviceProfile& d, KernelClass cls, const std::string& variant,
                           const std::string& label, std::vector<std::string>& notes) {
  for (KernelClass c = cls; c != KernelClass::kNone; c = FallbackClass(c)) {
    const std::string want = c == KernelClass::kMemory ? "default" : variant;
    const KernelParams* k = d.Find(c, want);
    if (k == nullptr && c == KernelClass::kMemory) k = d.Find(c, "bf16");
    if (k == nullptr) continue;
    if (c != cls || k->variant != want) {
      std::string note = label + ": no " + std::string(KernelClassName(cls)) + " parameters for "
                         "variant '" + variant + "', predicted with " +
                         std::string(KernelClassName(c)) + " '" + k->variant + "'";
      if (std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(note);
    }
    return k;
  }
  std::string note = label + ": no " + std::string(KernelClassName(cls)) +
                     " parameters at all: predicted at the roofline";
  if (std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(note);
  return nullptr;
}

}  // namespace

// The workload-independent part of a node: its class, variant and where its shape comes from.
void StepPredictor::FillShapeSources(size_t i) {
  const ir::Node& gn = graph_.nodes[i];
  Node& n = nodes_[i];
  n.cls = ClassOfOp(gn.op);
  switch (Info(n.cls).kind) {
    case KernelKind::kNoKernel: return;
    case KernelKind::kLink:
    case KernelKind::kMemory: n.variant = "default"; return;
    case KernelKind::kMma: break;
  }
  if (gn.inputs.empty() || gn.outputs.empty()) {
    n.heads = -1;
    return;
  }
  const ir::Tensor& a = graph_.tensors[gn.inputs[0]];
  if (ir::Family(gn.op) == OpFamily::kPagedAttention) {
    n.main = gn.inputs[0];
    n.second = gn.inputs[0];
    for (size_t k = 1; k < gn.inputs.size(); ++k) {
      if (graph_.tensors[gn.inputs[k]].role == ir::Role::kState) {
        n.second = gn.inputs[k];
        break;
      }
    }
    n.mla = gn.FindAttr("kv_lora_rank") != nullptr;
    n.latent = gn.IntAttr("kv_lora_rank").value_or(0);
    n.rope = gn.IntAttr("qk_rope_head_dim").value_or(0);
    n.nope = gn.IntAttr("qk_nope_head_dim").value_or(0);
    n.v_dim = gn.IntAttr("v_head_dim").value_or(0);
    n.heads = gn.IntAttr("q_heads").value_or(0);
    n.window = gn.IntAttr("window").value_or(0);
    n.causal = gn.IntAttr("causal").value_or(1) != 0;
    n.variant = AttentionVariant(graph_.tensors[n.second].format);
    return;
  }
  const ir::Tensor& b = gn.inputs.size() > 1 ? graph_.tensors[gn.inputs[1]] : a;
  n.variant = GemmVariant(a.format, b.format);
  if (n.cls == KernelClass::kGroupedGemm) {
    n.main = gn.inputs[0];
    n.second = gn.inputs.size() > 1 ? gn.inputs[1] : gn.inputs[0];
    n.top_k = gn.IntAttr("top_k").value_or(graph_.Dim("top_k").value_or(0));
    n.experts_total = gn.IntAttr("experts_total").value_or(0);
    n.busiest_of = std::max<int64_t>(1, gn.IntAttr("busiest_of").value_or(1));
  } else if (n.cls == KernelClass::kGemm && ir::Family(gn.op) == OpFamily::kMatMul) {
    n.main = gn.outputs[0];
    n.second = gn.inputs[0];
  } else {
    n.main = gn.outputs[0];
    n.heads = -1;  // no shape model (Conv, Einsum, SDPA): no tile or wave quantization
  }
}

// A part of the fused MoE call whose time the fitted grouped_gemm parameters already hold: it
// is predicted at its roofline so that time is not counted twice, and stays a kernel of its own
// (the call launches it: an eager step's CPU issues it like any other).
bool StepPredictor::InsideMoeCall(const ir::Node& n) const {
  const auto part = n.StringAttr(ir::kMoePartAttr);
  const auto& parts = profile_.moe_call.parts;
  return part && moe_call_fitted_ && std::find(parts.begin(), parts.end(), *part) != parts.end();
}

// The profile's parameters for a node, with fallbacks noted.
void StepPredictor::FillParams(size_t i, const std::string& label) {
  const ir::Node& gn = graph_.nodes[i];
  Node& n = nodes_[i];
  if (profile_.transparent) {
    n.roofline = true;
    return;
  }
  const std::string op(ir::OpName(gn.op));
  if (std::find(profile_.fused_ops.begin(), profile_.fused_ops.end(), op) !=
      profile_.fused_ops.end()) {
    n.roofline = n.fused = true;
    return;
  }
  if (InsideMoeCall(gn)) {
    n.roofline = true;
    return;
  }
  switch (Info(n.cls).kind) {
    case KernelKind::kNoKernel: return;
    case KernelKind::kLink: FillCollectives(n, label); return;
    case KernelKind::kMemory:
    case KernelKind::kMma: break;
  }
  if (n.heads < 0 && Info(n.cls).kind == KernelKind::kMma && gn.inputs.empty()) {
    n.roofline = true;
    return;
  }
  if (ir::Family(gn.op) == OpFamily::kPagedAttention) {
    const KernelClass decode = n.mla ? KernelClass::kMlaDecode : KernelClass::kAttentionDecode;
    const KernelClass prefill = n.mla ? KernelClass::kMlaPrefill : KernelClass::kAttentionPrefill;
    n.params = Lookup(*device_profile_, decode, n.variant, label, notes_);
    n.prefill_params = Lookup(*device_profile_, prefill, n.variant, label, notes_);
    n.roofline = n.params == nullptr || n.prefill_params == nullptr;
    return;
  }
  n.params = Lookup(*device_profile_, n.cls, n.variant, label, notes_);
  n.roofline = n.params == nullptr;
}

// The collective's algorithms; a class without any borrows the all-reduce ring (the same
// link), said in a note.
void StepPredictor::FillCollectives(Node& n, const std::string& label) {
  for (const CollectiveParams& c : device_profile_->collectives) {
    // NVLS needs the NVLink switches of the device it was fitted on (DeviceProfile::
    // nccl_nvls): a family member served through applies_to takes the other algorithms.
    if (c.algorithm == Algorithm::kNvls && !own_device_) continue;
    if (c.cls == n.cls) n.algorithms.push_back(&c);
  }
  if (!n.algorithms.empty()) return;
  for (const CollectiveParams& c : device_profile_->collectives) {
    if (c.cls == KernelClass::kAllReduce && c.algorithm == Algorithm::kRing) {
      n.algorithms.push_back(&c);
    }
  }
  std::string note = label + ": no " + std::string(KernelClassName(n.cls)) + " parameters, " +
                     (n.algorithms.empty() ? "predicted at the roofline"
                                           : "predicted with all_reduce 'ring'");
  if (std::find(notes_.begin(), notes_.end(), note) == notes_.end()) notes_.push_back(note);
}

Result<void> StepPredictor::Build(const device::Device& device) {
  auto entry = FindDeviceProfile(profile_, device);
  if (!entry) return std::unexpected(entry.error());
  device_profile_ = *entry;
  own_device_ = device_profile_->device == device.name;
  rates_ = RatesOf(device);
  const std::string label = "engine '" + profile_.engine + "' on '" + device.name + "'";
  // The grouped_gemm parameters predictions use (the defaults, or a selected alternative's,
  // which SelectImplementation made defaults) were fitted to whole fused-MoE calls.
  moe_call_fitted_ = std::any_of(
      device_profile_->kernels.begin(), device_profile_->kernels.end(), [](const KernelParams& k) {
        return k.cls == KernelClass::kGroupedGemm && k.fit.samples > 0 && k.implementation.empty();
      });
  nodes_.resize(graph_.nodes.size());
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    FillShapeSources(i);
    FillParams(i, label);
  }
  if (std::any_of(graph_.nodes.begin(), graph_.nodes.end(),
                  [&](const ir::Node& n) { return InsideMoeCall(n); })) {
    notes_.push_back(label + ": the fused MoE call's " + Joined(profile_.moe_call.parts) +
                     " are timed inside its fitted grouped GEMMs (those nodes at their roofline)");
  }
  GroupGemms();
  return {};
}

// Members of a GEMM group: GEMM nodes with the same group value reading the same input, timed
// with the same parameters, each of a constant output width n. A group of one stays alone.
void StepPredictor::GroupGemms() {
  struct Key {
    ir::TensorId input;
    int64_t group;
    const KernelParams* params;
    bool operator==(const Key&) const = default;
  };
  std::vector<std::pair<Key, std::vector<size_t>>> groups;
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    const ir::Node& gn = graph_.nodes[i];
    const Node& n = nodes_[i];
    const std::optional<int64_t> group = gn.IntAttr(ir::kGemmGroupAttr);
    if (!group || n.cls != KernelClass::kGemm || n.roofline || n.params == nullptr ||
        gn.inputs.empty() || gn.outputs.empty()) {
      continue;
    }
    const auto& out = graph_.tensors[gn.outputs.front()].shape;
    if (out.empty() || !out.back().IsConstant() || out.back().constant() <= 0) continue;
    const Key key{gn.inputs.front(), *group, n.params};
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const auto& g) { return g.first == key; });
    if (it == groups.end()) {
      groups.push_back({key, {i}});
    } else {
      it->second.push_back(i);
    }
  }
  auto width = [&](size_t i) {
    return static_cast<double>(
        graph_.tensors[graph_.nodes[i].outputs.front()].shape.back().constant());
  };
  for (const auto& [key, members] : groups) {
    if (members.size() < 2) continue;
    double total = 0;
    for (size_t i : members) total += width(i);
    for (size_t j = 0; j < members.size(); ++j) {
      Node& n = nodes_[members[j]];
      n.group_scale = total / width(members[j]);
      n.group_follower = j > 0;
    }
  }
}

namespace {

// Dims of a tensor under the bindings; empty when some dim does not evaluate (the node is
// then not costed, and never timed).
bool EvalDims(const ir::Tensor& t, const expr::Bindings& b, int64_t* dims, size_t max_rank) {
  if (t.shape.size() > max_rank) return false;
  for (size_t i = 0; i < t.shape.size(); ++i) {
    auto v = t.shape[i].Eval(b);
    if (!v) return false;
    dims[i] = *v;
  }
  return true;
}

double Rows(const ir::Tensor& t, const int64_t* dims) {
  double rows = 1;
  for (size_t i = 0; i + 1 < t.shape.size(); ++i) rows *= static_cast<double>(dims[i]);
  return rows;
}

// Routed experts: x [rows, k], w [E, out, k]. Rows are tokens (gate-up) or token·expert rows
// (down), or already this device's routed rows under expert parallelism (experts_total > 0);
// the active experts are E·(1−(1−k/E_total)^T) for the T tokens behind them, as the ledger
// counts them (under expert parallelism the busiest of `busiest_of` devices' count,
// cost::ExpertParallelActive).
void ExpertShape(double rows, double experts, double out, double top_k, double experts_total,
                 int64_t busiest_of, bool down, KernelShape& s) {
  double routed = rows, active = 0;
  if (experts_total > 0) {
    active = cost::ExpertParallelActive(rows, static_cast<uint64_t>(experts),
                                        static_cast<uint64_t>(top_k),
                                        static_cast<uint64_t>(experts_total),
                                        static_cast<uint64_t>(busiest_of));
  } else {
    const double tokens = down ? rows / top_k : rows;
    routed = tokens * top_k;
    active = experts * (1 - std::pow(1 - top_k / experts, tokens));
  }
  if (active <= 0) return;
  s.groups = active;
  s.m = routed / active;
  s.n = out;
}

// Paged attention: q [n, heads·d], cache [seqs, ctx, kv_heads, d]; t new rows per sequence.
struct AttentionDims {
  double seqs, ctx, kv_heads, t, heads, window;
  bool causal;
};

// Decode (a few rows after a cache) or prefill, and the shape its tiles read.
void AttentionShape(const AttentionDims& a, bool mla, KernelInput& in) {
  const double keys = a.window > 0 ? std::min(a.ctx, a.window) : a.ctx;
  if (a.t <= kDecodeMaxQueryRows && a.ctx > 0) {
    in.cls = mla ? KernelClass::kMlaDecode : KernelClass::kAttentionDecode;
    in.shape.m = a.t * a.heads / a.kv_heads;
    in.shape.groups = a.seqs * a.kv_heads;
    in.shape.keys = keys + a.t;
  } else {
    in.cls = mla ? KernelClass::kMlaPrefill : KernelClass::kAttentionPrefill;
    in.shape.m = a.t;
    in.shape.keys = keys;
    in.shape.groups = a.seqs * a.heads;
    in.shape.causal = a.causal;
  }
}

// MLA: the attention's own FLOPs, 2·pairs·seqs·heads·(d_qk + d_v) in the form the ledger chose,
// as a share of the node's; the latent absorb / expand GEMMs beside it are not padded by its
// tiles.
double MlaTiledFraction(const AttentionDims& a, double dims, double flops) {
  const double pairs = a.causal ? a.t * a.ctx + a.t * (a.t + 1) / 2 : a.t * (a.ctx + a.t);
  return std::min(1.0, 2 * pairs * a.seqs * a.heads * dims / flops);
}

}  // namespace

KernelInput StepPredictor::Describe(size_t index, const cost::NodeCost& cost,
                                    const expr::Bindings& b) const {
  const Node& n = nodes_[index];
  const ir::Node& gn = graph_.nodes[index];
  KernelInput in;
  in.cls = n.cls;
  in.variant = n.variant;
  in.bytes = static_cast<double>(cost.bytes());
  in.flops = static_cast<double>(cost.flops);
  in.mma_class = cost.mma_class;
  // An engine that runs 16-bit float matmuls in FP16 (defaults.mma_16bit) gets the fp16 rate.
  if (fp16_mma_ && in.mma_class == MmaClass::kBf16) {
    in.mma_class = MmaClass::kFp16;
  }
  constexpr size_t kMaxRank = 8;
  int64_t d0[kMaxRank] = {}, d1[kMaxRank] = {};
  switch (Info(n.cls).kind) {
    case KernelKind::kLink:
      in.bytes_link = static_cast<double>(cost.bytes_link);
      in.group = gn.IntAttr("group_size").value_or(1);
      in.network = gn.StringAttr("scope") == std::optional<std::string_view>("network");
      return in;
    case KernelKind::kMemory:
    case KernelKind::kNoKernel: return in;
    case KernelKind::kMma: break;
  }
  if (n.heads < 0) return in;  // no shape model
  const ir::Tensor& t0 = graph_.tensors[n.main];
  const ir::Tensor& t1 = graph_.tensors[n.second];
  if (!EvalDims(t0, b, d0, kMaxRank) || !EvalDims(t1, b, d1, kMaxRank)) return in;
  if (n.cls == KernelClass::kGemm) {
    in.shape.m = Rows(t0, d0);
    in.shape.n = t0.shape.empty() ? 0 : static_cast<double>(d0[t0.shape.size() - 1]);
    in.shape.k = t1.shape.empty() ? 0 : static_cast<double>(d1[t1.shape.size() - 1]);
  } else if (n.cls == KernelClass::kGroupedGemm) {
    if (t1.shape.size() == 3 && n.top_k > 0) {
      ExpertShape(Rows(t0, d0), static_cast<double>(d1[0]), static_cast<double>(d1[1]),
                  static_cast<double>(n.top_k), static_cast<double>(n.experts_total),
                  n.busiest_of, gn.op == OpKind::kExpertDown, in.shape);
      in.shape.k = static_cast<double>(d1[2]);
    }
  } else if (t1.shape.size() == 4 && d1[0] > 0 && n.heads > 0) {
    const AttentionDims a{static_cast<double>(d1[0]), static_cast<double>(d1[1]),
                          std::max<double>(1, static_cast<double>(d1[2])),
                          Rows(t0, d0) / static_cast<double>(d1[0]),
                          static_cast<double>(n.heads), static_cast<double>(n.window),
                          n.causal};
    AttentionShape(a, n.mla, in);
    if (n.mla && in.flops > 0) {
      const double dims = cost.note == cost::Note::kMlaExpanded
                              ? static_cast<double>(n.nope + n.rope + n.v_dim)
                              : static_cast<double>(2 * n.latent + n.rope);
      in.shape.tiled_fraction = MlaTiledFraction(a, dims, in.flops);
    }
  }
  return in;
}

double StepPredictor::NodeTime(const Node& n, const KernelInput& in,
                               const roofline::NodeTime& roof) const {
  if (n.roofline) return roof.time_s;
  if (Info(in.cls).kind == KernelKind::kLink) {
    if (n.algorithms.empty() || in.network) return roof.time_s;
    double best = -1;
    for (const CollectiveParams* c : n.algorithms) {
      const double t = CollectiveTime(in, *c, rates_);
      if (t >= 0 && (best < 0 || t < best)) best = t;
    }
    return best < 0 ? roof.time_s : std::max(best, CollectiveFloorTime(in, rates_));
  }
  const bool prefill =
      in.cls == KernelClass::kAttentionPrefill || in.cls == KernelClass::kMlaPrefill;
  const KernelParams* p = prefill && n.prefill_params != nullptr ? n.prefill_params : n.params;
  if (p == nullptr) return roof.time_s;
  if (n.group_scale != 1) {
    // One call of the group's summed width N = n · group_scale; this member's share n / N.
    KernelInput group = in;
    group.shape.n *= n.group_scale;
    group.bytes *= n.group_scale;
    group.flops *= n.group_scale;
    return KernelTime(group, *p, rates_) / n.group_scale;
  }
  return KernelTime(in, *p, rates_);
}

double StepPredictor::TimeOf(size_t node, const KernelInput& in,
                             const roofline::NodeTime& roof) const {
  return NodeTime(nodes_[node], in, roof);
}

bool StepPredictor::AtRoofline(size_t node) const { return nodes_[node].roofline; }
bool StepPredictor::Fused(size_t node) const {
  return nodes_[node].fused || nodes_[node].group_follower;
}

const KernelParams* StepPredictor::ParamsOf(size_t node, KernelClass cls) const {
  const Node& n = nodes_[node];
  if (n.roofline) return nullptr;
  const bool prefill = cls == KernelClass::kAttentionPrefill || cls == KernelClass::kMlaPrefill;
  return prefill && n.prefill_params != nullptr ? n.prefill_params : n.params;
}

double StepPredictor::Overhead(uint64_t kernels, double kernels_s,
                               const StepOptions& options) const {
  if (profile_.transparent) return 0;
  const StepOverheads& o = profile_.overheads;
  const double issue_s = options.cuda_graphs ? 0.0 : o.launch_s * static_cast<double>(kernels);
  return o.step_s + (options.samples ? o.sampling_s : 0.0) + std::max(0.0, issue_s - kernels_s);
}

Result<StepPrediction> StepPredictor::Predict(const cost::Ledger& ledger,
                                              const roofline::Analysis& analysis,
                                              const StepOptions& options) const {
  if (ledger.nodes.size() != nodes_.size() || analysis.nodes.size() != nodes_.size()) {
    return MakeError("graph '" + graph_.name + "': the ledger and analysis are not of the graph "
                     "the predictor was compiled for");
  }
  expr::Bindings b(graph_.symbols);
  for (const auto& [name, value] : ledger.bound_dims) {
    if (auto id = graph_.symbols.Find(name)) b.Set(*id, value);
  }
  StepPrediction out;
  out.node_time_s.assign(nodes_.size(), 0.0);
  out.node_class.assign(nodes_.size(), KernelClass::kNone);
  out.notes = notes_;
  bool network = false;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const cost::NodeCost& c = ledger.nodes[i];
    if (!c.costed) continue;
    const Node& n = nodes_[i];
    const int32_t twin = graph_.nodes[i].cost_twin;
    if (twin >= 0 && static_cast<size_t>(twin) < i && ledger.nodes[twin].costed) {
      out.node_time_s[i] = out.node_time_s[twin];  // identical op, shapes and formats
      out.node_class[i] = out.node_class[twin];
    } else {
      const KernelInput in = Describe(i, c, b);
      out.node_class[i] = in.cls;
      if (in.bytes == 0 && in.flops == 0 && in.bytes_link == 0) continue;
      network = network || (Info(in.cls).kind == KernelKind::kLink && in.network);
      out.node_time_s[i] = NodeTime(n, in, analysis.nodes[i]);
    }
    if (out.node_time_s[i] > 0 && !Fused(i)) ++out.kernels;
    out.kernels_s += out.node_time_s[i];
  }
  if (network && !profile_.transparent) {
    out.notes.push_back("collectives over the network are predicted at their roofline time "
                        "(profiles describe the interconnect only)");
  }
  out.overhead_s = Overhead(out.kernels, out.kernels_s, options);
  out.step_time_s = out.kernels_s + out.overhead_s;
  return out;
}

Result<StepPrediction> PredictStep(const ir::Graph& graph, const cost::Ledger& ledger,
                                   const roofline::Analysis& analysis,
                                   const device::Device& device, const EngineProfile& profile,
                                   const StepOptions& options) {
  auto predictor = StepPredictor::Compile(graph, device, profile);
  if (!predictor) return std::unexpected(predictor.error());
  return (*predictor)->Predict(ledger, analysis, options);
}

}  // namespace opscope::predict
