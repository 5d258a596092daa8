"""The HTTP API (`sira-seek serve`): SIRA search and SEEK answers for any language."""
