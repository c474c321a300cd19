"""The Communities page's loaders under their old name (they live in :mod:`.loaders.communities`)."""

from __future__ import annotations

from .loaders.communities import communities_overview, community_detail, community_treemap, layout, member_counts

__all__ = ["communities_overview", "community_detail", "community_treemap", "layout", "member_counts"]
