-- Extensions the platform relies on: pgvector for vector collections and search.
CREATE EXTENSION IF NOT EXISTS vector;
