"""Vectors, offline: the embedder (MiniLM int8 ONNX, or the hashing fallback; :mod:`.embeddings`),
the workspace's ChromaDB collection, embedded or on a Chroma server (:mod:`.collection`), and
the ingest step that keeps the collection in line with the graph (:mod:`.embed_step`)."""
