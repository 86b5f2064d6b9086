"""Pure domain logic: GGUF headers, parameters, protocol types. No Qt, no llama.cpp, no NVML."""
