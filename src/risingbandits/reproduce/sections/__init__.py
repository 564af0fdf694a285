"""The sections of the reproduction report (one module per part)."""
