"""Model arithmetic: the transformer's shape, parameter counts and FLOPs per token, config.json, 6·N·D."""
