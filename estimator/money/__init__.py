"""Money: capex and opex, the bill's roll-up, prices and price books applied, budget sizing."""
