"""The engine plugins: each backend implements ``sira_seek.backend.SearchBackend``.

Registered under the ``sira_seek.engines`` entry point group (pyproject.toml); ``registry``
detects the engine a URL answers with and connects its backend.
"""
