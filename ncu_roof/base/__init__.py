"""Shared building blocks every stage uses."""
