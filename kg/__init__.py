"""The vendor knowledge graph in networkx (statistics, capped exports,
disambiguation, paths). Derived from PostgreSQL on demand; not built yet."""
