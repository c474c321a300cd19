"""Optional LLM doc -> code binding (``--llm ollama|openai|claude``, MCP ``bind_docs``).

:mod:`.providers` (the endpoints and their official clients, imported only with
``--llm``), :mod:`.shortlist` (the candidates per section), :mod:`.prompt` (the question
and the strict reading of its answer), :mod:`.binding` (the pass: cache, requests,
retries, edges) and :mod:`.consent` (asking before anything leaves the machine).
Nothing in this package runs, and nothing is sent anywhere, without ``--llm`` or a call
of the MCP tool.
"""
