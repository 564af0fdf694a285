"""Policies for non-stationary bandits that the CURE-UCB paper compares with: sliding windows
(SW-UCB, SW-KL-UCB, SW-TS) and restarts (Rexp3, Ser4), one module per family of pieces."""
