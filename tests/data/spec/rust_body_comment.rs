fn gcd(a: u64, b: u64) -> u64 {
    // Greatest common divisor by Euclid's algorithm.‸
}
