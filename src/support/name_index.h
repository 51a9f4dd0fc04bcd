// An open-addressing index from names to dense ids, for importers and validation over
// millions of names: one flat array of 8-byte (hash bits, id) slots on huge pages where the
// system has them, no per-entry allocation, the names themselves stay where the caller stores
// them (NameOf maps an inserted id to its name).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "support/huge_pages.h"

namespace opscope {

template <typename NameOf>
class NameIndex {
 public:
  explicit NameIndex(NameOf name_of, size_t expected = 0) : name_of_(std::move(name_of)) {
    size_t capacity = 1024;
    while (capacity * 3 < expected * 4) capacity *= 2;
    Rehash(capacity);
  }

  // The hash the index files `name` under: compute it once, then Prefetch, InsertOrFind and
  // Find with it.
  static uint32_t Hash(std::string_view s) {
    return static_cast<uint32_t>(std::hash<std::string_view>{}(s));
  }

  // Inserts `name` with `id`; returns the existing id instead when the name is present.
  std::optional<uint32_t> InsertOrFind(std::string_view name, uint32_t id) {
    return InsertOrFind(name, Hash(name), id);
  }
  std::optional<uint32_t> InsertOrFind(std::string_view name, uint32_t h, uint32_t id) {
    if ((size_ + 1) * 4 > slots_.size() * 3) Rehash(slots_.size() * 2);
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

  // Starts loading the slot `name` hashes to, so that an InsertOrFind or Find of it a little
  // later does not wait for memory: a reader that queues a batch of names, prefetches them all,
  // then inserts them in order overlaps the batch's cache misses instead of paying each in turn.
  void Prefetch(uint32_t hash) const { __builtin_prefetch(&slots_[hash & mask_]); }

  std::optional<uint32_t> Find(std::string_view name) const { return Find(name, Hash(name)); }
  std::optional<uint32_t> Find(std::string_view name, uint32_t h) const {
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.id_plus_one == 0) return std::nullopt;
      if (s.hash == h && name_of_(s.id_plus_one - 1) == name) return s.id_plus_one - 1;
    }
  }

 private:
  // The low 32 bits of the name's hash (enough to place it: a table never has 2^32 slots, and
  // equal bits are confirmed by comparing the names) and its id.
  struct Slot {
    uint32_t hash = 0;
    uint32_t id_plus_one = 0;  // 0: empty
  };
  static_assert(sizeof(Slot) == 8);

  void Rehash(size_t capacity) {
    std::vector<Slot> old = std::move(slots_);
    slots_ = {};
    ReserveHugePages(slots_, capacity);  // probed at random: a TLB miss per 4 KiB page otherwise
    slots_.resize(capacity);
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
