function f(x) {
  if (x) {
    // Return early.‸
  }
}
