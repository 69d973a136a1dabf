int f1(int x) {
  return x + 1;
}
