// Helpers of the family tests: a config (a fixture of tests/fixtures/hf/ or JSON text) read,
// its recipe resolved, its decode step built and its model figures computed; one decode step
// analysed on the H100; a node's cost by name.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "device/device.h"
#include "import/hf_config/model_spec.h"
#include "import/hf_config/recipe.h"
#include "import/hf_config/step_graph.h"
#include "llm/llm.h"

namespace opscope::import::hf::testing {

inline std::string ReadHfFixture(const std::string& name) {
  std::ifstream in(std::string(OPSCOPE_SOURCE_DIR) + "/tests/fixtures/hf/" + name);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct BuiltModel {
  ModelSpec spec;
  StepGraph step;
  llm::ModelFigures figures;
};

// The config text `json` (named `origin` in messages) read, resolved (with `options`) and built.
inline BuiltModel BuildJson(const std::string& json, const std::string& origin,
                            const RecipeOptions& options = {}) {
  BuiltModel b;
  auto spec = ParseHfConfig(json, origin);
  EXPECT_TRUE(spec.has_value()) << origin << ": " << (spec ? "" : spec.error().message);
  if (!spec) return b;
  b.spec = *spec;
  auto recipe = ResolveRecipe(b.spec, options);
  EXPECT_TRUE(recipe.has_value()) << origin << ": " << (recipe ? "" : recipe.error().message);
  if (!recipe) return b;
  auto step = BuildStepGraph(b.spec, *recipe);
  EXPECT_TRUE(step.has_value()) << origin << ": " << (step ? "" : step.error().message);
  if (!step) return b;
  b.step = std::move(*step);
  auto figures = llm::ComputeModelFigures(b.step);
  EXPECT_TRUE(figures.has_value()) << origin;
  if (figures) b.figures = *figures;
  return b;
}

inline BuiltModel BuildFixture(const std::string& name) {
  return BuildJson(ReadHfFixture(name), name);
}

inline double Billions(uint64_t v) { return static_cast<double>(v) / 1e9; }

// A published total and active count, within a card's rounding: total within 8 %, active within
// 20 % (DESIGN: active counts the embedding; names such as "A3B" round).
inline void ExpectPublished(const BuiltModel& b, double total_b, double active_b) {
  EXPECT_NEAR(Billions(b.figures.params_total), total_b, 0.08 * total_b) << b.spec.origin;
  EXPECT_NEAR(Billions(b.figures.params_active), active_b, 0.20 * active_b) << b.spec.origin;
}

// One decode step of `batch` sequences at `context` cached tokens, on the H100.
inline llm::StepResult DecodeStep(const StepGraph& g, int64_t batch, int64_t context) {
  static const device::Device h100 = *device::FindBuiltinDevice("h100-sxm");
  auto r = llm::AnalyzeStep(g, llm::DecodeBindings(batch, context), h100);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return r ? std::move(*r) : llm::StepResult{};
}

inline const cost::NodeCost& CostOf(const StepGraph& g, const llm::StepResult& r,
                                    std::string_view name) {
  for (size_t i = 0; i < g.graph.nodes.size() && i < r.ledger.nodes.size(); ++i) {
    if (g.graph.nodes[i].name == name) return r.ledger.nodes[i];
  }
  ADD_FAILURE() << "no node " << name;
  static const cost::NodeCost none;
  return none;
}

inline bool HasNode(const StepGraph& g, std::string_view name) {
  for (const auto& n : g.graph.nodes) {
    if (n.name == name) return true;
  }
  return false;
}

}  // namespace opscope::import::hf::testing
