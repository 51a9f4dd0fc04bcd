// Chooses the importer for `opscope analyze MODEL` by file extension. Built twice: linked
// with the ONNX importer (tests, fuzzers), and for the opscope binary with
// OPSCOPE_ONNX_PLUGIN, loading the importer from opscope-onnx.so on first use (onnx_plugin.h).
#include "import/import.h"

#include "import/opscope_json/graph_json.h"

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

Result<ir::Graph> ImportOnnxFile(const std::string& path, const DimBindings& dims) {
  auto api = LoadOnnxPlugin();
  if (!api) return std::unexpected(Wrap(path, api.error()));
  return (*api)->import_file(path, dims);
}

}  // namespace
#else
namespace {
Result<ir::Graph> ImportOnnxFile(const std::string& path, const DimBindings& dims) {
  return ImportOnnx(path, dims);
}
}  // namespace
#endif

Result<ir::Graph> ImportModel(const std::string& path, const DimBindings& dims) {
  if (path.ends_with(".onnx")) return ImportOnnxFile(path, dims);
  return LoadGraphJson(path);  // graph JSON binds --dim in the ledger
}

}  // namespace opscope::import
