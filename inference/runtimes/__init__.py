"""Runtimes behind the seam (base.py): torch and llama.cpp."""
