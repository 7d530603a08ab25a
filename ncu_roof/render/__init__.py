"""Renderers: `Analysis` (or a prediction / diff) → text or bytes. They never write files."""
