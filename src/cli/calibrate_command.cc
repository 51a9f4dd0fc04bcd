// `opscope calibrate MEASUREMENTS... --engine NAME`: fits an engine profile to measured kernel
// latencies and prints, per device and kernel class, the k-fold held-out |error|.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "predict/calibrate.h"
#include "predict/measurements.h"
#include "predict/profile.h"
#include "support/file_io.h"

namespace opscope::cli {
namespace {

struct CalibrateOptions {
  std::vector<std::string> inputs;
  std::string engine;
  std::string device;
  std::string base;
  std::string output;
  std::string residuals;
  uint32_t folds = 5;
};

// Files and folders (searched for *.csv, in sorted order) as a list of files.
Result<std::vector<std::string>> ExpandInputs(const std::vector<std::string>& inputs) {
  std::vector<std::string> files;
  for (const std::string& input : inputs) {
    std::error_code ec;
    if (!std::filesystem::is_directory(input, ec)) {
      files.push_back(input);
      continue;
    }
    std::vector<std::string> found;
    for (auto it = std::filesystem::recursive_directory_iterator(input, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_regular_file(ec) && it->path().extension() == ".csv") {
        found.push_back(it->path().string());
      }
    }
    if (ec) return MakeError(input + ": cannot list the folder: " + ec.message());
    std::sort(found.begin(), found.end());
    if (found.empty()) return MakeError(input + ": no .csv files in the folder");
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

// The profile the fit starts from: --base, else the built-in profile of the engine, else an
// empty profile of that name.
Result<predict::EngineProfile> BaseProfile(const CalibrateOptions& o) {
  if (!o.base.empty()) {
    auto p = predict::LoadEngineProfileFile(o.base);
    if (!p) return std::unexpected(p.error());
    if (p->engine != o.engine) {
      return MakeError("--base " + o.base + " is the profile of engine '" + p->engine +
                       "', not '" + o.engine + "'");
    }
    return p;
  }
  if (auto builtin = predict::FindBuiltinProfile(o.engine)) return **builtin;
  predict::EngineProfile p;
  p.engine = o.engine;
  p.description = "engine '" + o.engine + "' calibrated from the user's measurements";
  p.version = "not given";
  p.defaults.source = "not given: opscope's defaults";
  p.overheads.source = "not measured: kernels only";
  return p;
}

Result<int> Run(const CalibrateOptions& o) {
  auto files = ExpandInputs(o.inputs);
  if (!files) return std::unexpected(files.error());
  auto base = BaseProfile(o);
  if (!base) return std::unexpected(base.error());
  if (base->transparent) {
    return MakeError("engine '" + o.engine + "' is transparent (roofline times): nothing to fit");
  }
  predict::MeasurementOptions mo;
  mo.engine = o.engine;
  if (!o.device.empty()) mo.device = o.device;
  // Other engines' rows the base profile's default implementations borrow.
  for (const predict::DeviceProfile& d : base->devices) {
    for (const predict::KernelSource& k : d.kernel_sources) {
      if (!k.engine.empty() && k.engine != o.engine &&
          std::find(mo.also_engines.begin(), mo.also_engines.end(), k.engine) ==
              mo.also_engines.end()) {
        mo.also_engines.push_back(k.engine);
      }
    }
  }
  std::vector<predict::MeasurementFile> measurements;
  for (const std::string& f : *files) {
    auto m = predict::ReadMeasurements(f, mo);
    if (!m) return std::unexpected(m.error());
    measurements.push_back(std::move(*m));
  }
  predict::CalibrateOptions co;
  co.fit.folds = o.folds;
  auto result = predict::Calibrate(measurements, *base, co);
  if (!result) return std::unexpected(result.error());
  // The table goes to stdout unless the profile does.
  FILE* table = o.output == "-" ? stderr : stdout;
  std::fprintf(table, "engine %s: %zu fitted groups, errors are %u-fold held-out "
               "|predicted / measured - 1|\n\n%s",
               o.engine.c_str(), result->rows.size(), o.folds,
               predict::CalibrationTable(*result).c_str());
  if (!result->skipped.empty()) {
    std::fprintf(table, "\nnot fitted:\n");
    for (const std::string& s : result->skipped) std::fprintf(table, "  %s\n", s.c_str());
  }
  if (!o.output.empty()) {
    if (auto ok = WriteFileAtomic(o.output, predict::EngineProfileJson(result->profile)); !ok) {
      return std::unexpected(ok.error());
    }
  }
  if (!o.residuals.empty()) {
    if (auto ok = WriteFileAtomic(o.residuals, predict::ResidualsCsv(*result)); !ok) {
      return std::unexpected(ok.error());
    }
  }
  return 0;
}

}  // namespace

Command AddCalibrateCommand(CLI::App& root) {
  auto o = std::make_shared<CalibrateOptions>();
  CLI::App* app = root.add_subcommand(
      "calibrate", "Fit an engine profile to measured kernel latencies (docs/engines.md)");
  app->add_option("MEASUREMENTS", o->inputs,
                  "CSV files of measured kernels, or folders searched for *.csv")
      ->required();
  app->add_option("--engine", o->engine, "Engine whose profile to fit (trtllm, vllm, sglang, ...)")
      ->required();
  app->add_option("--device", o->device,
                  "Device of rows that name none (an id or FILE.json); only its rows are fitted");
  app->add_option("--base", o->base,
                  "Profile to start from (default: the built-in profile of the engine)");
  app->add_option("--folds", o->folds, "k of the k-fold cross-validation")
      ->check(CLI::Range(2u, 100u))
      ->capture_default_str();
  app->add_option("-o,--output", o->output, "Write the fitted profile to FILE ('-': stdout)");
  app->add_option("--residuals", o->residuals,
                  "Write every fitted measurement with its prediction to FILE (CSV)");
  return {app, [o]() -> Result<int> { return Run(*o); }};
}

}  // namespace opscope::cli
