"""Stationary reference policies (UCB1)."""
