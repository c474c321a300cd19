"""``nervapack query``: a question into a context under a hard token budget. The prompt's
words, stems and identifiers (:mod:`.prompt`, :mod:`.concepts`), seeds and routes
(:mod:`.retriever`), scoring and fusion (:mod:`.ranking`), what is listed (:mod:`.selection`),
who gets code and who a stub (:mod:`.packplan`), the Markdown packer (:mod:`.pack`) and what it
reads (:mod:`.source`), query-time caches (:mod:`.cache`) and the vector search run beside the
rest (:mod:`.prefetch`)."""
