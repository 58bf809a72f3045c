// SMP: crypto toolbox, pairing, keys (issue 6).
