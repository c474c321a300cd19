"""ADR folders — the decision records teams already keep — in and out of the memory.

- :func:`import_folder` (``nervapack memory import-adr DIR``): each Markdown ADR
  (Nygard / adr-tools, MADR 2–4, log4brains) becomes a decision; idempotent, one
  transaction, see :mod:`.importer` for the matching and update rules;
- :func:`export_folder` (``nervapack memory export-adr DIR``): a decision's own file gets
  only its NervaPack block (:mod:`.block`: code, reviews, links, id), a decision without a
  file a new file in the folder's format (:mod:`.export`);
- :func:`find_adr_dir`: the workspace's ADR folder, for ``nervapack sync`` and
  ``review-changes``; :func:`status_of`: a record's status from its text alone.

Parsing lives in :mod:`.parse` (text only) and :mod:`.folder` (files, hashes, dates, git).
"""

from .export import export_folder
from .folder import AUTO_DIRS, find_adr_dir
from .importer import import_folder
from .parse import AdrSkip, ParsedAdr, map_status, parse_adr, status_of

__all__ = ["import_folder", "export_folder", "find_adr_dir", "parse_adr", "status_of", "ParsedAdr", "AdrSkip",
           "map_status", "AUTO_DIRS"]
