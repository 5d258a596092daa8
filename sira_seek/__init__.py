"""sira-seek: SIRA corpus-grounded retrieval and SEEK sketch-guided RAG over search clusters."""

__version__ = "0.1.0"
