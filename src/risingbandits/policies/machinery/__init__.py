"""What every policy shares: the kernel dispatch (one compiled algorithm per state class, for the
simulator and the online object alike), the online run and its checkpoints, run states that
grow with the pulls made (capacity) or move to another size (transplant), windows over an arm's
pulls or the last rounds, restarts, the KL index, ties and round robin, the noise level
estimate and the policies' own generator."""
