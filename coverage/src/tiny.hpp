#pragma once
#include <vector>

namespace tiny {

template <typename T>
T clamp_sum(const std::vector<T>& xs, T limit) {
  T total = 0;
  for (const T& x : xs) {
    if (x < 0) {
      total -= x;
    } else {
      total += x;
    }
    if (total > limit) {
      return limit;
    }
  }
  return total;
}

inline int classify(int v) {
  switch (v % 3) {
    case 0:
      return 10;
    case 1:
      return 20;
    default:
      break;
  }
  return 30;
}

}  // namespace tiny
