"""The scenario contract: parse and validate the JSON document, resolve it against the catalog, price books, sweeps."""
