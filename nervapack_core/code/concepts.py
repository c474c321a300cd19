"""Everyday phrases of a question -> the words code uses for the same idea.

People ask "when is the cached data out of date?"; the code says ``isStale``. Neither the names'
full-text index nor a small embedding model bridges such a gap: the words share no letters, and
MiniLM scores "is stale" at 0.30 against that question, below 60 other definitions of a small
repository. This table holds general programming vocabulary (no project's names): phrases as a
reader writes them, each with the terms that code, comments and identifiers use for the idea.
:func:`prompt.fts_query` adds the terms to the prompt's own words, as it adds
:data:`prompt.ABBREVIATIONS` for single words.
"""

from __future__ import annotations

import re

__all__ = ["CONCEPTS", "concept_terms"]

# (a regular expression over the lowercased prompt, the code words for it)
CONCEPTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # freshness and expiry
    (r"out[ -]of[ -]date|outdated|no longer (?:fresh|valid|current)|too old|expired?|expiry|expiration",
     ("stale", "expire", "expired", "invalidate", "ttl")),
    (r"\bfresh(?:ness)?\b", ("stale", "expire")),
    # removing what is no longer used
    (r"thrown? away|throw(?:n|s)? out|get(?:s)? rid of|clean(?:ed|s)? up|garbage[ -]collect\w*|freed|free(?:s|d)? up"
     r"|evict\w*|purge\w*|dispose\w*",
     ("gc", "garbage", "evict", "dispose", "cleanup", "remove")),
    (r"\bunused\b|no longer used|nobody uses|not used any ?more", ("gc", "inactive")),
    # trying again
    (r"tr(?:y|ied|ies) again|re-?tr(?:y|ied|ies)|another attempt|attempts?\b", ("retry", "retries", "attempt")),
    (r"longer each time|back(?:s)? off|backoff|increasing delay|wait(?:ing|s)? longer",
     ("backoff", "delay", "exponential")),
    # network and connectivity
    (r"no network|without (?:a )?network|offline|network (?:is )?(?:down|lost|back)|lose(?:s)? (?:the )?connection"
     r"|connectivity|reconnect\w*|comes? back online|goes? online",
     ("online", "offline", "reconnect", "network")),
    # focus and visibility
    (r"\b(?:tab|window|page)s? (?:becomes? |is |gets? )?(?:visible|hidden|focused|active)|visibility|\bvisible\b"
     r"|regains? focus|refocus\w*|switch(?:es)? back",
     ("focus", "focused", "visibility", "visibilitychange")),
    # grouping many changes into one
    (r"\bgroup(?:ed|s|ing)?\b|in one go|at once|coalesc\w*|\bbundl\w*", ("batch", "batched", "flush")),
    (r"\btold\b|\btells?\b|\binform(?:ed|s)?\b|\balert(?:ed|s)?\b|\bsubscribers?\b|\blisteners?\b",
     ("notify", "listeners", "subscribe", "emit")),
    # equality and identity
    (r"same (?:object|reference|instance|value)s?|\bidentical\b|unchanged|did not change|didn't change"
     r"|structural(?:ly)? shar\w*|deep(?:ly)? equal\w*",
     ("equal", "equals", "deep", "shallow", "replace")),
    # duplicates and concurrency
    (r"\btwice\b|duplicat\w*|de-?dup\w*|same (?:moment|time)|at the same time|concurrent\w*|simultaneous\w*",
     ("dedupe", "pending", "promise", "inflight", "lock")),
    (r"in[ -]flight|ongoing|already running|still running|under way", ("pending", "promise", "fetching", "active")),
    # serialising and restoring state
    (r"seriali[sz]\w*|persist\w*|save (?:it |them )?to (?:disk|storage)|snapshot\w*",
     ("dehydrate", "serialize", "dump", "encode", "persist", "json")),
    (r"restor\w*|re-?hydrat\w*|load(?:ed|s)? back|bring back|revive\w*", ("hydrate", "restore", "load", "decode")),
    (r"on the server|server[ -]side|\bssr\b", ("server", "ssr", "isserver")),
    # stopping work
    (r"cancel\w*|abort\w*|call(?:ed)? off|\binterrupt\w*", ("cancel", "abort", "signal", "cancelled")),
    (r"unsubscrib\w*|stops? listening|stops? watching|\bunmount\w*", ("unsubscribe", "remove", "observer", "destroy")),
    # transforming and deriving
    (r"transform\w*|\bderiv\w*|\bpart of (?:the )?(?:data|result|state)|\bsubset\b|\bproject(?:ion|ed)\b",
     ("select", "selector", "map", "transform")),
    (r"every (?:render|time|call)|run again|re-?run\w*|recomput\w*|recalculat\w*|memo\w*",
     ("memo", "memoize", "cache", "cached")),
    # dropping items from a collection
    (r"\bdrop(?:s|ped|ping)?\b|\btrim\w*|\btruncat\w*|oldest|\bcapped\b", ("slice", "remove", "trim", "shift")),
    # time
    (r"after a (?:while|delay|timeout)|\bschedul\w*|\btimers?\b|\bdelay(?:ed|s)?\b",
     ("timeout", "settimeout", "schedule", "timer", "delay")),
    (r"periodic\w*|every \w+ seconds|\bpoll(?:s|ed|ing)?\b|\binterval\b", ("interval", "setinterval", "poll")),
    # watching reads and changes
    (r"keeps? track|\btrack(?:s|ed|ing)?\b|\baccessed\b", ("track", "tracked")),
    # errors and outcomes
    (r"\bfail(?:s|ed|ure|ures|ing)?\b|goes wrong|went wrong|\bcrash\w*", ("error", "fail", "exception", "reject")),
    (r"\bsucce\w*", ("success", "resolve")),
    # web and frameworks
    (r"log(?:ged|s)? in|sign(?:ed|s)? in", ("login", "auth", "authenticate")),
    (r"log(?:ged|s)? out|sign(?:ed|s)? out", ("logout",)),
    (r"time ?zones?", ("tz", "timezone", "zoneinfo")),
    (r"translat\w*|internationali[sz]\w*", ("i18n", "gettext", "trans", "translation")),
    (r"locali[sz]\w*", ("l10n", "locale", "localize")),
    (r"permissions?|allowed to|access rights", ("perm", "permission", "access")),
    (r"\bundo\b|roll(?:ed|s)? back|revert\w*", ("rollback", "revert")),
    (r"all or nothing|atomic\w*", ("atomic", "transaction", "commit", "rollback")),
    (r"query string|url parameters", ("params", "querystring", "urlencode")),
    (r"\bpaginat\w*|page by page|\bpages\b", ("page", "paginator", "pages", "offset", "cursor")),
    (r"compress\w*|\bgzip\w*", ("gzip", "deflate", "compress", "decompress")),
    (r"\bescap\w*|\bsanitiz\w*|\bxss\b|injection", ("escape", "quote", "sanitize", "safe")),
    (r"thread[ -]safe\w*|\bmutex\w*|race condition", ("lock", "thread", "mutex")),
    (r"\bcop(?:y|ies|ied)\b", ("copy", "clone", "deepcopy")),
    (r"\bplug-?ins?\b|extension points?|\bhooks?\b", ("hook", "plugin", "register", "signal")),
    (r"environment variables?", ("env", "environ", "getenv")),
    (r"command[ -]line", ("cli", "argv", "argparse", "command")),
    (r"\bredirect\w*", ("redirect", "location")),
)

_COMPILED = tuple((re.compile(pattern), terms) for pattern, terms in CONCEPTS)


def concept_terms(prompt: str) -> list[str]:
    """The code words for the everyday phrases in ``prompt`` (:data:`CONCEPTS`), in table order, once each."""
    text = (prompt or "").lower()
    out: list[str] = []
    for pattern, terms in _COMPILED:
        if pattern.search(text):
            out.extend(t for t in terms if t not in out)
    return out
