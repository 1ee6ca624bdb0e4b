// The header's macros in C++: ANYDEV_STRUCT_INIT gives a zeroed struct
// with struct_size set, ANYDEV_HAS_FIELD reads it. Prints what it found;
// tests/header.rs compares that with the Rust layout.
#include "anydev_plugin.h"

#include <cstdio>
#include <cstring>

int main() {
  AnydevMemoryStats stats = ANYDEV_STRUCT_INIT(AnydevMemoryStats);
  AnydevMemoryStats zero;
  std::memset(&zero, 0, sizeof zero);
  zero.struct_size = sizeof zero;
  std::printf("struct_size %zu\n", stats.struct_size);
  std::printf("zeroed %d\n", std::memcmp(&stats, &zero, sizeof zero) == 0);
  std::printf("has peak %d\n", static_cast<int>(ANYDEV_HAS_FIELD(&stats, AnydevMemoryStats, peak)));
  stats.struct_size = offsetof(AnydevMemoryStats, peak);
  std::printf("has peak when shorter %d\n", static_cast<int>(ANYDEV_HAS_FIELD(&stats, AnydevMemoryStats, peak)));
  return 0;
}
