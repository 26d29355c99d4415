"""Problems with tests (HumanEval, the doctest suite) and their docstrings cut into typed units.

Shared by the lab's tools: the benchmarks replay them, adaptation and the drafter train on them.
"""
