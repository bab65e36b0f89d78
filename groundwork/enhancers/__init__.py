"""Adapters behind the domain's `Enhancer` protocol and its evidence: the parts that do I/O."""
