"""The cluster: fabric, scale-up planes and supernodes, storage tiers, power."""
