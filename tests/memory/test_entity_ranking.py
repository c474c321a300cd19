"""An entity's exact name ranks its own memories first.

On 10,478 real facts (Debian package records, entity = package) "perl version" returned
other perl-* packages and missed perl's own version fact: their descriptions say "perl"
more often than perl's version fact does. Recall now finds the entity the query names
(``perl``) and ranks its memories that hold the query's other words ("version") first."""

from pathlib import Path

import pytest

from nervapack_core.memory import MemoryStore
from nervapack_core.memory.recall import named_entities

DPKG_STATUS = Path("/var/lib/dpkg/status")

# shaped like the dpkg records: each package an entity with a version fact and a description fact
PACKAGES = {
    "perl": ("5.36.0-7+deb12u2", "Larry Wall's Practical Extraction and Report Language"),
    "perl-base": ("5.36.0-7+deb12u2", "minimal Perl system"),
    "perl-modules-5.36": ("5.36.0-7+deb12u2", "Core Perl modules"),
    "libperl5.36": ("5.36.0-7+deb12u2", "shared Perl library"),
    "libdpkg-perl": ("1.21.22", "Dpkg perl modules"),
    "liberror-perl": ("0.17029-2", "Perl module for error/exception handling in an OO-ish way"),
    "libjson-perl": ("4.10000-1", "module for manipulating JSON-formatted data"),
    "perl-openssl-defaults": ("7+b1", "version compatibility baseline for Perl OpenSSL packages"),
    "bash": ("5.2.15-2+b8", "GNU Bourne Again SHell"),
    "libc6": ("2.36-9+deb12u14", "GNU C Library: Shared libraries"),
}


def _specs(packages):
    out = []
    for pkg, (version, description) in packages.items():
        out.append({"content": f"Version {version}", "entities": [pkg]})
        out.append({"content": f"{pkg}: {description}", "entities": [pkg]})
    return out


@pytest.fixture
def packages(tmp_path):
    with MemoryStore(tmp_path / "m.db", graph_db=tmp_path / "none.db") as m:
        m.import_nodes(_specs(PACKAGES))
        yield m


def _about(m, item_id):
    return {e["content"] for e in m.why(item_id)["entities"]}


def test_perl_version_ranks_perls_version_first(packages):
    r = packages.recall("perl version", budget_tokens=400)
    first = r.items[0]
    assert first.content == "Version 5.36.0-7+deb12u2" and _about(packages, first.id) == {"perl"}
    assert r.stage == "entity"
    # the other perl-* packages still come, after it
    assert len({i.id for i in r.items}) > 1


def test_the_longest_name_wins_and_names_do_not_overlap(packages):
    r = packages.recall("perl-base version", budget_tokens=400)
    assert r.items[0].content.startswith("Version") and _about(packages, r.items[0].id) == {"perl-base"}
    r = packages.recall("libperl5.36 version", budget_tokens=400)
    assert _about(packages, r.items[0].id) == {"libperl5.36"} and r.items[0].content.startswith("Version")
    entities, rest = packages.read(lambda conn: named_entities(conn, "default", "perl modules 5.36 version"))
    assert [packages.get_node(e)["content"] for e in entities] == ["perl-modules-5.36"] and rest == ["version"]


def test_a_name_alone_ranks_all_its_memories_first(packages):
    r = packages.recall("libc6", budget_tokens=400)
    top = [i for i in r.items if i.kind == "fact"][:2]
    assert {i.content for i in top} == {"Version 2.36-9+deb12u14", "libc6: GNU C Library: Shared libraries"}
    assert [i.kind for i in r.items[:2]] == ["fact", "fact"]


def test_names_are_per_namespace_and_stopwords_name_nothing(packages):
    packages.store("the: an article", kind="fact", entities=["the"])
    entities, rest = packages.read(lambda conn: named_entities(conn, "default", "the bash version"))
    assert [packages.get_node(e)["content"] for e in entities] == ["bash"] and rest == ["version"]
    assert packages.read(lambda conn: named_entities(conn, "other", "perl version")) == ([], ["perl", "version"])
    assert packages.recall("perl version", namespace="other").items == []


def test_a_forgotten_entity_names_nothing(packages):
    packages.forget(entity="perl")
    r = packages.recall("perl version", budget_tokens=400)
    assert r.stage != "entity"
    assert all(_about(packages, i.id) != {"perl"} for i in r.items if i.kind != "entity")


def _dpkg_records(limit=None):
    rec, out = {}, []
    for line in DPKG_STATUS.read_text(encoding="utf-8", errors="replace").splitlines() + [""]:
        if not line.strip():
            if rec.get("Package") and rec.get("Version"):
                out.append(rec)
            rec = {}
            continue
        if line[0] in " \t":
            continue
        key, _, value = line.partition(":")
        rec[key] = value.strip()
    return out[:limit]


@pytest.mark.skipif(not DPKG_STATUS.is_file(), reason="no /var/lib/dpkg/status on this machine (not Debian)")
def test_real_package_records_rank_the_named_package_first(tmp_path):
    """This machine's own package records (Package, Version, Description): for every package
    named in a query "<package> version", its own version fact comes first."""
    records = _dpkg_records()
    packages = {r["Package"]: (r["Version"], r.get("Description", "")) for r in records}
    with MemoryStore(tmp_path / "m.db", graph_db=tmp_path / "none.db") as m:
        m.import_nodes(_specs(packages))
        # the packages whose names other packages' records share most: perl, python3, libc6, … if present
        crowded = sorted(packages, key=lambda p: -sum(p in other for other in packages))[:25]
        misses = []
        for pkg in crowded:
            r = m.recall(f"{pkg} version", budget_tokens=300, log=False, touch=False)
            first = r.items[0] if r.items else None
            if first is None or first.content != f"Version {packages[pkg][0]}" or _about(m, first.id) != {pkg}:
                misses.append(pkg)
        assert misses == [], misses
