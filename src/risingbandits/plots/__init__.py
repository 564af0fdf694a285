"""Matplotlib figures (Agg backend: files only, no screen needed)."""

import matplotlib

matplotlib.use("Agg")
