from functools import cache


# Return the n-th Fibonacci number,
# counting from fib(0) == 0.‸
@cache
def fib(
    n: int,
) -> int:

print(fib(10))
