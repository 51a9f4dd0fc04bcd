// File input and atomic report output.
#include "support/file_io.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace opscope {

Result<std::string> ReadFile(const std::string& path, uint64_t max_bytes, size_t padding) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return MakeError(path + ": cannot open: " + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) return MakeError(path + ": is a directory, not a file");
  if (!S_ISREG(st.st_mode)) return MakeError(path + ": is not a regular file");
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    return MakeError(path + ": file too large (" + std::to_string(st.st_size) + " bytes)");
  }
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return MakeError(path + ": cannot open: " + std::strerror(errno));
  std::string data;
  data.reserve(static_cast<size_t>(st.st_size) + padding);
  data.resize(static_cast<size_t>(st.st_size));
  const size_t got = data.empty() ? 0 : std::fread(data.data(), 1, data.size(), f);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed || got != data.size()) return MakeError(path + ": read error");
  return data;
}

Result<void> WriteFileAtomic(const std::string& path, std::string_view contents) {
  if (path == "-") {
    if (std::fwrite(contents.data(), 1, contents.size(), stdout) != contents.size() ||
        std::fflush(stdout) != 0) {
      return MakeError("<stdout>: write error");
    }
    return {};
  }
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return MakeError(path + ": cannot write: " + std::strerror(errno));
  const bool ok = std::fwrite(contents.data(), 1, contents.size(), f) == contents.size();
  const bool closed = std::fclose(f) == 0;
  if (!ok || !closed) {
    std::remove(tmp.c_str());
    return MakeError(path + ": write error");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    return MakeError(path + ": cannot write: " + why);
  }
  return {};
}

}  // namespace opscope
