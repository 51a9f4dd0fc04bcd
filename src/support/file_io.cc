// File input and atomic report output.
#include "support/file_io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

namespace opscope {

namespace {

// The checks ReadFile and MapFile share: `st` describes a regular file no larger than
// `max_bytes`.
Result<void> CheckInputFile(const std::string& path, const struct stat& st, uint64_t max_bytes) {
  if (S_ISDIR(st.st_mode)) return MakeError(path + ": is a directory, not a file");
  if (!S_ISREG(st.st_mode)) return MakeError(path + ": is not a regular file");
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    return MakeError(path + ": file too large (" + std::to_string(st.st_size) + " bytes)");
  }
  return {};
}

}  // namespace

Result<std::string> ReadFile(const std::string& path, uint64_t max_bytes, size_t padding) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return MakeError(path + ": cannot open: " + std::strerror(errno));
  }
  if (auto ok = CheckInputFile(path, st, max_bytes); !ok) return std::unexpected(ok.error());
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return MakeError(path + ": cannot open: " + std::strerror(errno));
  std::string data;
  data.reserve(static_cast<size_t>(st.st_size) + padding);
  // Read straight into the string's storage: no zero fill of a buffer about to be overwritten.
  size_t got = 0;
  data.resize_and_overwrite(static_cast<size_t>(st.st_size), [&](char* p, size_t n) {
    got = n == 0 ? 0 : std::fread(p, 1, n, f);
    return got;
  });
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed || got != static_cast<size_t>(st.st_size)) return MakeError(path + ": read error");
  return data;
}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this == &other) return *this;
  if (mapping_ != nullptr) ::munmap(mapping_, mapping_bytes_);
  buffer_ = std::move(other.buffer_);
  mapping_ = std::exchange(other.mapping_, nullptr);
  mapping_bytes_ = std::exchange(other.mapping_bytes_, 0);
  size_ = std::exchange(other.size_, 0);
  capacity_ = std::exchange(other.capacity_, 0);
  data_ = mapping_ != nullptr ? std::exchange(other.data_, "") : buffer_.data();
  other.data_ = "";
  return *this;
}

MappedFile::~MappedFile() {
  if (mapping_ != nullptr) ::munmap(mapping_, mapping_bytes_);
}

Result<MappedFile> MapFile(const std::string& path, uint64_t max_bytes, size_t padding) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return MakeError(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    return MakeError(path + ": cannot open: " + why);
  }
  if (auto ok = CheckInputFile(path, st, max_bytes); !ok) {
    ::close(fd);
    return std::unexpected(ok.error());
  }
  MappedFile file;
  file.size_ = static_cast<size_t>(st.st_size);
#if defined(__linux__) && defined(MAP_POPULATE)
  // Reserve the file's pages plus the padding as anonymous zero pages, then map the file over
  // their start: the bytes after the end read as zeros, whatever the file's size.
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t bytes = (file.size_ + padding + page - 1) / page * page;
  void* area = bytes == 0 ? MAP_FAILED
                          : ::mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (area != MAP_FAILED) {
    void* mapped = file.size_ == 0 ? area
                                   : ::mmap(area, file.size_, PROT_READ,
                                            MAP_PRIVATE | MAP_FIXED | MAP_POPULATE, fd, 0);
    if (mapped == area) {
      ::close(fd);
      file.mapping_ = area;
      file.mapping_bytes_ = bytes;
      file.data_ = static_cast<const char*>(area);
      file.capacity_ = bytes;
      return file;
    }
    ::munmap(area, bytes);
  }
#endif
  ::close(fd);
  auto text = ReadFile(path, max_bytes, padding);  // cannot be mapped: read it
  if (!text) return std::unexpected(text.error());
  file.buffer_ = std::move(*text);
  file.buffer_.reserve(file.buffer_.size() + padding);
  file.data_ = file.buffer_.data();
  file.capacity_ = file.buffer_.capacity();
  return file;
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
