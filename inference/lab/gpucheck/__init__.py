"""`prewrite gpu-check`: the engine on a CUDA GPU with random models of real sizes (a lab tool)."""
