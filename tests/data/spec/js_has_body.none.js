function add(a, b) {
  // Return the sum.‸
  return a + b;
}
