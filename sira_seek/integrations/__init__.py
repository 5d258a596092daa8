"""Retrievers for LangChain, LlamaIndex and Haystack (each an optional extra)."""
