// Tiny driver for coverage samples: sums its integer arguments with tiny::clamp_sum.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tiny.hpp"

int main(int argc, char** argv) {
  std::vector<int> xs;
  for (int i = 1; i < argc; ++i) xs.push_back(std::atoi(argv[i]));
  std::vector<double> ds{1.5, 2.5};
  int total = tiny::clamp_sum(xs, 99);
  std::printf("%d %g %d\n", total, tiny::clamp_sum(ds, 10.0), tiny::classify(total));
  return 0;
}
