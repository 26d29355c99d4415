"""The lab: tools around the product (benchmarks, adaptation and drafter training, the GPU check).

Nothing the language server or the engine runs imports this package; the `prewrite` command
loads a lab command only when it is asked for.
"""
