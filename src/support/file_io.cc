// File input and atomic report output.
#include "support/file_io.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
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
  return WriteFileAtomic(path, std::span<const std::string_view>(&contents, 1));
}

Result<void> WriteFileAtomic(const std::string& path, std::span<const std::string_view> pieces) {
  // fwrite of each piece: large pieces go straight to write(2), no copy into stdio's buffer.
  auto write_all = [&](std::FILE* f) {
    for (std::string_view piece : pieces) {
      if (std::fwrite(piece.data(), 1, piece.size(), f) != piece.size()) return false;
    }
    return true;
  };
  if (path == "-") {
    if (!write_all(stdout) || std::fflush(stdout) != 0) {
      return MakeError("<stdout>: write error");
    }
    return {};
  }
  // A device, pipe or socket (-o /dev/null, a FIFO) is written in place: renaming a file over
  // it would replace /dev/null itself. A symbolic link's target gets the atomic write, and
  // the link stays.
  std::string target = path;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return MakeError(path + ": is a directory");
    if (!S_ISREG(st.st_mode)) {
      std::FILE* f = std::fopen(path.c_str(), "wb");
      if (f == nullptr) return MakeError(path + ": cannot write: " + std::strerror(errno));
      const bool ok = write_all(f);
      if (std::fclose(f) != 0 || !ok) return MakeError(path + ": write error");
      return {};
    }
    struct stat lst {};
    if (::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
      char* real = ::realpath(path.c_str(), nullptr);
      if (real == nullptr) return MakeError(path + ": cannot resolve: " + std::strerror(errno));
      target = real;
      std::free(real);
    }
  }
  const std::string tmp = target + ".tmp." + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return MakeError(path + ": cannot write: " + std::strerror(errno));
  const bool ok = write_all(f);
  const bool closed = std::fclose(f) == 0;
  if (!ok || !closed) {
    std::remove(tmp.c_str());
    return MakeError(path + ": write error");
  }
  if (std::rename(tmp.c_str(), target.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    return MakeError(path + ": cannot write: " + why);
  }
  return {};
}

}  // namespace opscope
