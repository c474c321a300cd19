"""Drawings of the code graph as one offline HTML file: the views and their data
(:mod:`.views`), fixed coordinates computed in Python (:mod:`.layout`), and the page
(:mod:`.html`). A decision overlay is handed in by the caller
(:mod:`nervapack_core.flows.overlay`): this package does not read the memory."""
