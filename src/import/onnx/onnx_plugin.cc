// The entry point of opscope-onnx.so (see onnx_plugin.h).
#include "import/onnx/onnx_plugin.h"

#include "import/onnx/onnx_import.h"

namespace {

const opscope::import::OnnxPluginApi kApi{&opscope::import::ImportOnnx};

}  // namespace

extern "C" __attribute__((visibility("default"))) const opscope::import::OnnxPluginApi*
opscope_onnx_plugin_v2() {
  return &kApi;
}
