// Input files: MappedFile (the graph JSON reader's input) reads exactly the file, with zero
// padding after its end even when the file fills its last page, and fails as ReadFile fails.
#include "support/file_io.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace opscope {
namespace {

namespace fs = std::filesystem;

class FileIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("opscope_file_io_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  fs::path dir_;
};

TEST_F(FileIoTest, MappedFileHoldsTheBytesThenZeroPadding) {
  constexpr size_t kPadding = 64;
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  for (size_t size : {size_t{0}, size_t{1}, size_t{100}, page - 1, page, 3 * page}) {
    std::string text(size, 'x');
    for (size_t i = 0; i < size; ++i) text[i] = static_cast<char>('a' + i % 26);
    const std::string path = Write("f" + std::to_string(size), text);
    auto file = MapFile(path, uint64_t{1} << 30, kPadding);
    ASSERT_TRUE(file) << file.error().message;
    EXPECT_EQ(file->size(), size);
    EXPECT_EQ(file->view(), text);
    ASSERT_GE(file->capacity(), size + kPadding) << size;
    for (size_t i = size; i < size + kPadding; ++i) {
      EXPECT_EQ(file->data()[i], '\0') << "padding byte " << i << " of a " << size << "-byte file";
    }
    MappedFile moved = std::move(*file);  // the mapping moves with it
    EXPECT_EQ(moved.view(), text);
  }
}

TEST_F(FileIoTest, MapFileFailsAsReadFileDoes) {
  for (const std::string& path : {(dir_ / "missing.json").string(), dir_.string()}) {
    auto mapped = MapFile(path);
    auto read = ReadFile(path);
    ASSERT_FALSE(mapped);
    ASSERT_FALSE(read);
    EXPECT_EQ(mapped.error().message, read.error().message);
  }
  const std::string big = Write("big", std::string(1000, 'x'));
  auto too_large = MapFile(big, 999);
  ASSERT_FALSE(too_large);
  EXPECT_NE(too_large.error().message.find("file too large (1000 bytes)"), std::string::npos);
}

}  // namespace
}  // namespace opscope
