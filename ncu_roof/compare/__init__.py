"""Base vs head, expectations."""
