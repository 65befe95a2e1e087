"""Maintainer tools: snippet parsing, output refresh, notebook and diagram generation."""
