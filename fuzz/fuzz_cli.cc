// libFuzzer target: the whole command line. The input is split at newlines into argv and run
// through opscope's real main (compiled here as OpscopeMain) inside a scratch directory that
// holds one small file of each kind (g.json, c.json, d.json, m.onnx). Arguments containing
// '/' are skipped, so a run can only read and write inside the scratch directory; the
// directory is restored before every run. Reports go to /dev/null.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

int OpscopeMain(int argc, char** argv);

namespace {

namespace fs = std::filesystem;

std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Scratch {
  fs::path dir;
  std::vector<std::pair<std::string, std::string>> files;  // name -> contents

  void Restore() const {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      bool keep = false;
      for (const auto& [name, contents] : files) keep = keep || entry.path().filename() == name;
      if (!keep) fs::remove_all(entry.path(), ec);
    }
    for (const auto& [name, contents] : files) {
      std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
      out << contents;
    }
  }
};

Scratch* g_scratch = nullptr;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const fs::path source = OPSCOPE_SOURCE_DIR;
  char pattern[] = "/tmp/opscope-fuzz-cli-XXXXXX";
  const char* dir = ::mkdtemp(pattern);
  if (dir == nullptr) std::abort();
  g_scratch = new Scratch{dir, {}};
  g_scratch->files = {
      {"g.json", Slurp(source / "tests/golden/mlp.json")},
      {"c.json", Slurp(source / "data/presets/qwen3-30b-a3b.json")},
      {"d.json", Slurp(source / "tests/golden/device.json")},
      {"m.onnx", Slurp(source / "tests/fixtures/onnx/einsum.onnx")},
  };
  for (const auto& [name, contents] : g_scratch->files) {
    if (contents.empty()) std::abort();  // a fixture moved: fix the list above
  }
  if (::chdir(dir) != 0) std::abort();
  const int null_fd = ::open("/dev/null", O_WRONLY);
  if (null_fd < 0 || ::dup2(null_fd, STDOUT_FILENO) < 0) std::abort();
  ::close(null_fd);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> args{"opscope"};
  size_t start = 0;
  while (start <= text.size() && args.size() < 40) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string arg(text.substr(start, end - start));
    if (arg.find('/') != std::string::npos || arg.find('\0') != std::string::npos) return 0;
    args.push_back(std::move(arg));
    start = end + 1;
  }
  g_scratch->Restore();
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int status = OpscopeMain(static_cast<int>(args.size()), argv.data());
  if (status < 0 || status > 2) std::abort();
  return 0;
}
