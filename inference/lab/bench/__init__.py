"""`prewrite bench`: the seed's residual-cost evaluation of streaming against plain decoding."""
