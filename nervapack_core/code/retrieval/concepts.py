"""Everyday phrases of a question -> the words code uses for the same idea.

People ask "when is the cached data out of date?"; the code says ``isStale``. Neither the names'
full-text index nor a small embedding model bridges such a gap: the words share no letters, and
MiniLM scores "is stale" at 0.30 against that question, below 60 other definitions of a small
repository. This table holds general programming vocabulary (no project's names): phrases as a
reader writes them, each with the terms that code, comments and identifiers use for the idea.
:func:`prompt.fts_query` adds the terms to the prompt's own words, as it adds
:data:`prompt.ABBREVIATIONS` for single words.

Each pattern must not fire on a phrase that means something else ("later requests" is not a timer,
"notice" the verb is not a flash message): every entry was checked against the question sets in
``benchmarks/questions`` (no question may lose an answer), and the sets in ``questions/heldout2``
were kept unread while the table was written, as a check that it helps questions it was not made for.
"""

from __future__ import annotations

import re

__all__ = ["CONCEPTS", "SCANNED", "concept_terms"]

SCANNED = 4000  # characters of a prompt read for phrases (see concept_terms)

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
    (r"on the server|server[ -]side|\bssr\b", ("server", "ssr")),
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
    # watching and switching
    (r"\bwatch(?:es|ed|ing|ers?)?\b", ("observer", "observers", "listener", "subscribe")),
    (r"switch(?:ed|es)? off|turn(?:ed|s)? off|\bdisabl\w*", ("disabled", "enabled")),
    (r"in progress|right now|currently running|\bbusy\b|\bspinner\b", ("fetching", "pending", "active", "loading")),
    (r"\bwipe\w*|\bempt(?:y|ies|ied)\b|\bclear(?:s|ed|ing)? (?:all|every|out)|\breset\w*",
     ("clear", "reset", "remove")),
    # templates and pages
    (r"base (?:page|template|layout)|\blayouts?\b|child templates?|template inherit\w*|named sections?",
     ("extends", "block", "inheritance", "parent")),
    (r"one[- ]time (?:notices?|messages?)|flash(?:ed)? messages?"
     r"|(?:status|success|info) messages? (?:shown|displayed)",
     ("messages", "message", "flash", "storage")),
    (r"(?:safe|usable|suitable)(?: to put)? (?:in|for) (?:a |the )?(?:web address|url|link)"
     r"|url[- ]friendly|web address",
     ("slug", "slugify", "url", "quote")),
    (r"not found|\b404\b|does not exist|doesn't exist", ("404", "notfound", "exist")),
    (r"security headers?|https only|strict transport|sniff\w*|guess(?:ing)? (?:the )?content[- ]types?|clickjack\w*",
     ("security", "hsts", "nosniff", "ssl", "xframe", "header")),
    (r"cross[- ]site request|forged requests?|anti-?forgery|\bcsrf\b", ("csrf", "token")),
    # accounts
    (r"(?:forgot(?:ten)?|lost|reset(?:ting)?) (?:my |your |the |a )?password|password[- ]reset",
     ("password", "reset", "token")),
    (r"stops? working|no longer works?|single[- ]use|one[- ]time (?:link|use|token)|valid for",
     ("token", "expire", "timeout")),
    (r"(?:stor(?:e|ed|ing)|hash(?:ed|es|ing)?|keep(?:s|ing)?) (?:the |user )?passwords?|password (?:storage|hashing)",
     ("hasher", "hash", "salt")),
    (r"user ?name and password|login details", ("auth", "basic", "userinfo")),
    # databases
    (r"(?:several|multiple|many|two|more than one) databases|which database|read replicas?|database rout\w*",
     ("router", "route", "alias", "using", "replica")),
    (r"same (?:database )?query|one query per|n ?\+ ?1|eager(?:ly)? load\w*|join(?:ed|s|ing)? (?:tables?|rows?)",
     ("join", "related", "prefetch", "eager")),
    (r"insert (?:a )?new row|update an existing|\bupsert\w*|new row|existing row",
     ("insert", "update", "upsert", "save")),
    (r"(?:rows|objects|records) (?:that )?(?:point|refer)|point(?:s|ing)? to (?:it|them)|\bcascad\w*"
     r"|dependent (?:rows|objects)",
     ("cascade", "collect", "related")),
    (r"\btotals?\b|\bsum(?:s|med)?\b|\baverages?\b|group(?:ed)? by|\baggregat\w*",
     ("aggregate", "annotate", "sum", "count", "avg")),
    (r"schema changes?|changes? to (?:the )?models?|alter(?:s|ing)? (?:a |the )?tables?",
     ("migration", "migrate", "operation", "alter")),
    # loading lazily, files and memory
    (r"\blaz(?:y|ily)\b|on first (?:use|access)|when first (?:used|accessed|read)", ("lazy", "setup", "getattr")),
    (r"in memory|on disk|temporary files?|\bspool\w*", ("memory", "temporary", "tempfile", "temp", "disk")),
    (r"\bupload\w*", ("upload", "multipart", "file")),
    (r"\bpickl\w*|\bunpickl\w*", ("pickle", "getstate", "setstate", "reduce")),
    (r"\bzip(?:ped)?\b|\barchives?\b", ("zip", "zipfile", "extract", "archive")),
    (r"certificate bundle|ca bundle|trusted certificates?", ("ca", "cert", "certs", "bundle", "verify")),
    # text and transport
    (r"percent[- ](?:escap|encod)\w*|url[- ]encod\w*|\bescaped characters",
     ("quote", "unquote", "escape", "percent")),
    (r"text encoding|character set|\bcharset\b|which encoding", ("encoding", "charset", "decode", "guess", "detect")),
    (r"\bstream(?:s|ed|ing)?\b", ("stream", "chunk", "iter", "raw")),
    (r"\bclos(?:e|ed|es|ing)\b|\breleas(?:e|ed|es|ing)\b|shut(?:s|ting)? down",
     ("close", "release", "shutdown", "clear")),
    (r"\be-?mails?\b", ("mail", "email", "smtp")),
    (r"\bvalidat\w*|\bis valid\b|\binvalid\b", ("validate", "validator", "valid", "errors")),
    (r"status (?:codes?|numbers?)", ("status", "status_code", "codes", "reason")),
    # general programming vocabulary
    (r"\bsort(?:s|ed|ing)?\b|\border(?:ed|ing)? by\b|\bin order\b", ("sort", "order", "ordering", "key", "reverse")),
    (r"\bhow many\b|\bnumber of\b", ("count", "len", "length", "size", "total")),
    (r"too (?:big|large|long)|size limit|maximum size|max(?:imum)? length", ("max", "limit", "size", "length")),
    (r"rate[- ]limit\w*|\bthrottl\w*|too many requests", ("throttle", "rate", "limit")),
    (r"remember(?:s|ed)? the result|avoid(?:s)? recomputing", ("cache", "cached", "memo", "lru")),
    (r"\bfall ?back\w*|if (?:it|that|this) fails", ("fallback", "default", "except")),
    (r"\bignor(?:e|es|ed|ing)\b|\bskip(?:s|ped|ping)?\b", ("ignore", "skip", "exclude")),
    (r"\bnested\b|\brecursi\w*", ("nested", "recursive", "recurse", "depth", "children")),
    (r"\bconvert\w*|\bcoerc\w*", ("convert", "to", "parse", "cast", "coerce")),
    (r"\bpars(?:e|es|ed|er|ing)\b", ("parse", "parser", "tokenize", "decode")),
    (r"human[- ]readable|\bpretty\b|\bformat(?:s|ted|ting)?\b", ("format", "display", "repr", "str")),
    (r"\bcompar(?:e|es|ed|ing|ison)\b|equal to\b", ("eq", "equal", "compare", "cmp")),
    (r"\blog(?:s|ged|ging)? (?:a |the )?(?:message|warning|error)|\bwarn(?:s|ed|ing|ings)?\b",
     ("log", "logger", "warn", "warning")),
    (r"\bthreads?\b|in parallel|\bworkers?\b", ("thread", "pool", "executor", "lock", "worker")),
    (r"\bregist(?:er|ers|ered|ering|ry)\b", ("register", "registry", "registered")),
    (r"\bbackends?\b|swap(?:pable)? (?:the |an? )?implementation|\bpluggable\b",
     ("backend", "adapter", "engine", "driver")),
    (r"current(?:ly)? (?:logged[- ]in )?user|logged[- ]in users?", ("user", "auth", "login", "session")),
    (r"\bsign(?:ed|ing|ature|atures)?\b|\btamper\w*", ("sign", "signer", "signature", "hmac", "secret")),
    (r"\bencrypt\w*|\bdecrypt\w*", ("encrypt", "decrypt", "cipher", "key")),
    (r"\brandom\w*|unique (?:id|identifier|name)s?|\buuids?\b", ("random", "uuid", "token", "unique")),
    (r"time ?outs?\b|takes too long|\bhangs?\b", ("timeout", "deadline")),
    (r"\bstart ?up\b|when the (?:app|application|program|server) starts|\bboot\w*",
     ("init", "setup", "ready", "startup")),
    (r"\bdecorat\w*", ("decorator", "wraps", "wrapper")),
    (r"\bby hand\b|\bmanual(?:ly)?\b|\bimperative(?:ly)?\b", ("manual", "manually")),
    (r"drop-?downs?|select box|pick ?list|list of choices", ("select", "choice", "choices", "option")),
    (r"sample data|seed data|initial data|\bfixtures?\b", ("fixture", "fixtures", "loaddata")),
    (r"if-?else|if/else|\bconditional\w*|depend(?:s|ing)? on (?:a |the )?conditions?",
     ("case", "condition", "conditional")),
    (r"history (?:entry|entries|log)|\baudit\w*|who changed", ("log", "history", "logentry", "audit")),
    (r"\bannounc\w*|\bbroadcast\w*", ("signal", "send", "emit", "dispatch", "receiver")),
    (r"change requests?|write requests?", ("mutation", "mutate", "mutations")),
    (r"load (?:its |the )?data again|\bre-?load\w*|\brefresh\w*|fetch(?:es|ed)? again",
     ("refetch", "reload", "refresh")),
    (r"back to (?:idle|initial|the start|its initial)", ("reset", "idle", "initial")),
    (r"wait(?:s|ed)? on|\bawait\w*|\bpromises?\b", ("promise", "thenable", "await")),
    (r"\bjson\b", ("json", "dumps", "loads")),
    (r"\bdownload\w*", ("download", "stream", "content", "save")),
    (r"\bheaders?\b", ("header", "headers")),
)

_COMPILED = tuple((re.compile(pattern), terms) for pattern, terms in CONCEPTS)


def concept_terms(prompt: str) -> list[str]:
    """The code words for the everyday phrases in ``prompt`` (:data:`CONCEPTS`), in table order, once each.

    Only the first :data:`SCANNED` characters are read: a question is a sentence or two, the FTS
    expression keeps 64 terms (the prompt's own words first), and 113 patterns over a pasted megabyte
    would cost most of a second."""
    text = (prompt or "")[:SCANNED].lower()
    out: list[str] = []
    for pattern, terms in _COMPILED:
        if pattern.search(text):
            out.extend(t for t in terms if t not in out)
    return out
