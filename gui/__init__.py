"""Tightfit: run big GGUF models on small, old NVIDIA cards with llama.cpp."""

__version__ = "0.1.0"
