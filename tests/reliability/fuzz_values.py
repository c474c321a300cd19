"""Hostile values for the fuzz tests (hypothesis strategies): random Unicode, FTS5 operators, SQL
fragments, NUL bytes, control characters, script payloads, paths leaving the workspace, strings
up to 1 MB, and integers from -2**63 to 10**30. Every test runs them derandomized (the same
examples on every run) and bounded."""

from __future__ import annotations

from hypothesis import strategies as st

SECRET = "FUZZ_OUTSIDE_SECRET"

# paths that lead out of a workspace whose root is <tmp>/ws/a/b/c: the relative ones land on planted
# files holding SECRET (<tmp>/ws/a/etc/passwd, <tmp>/ws/etc/passwd, <tmp>/ws/a/b/outside/secret.py)
ESCAPING_PATHS = ("../../etc/passwd", "../../../etc/passwd", "../outside/secret.py", "/etc/passwd", "/etc",
                  "..", "/", "~/.ssh/id_rsa", "file:///etc/passwd", "shop/../../outside/secret.py",
                  "shop/../../../etc/passwd", "\\..\\..\\etc\\passwd")
SPECIAL = (
    "", " ", '"', '""', "'", "*", "a*", "^a", "NEAR(a b)", "NEAR(compute tax, 2)", "a OR b AND NOT c", "OR", "AND",
    "NOT", "{prompt content}: x", "content:tax", "tax -cart", "(", ")", "((((", ":", "-", "+", "a NOT",
    "'; DROP TABLE mem_nodes; --", "\" OR 1=1 --", "1; SELECT * FROM sqlite_master", "%", "_", "%%", "\\", "\\%",
    "NULL", "null", "None", "\x00", "a\x00b", "\x00" * 10, "\x1b[2J\x1b]0;pwned\x07", "\x7f\x9b\x9d", "\u202e",
    "\ufeff", "\ud7ff", "\U0001f600", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "ﷺ" * 10, "e\u0301" * 20, "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>", "[x](javascript:alert(1))", "compute_tax", "compute tax", "Cart.checkout",
    "shop/tax.py", "shop/", "shop", "tax.py", "README.md", "2026-01-01", "9999-12-31T23:59:59Z", "0000-00-00",
    "HEAD", "HEAD~99999", "--help", "-h", "--json", "-", *ESCAPING_PATHS,
)
INTS = (-(2 ** 63), -(2 ** 31), -1, 0, 1, 2, 3, 5, 20, 50, 300, 2 ** 31 - 1, 2 ** 31, 2 ** 63 - 1, 2 ** 63, 2 ** 64,
        10 ** 23, 10 ** 30)


def texts() -> st.SearchStrategy[str]:
    """A hostile string: a special one, random Unicode (any code point but lone surrogates, which
    no JSON or UTF-8 channel carries), a mix of both, or a long run up to 1 MB."""
    unicode = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
    long = st.builds(lambda unit, n: unit * n, st.sampled_from(["a", "%", '"', "*", "é", "a b ", "(", "\x00"]),
                     st.sampled_from([1_000, 60_000, 1_000_000]))
    mixed = st.builds(lambda a, b: a + " " + b, st.sampled_from(SPECIAL), unicode)
    return st.one_of(st.sampled_from(SPECIAL), unicode, mixed, long)


def ints() -> st.SearchStrategy[int]:
    return st.one_of(st.sampled_from(INTS), st.integers(-1000, 5000))


def floats() -> st.SearchStrategy[float]:
    return st.one_of(st.sampled_from([-1.0, 0.0, 0.5, 1.0, 2.0, 1e308, -1e308]), st.floats(allow_nan=False,
                                                                                           allow_infinity=False))


def any_json() -> st.SearchStrategy:
    """A value of any JSON type (a wrong type for most parameters)."""
    scalars = st.one_of(st.none(), st.booleans(), ints(), floats(), texts())
    return st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                         st.dictionaries(st.text(max_size=5), inner, max_size=3)),
                        max_leaves=6)
