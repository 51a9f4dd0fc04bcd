// Chooses the importer for `opscope analyze MODEL` by file extension (.onnx, .gguf, else graph
// JSON). Built twice: linked
// with the ONNX importer (tests, fuzzers), and for the opscope binary with
// OPSCOPE_ONNX_PLUGIN, loading the importer from opscope-onnx.so on first use (onnx_plugin.h).
#include "import/import.h"

#include "import/gguf/gguf_model.h"
#include "import/opscope_json/graph_json.h"

#include <charconv>
#include <cmath>
#include <optional>
#include <string_view>

#if defined(OPSCOPE_ONNX_PLUGIN)
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "import/onnx/onnx_plugin.h"
#else
#include "import/onnx/onnx_import.h"
#endif

namespace opscope::import {

#if defined(OPSCOPE_ONNX_PLUGIN)
namespace {

// Where the plugin lives: $OPSCOPE_ONNX_PLUGIN if set; else next to the binary (the build
// tree), else ../lib/opscope/ from it (an installed layout).
std::vector<std::filesystem::path> PluginCandidates() {
  if (const char* env = std::getenv("OPSCOPE_ONNX_PLUGIN"); env != nullptr && *env != '\0') {
    return {env};
  }
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {kOnnxPluginFile};  // the dynamic loader's search path
  const std::filesystem::path dir = exe.parent_path();
  return {dir / kOnnxPluginFile, dir / ".." / "lib" / "opscope" / kOnnxPluginFile};
}

Result<const OnnxPluginApi*> LoadOnnxPlugin() {
  static const OnnxPluginApi* api = nullptr;
  if (api != nullptr) return api;
  std::string tried;
  for (const std::filesystem::path& path : PluginCandidates()) {
    std::error_code ec;
    if (path.has_parent_path() && !std::filesystem::exists(path, ec)) {
      tried += (tried.empty() ? "" : ", ") + path.string();
      continue;
    }
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      return MakeError("cannot load the ONNX importer plugin '" + path.string() +
                       "': " + dlerror());
    }
    using Entry = const OnnxPluginApi* (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(handle, kOnnxPluginEntry));
    if (entry == nullptr) {
      return MakeError("'" + path.string() + "' is not an opscope ONNX importer plugin (no " +
                       kOnnxPluginEntry + ")");
    }
    api = entry();
    return api;
  }
  return MakeError(std::string("the ONNX importer plugin ") + kOnnxPluginFile +
                   " is missing (looked for " + tried +
                   "; set OPSCOPE_ONNX_PLUGIN to its path)");
}

Result<ir::Graph> ImportOnnxFile(const std::string& path, const ImportOptions& options) {
  auto api = LoadOnnxPlugin();
  if (!api) return std::unexpected(Wrap(path, api.error()));
  return (*api)->import_file(path, options);
}

}  // namespace
#else
namespace {
Result<ir::Graph> ImportOnnxFile(const std::string& path, const ImportOptions& options) {
  return ImportOnnx(path, options);
}
}  // namespace
#endif

Result<ir::Graph> ImportModel(const std::string& path, const ImportOptions& options) {
  if (path.ends_with(".onnx")) return ImportOnnxFile(path, options);
  const bool gguf = path.ends_with(".gguf");
  if (!options.inputs.empty()) {
    return MakeError("option '--input " + options.inputs[0].name + "=" + options.inputs[0].text +
                     "': '" + path + "' is " + (gguf ? "a GGUF model" : "an opscope graph") +
                     ", whose inputs have no values; --input applies to ONNX models");
  }
  // A GGUF model's step graph; its symbols n, seqs and ctx bind with --dim in the ledger.
  if (gguf) return gguf::ImportGgufGraph(path);
  return LoadGraphJson(path);  // graph JSON binds --dim in the ledger
}

namespace {

// An integer that fits 64 bits, the whole text.
std::optional<int64_t> WholeInt(std::string_view s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

// A finite float, the whole text.
std::optional<double> WholeFloat(std::string_view s) {
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty() || !std::isfinite(v)) {
    return std::nullopt;
  }
  return v;
}

Result<InputValue> ParseInputValue(const std::string& option) {
  const size_t eq = option.rfind('=');
  if (eq == std::string::npos || eq == 0) {
    return MakeError("option '--input': expected NAME=VALUE, got '" + option + "'");
  }
  InputValue v;
  v.name = option.substr(0, eq);
  v.text = option.substr(eq + 1);
  auto bad = [&](const std::string& why) {
    return MakeError("option '--input " + option + "': " + why);
  };
  std::string_view body = v.text;
  const bool bracketed = body.size() >= 2 && body.front() == '[' && body.back() == ']';
  if (bracketed) body = body.substr(1, body.size() - 2);
  if (bracketed || body.find(',') != std::string_view::npos) {
    v.list = true;
    while (true) {
      const size_t comma = body.find(',');
      const std::string_view item = body.substr(0, comma);
      auto i = WholeInt(item);
      if (!i) return bad("'" + std::string(item) + "' is not an integer (lists hold integers)");
      v.ints.push_back(*i);
      if (v.ints.size() > kMaxInputListElems) {
        return bad("lists hold at most " + std::to_string(kMaxInputListElems) + " integers");
      }
      if (comma == std::string_view::npos) break;
      body.remove_prefix(comma + 1);
    }
    return v;
  }
  if (auto i = WholeInt(body)) {
    v.ints.push_back(*i);
    return v;
  }
  if (auto f = WholeFloat(body)) {
    v.is_float = true;
    v.real = *f;
    return v;
  }
  return bad("'" + v.text + "' is not a number or a comma-separated list of integers");
}

}  // namespace

Result<InputBindings> ParseInputOptions(const std::vector<std::string>& options) {
  InputBindings out;
  for (const std::string& o : options) {
    auto v = ParseInputValue(o);
    if (!v) return std::unexpected(v.error());
    for (const InputValue& seen : out) {
      if (seen.name == v->name) return MakeError("option '--input': '" + v->name + "' given twice");
    }
    out.push_back(std::move(*v));
  }
  return out;
}

}  // namespace opscope::import
