// An open-addressing index from names to dense ids, for importers and validation over
// millions of names: one flat array of (id, hash) slots, no per-entry allocation, the names
// themselves stay where the caller stores them (NameOf maps an inserted id to its name).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

namespace opscope {

template <typename NameOf>
class NameIndex {
 public:
  explicit NameIndex(NameOf name_of, size_t expected = 0) : name_of_(std::move(name_of)) {
    size_t capacity = 1024;
    while (capacity * 3 < expected * 4) capacity *= 2;
    Rehash(capacity);
  }

  // Inserts `name` with `id`; returns the existing id instead when the name is present.
  std::optional<uint32_t> InsertOrFind(std::string_view name, uint32_t id) {
    if ((size_ + 1) * 4 > slots_.size() * 3) Rehash(slots_.size() * 2);
    const uint64_t h = Hash(name);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.id_plus_one == 0) {
        s = {h, id + 1};
        ++size_;
        return std::nullopt;
      }
      if (s.hash == h && name_of_(s.id_plus_one - 1) == name) return s.id_plus_one - 1;
    }
  }

  std::optional<uint32_t> Find(std::string_view name) const {
    const uint64_t h = Hash(name);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.id_plus_one == 0) return std::nullopt;
      if (s.hash == h && name_of_(s.id_plus_one - 1) == name) return s.id_plus_one - 1;
    }
  }

 private:
  struct Slot {
    uint64_t hash = 0;
    uint32_t id_plus_one = 0;  // 0: empty
  };

  static uint64_t Hash(std::string_view s) { return std::hash<std::string_view>{}(s); }

  void Rehash(size_t capacity) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    for (const Slot& s : old) {
      if (s.id_plus_one == 0) continue;
      size_t i = s.hash & mask_;
      while (slots_[i].id_plus_one != 0) i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }

  NameOf name_of_;
  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace opscope
