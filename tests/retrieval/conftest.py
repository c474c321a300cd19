"""A small repository, ingested once per test session (hashing embedder: fast and deterministic)."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import pytest

FILES = {
    "shop/__init__.py": '''
        """A tiny shop: carts, pricing, payments."""
        from .cart import Cart
        from .models import Item
    ''',
    "shop/models.py": '''
        """Things a customer can buy."""


        class Item:
            """A product with a name and a unit price in cents."""

            def __init__(self, name: str, price_cents: int):
                self.name = name
                self.price_cents = price_cents

            def label(self) -> str:
                return f"{self.name} ({self.price_cents / 100:.2f})"


        class DigitalItem(Item):
            """A downloadable product: no shipping."""

            def download_url(self) -> str:
                return "https://example.invalid/" + self.name
    ''',
    "shop/pricing.py": '''
        """Discounts, taxes and invoices."""

        TAX_RATE = 0.2


        def apply_discount(subtotal: float, coupon: str | None) -> float:
            """Reduce the subtotal by the coupon's percentage (unknown coupons change nothing)."""
            percent = {"SPRING10": 10, "VIP25": 25}.get(coupon or "", 0)
            return subtotal * (100 - percent) / 100


        def compute_tax(amount: float) -> float:
            """Value-added tax owed on an amount."""
            return round(amount * TAX_RATE, 2)


        def render_invoice(cart, customer: str) -> str:
            """Render a plain-text invoice for a cart.

            The invoice lists every line item with its quantity and price, then the
            subtotal, the discount, the tax and the grand total. It is meant for
            e-mail receipts, so it only uses ASCII characters and fixed-width columns.

            Long customer names are cut to forty characters.
            """
            lines = []
            lines.append("INVOICE")
            lines.append("Customer: " + customer[:40])
            lines.append("-" * 40)
    ''' + "".join(f"            lines.append('line {i:02d}: ' + str(len(cart.items) + {i}))\n" for i in range(60)) + '''
            lines.append("-" * 40)
            lines.append("TOTAL " + str(cart.total()))
            return "\\n".join(lines)
    ''',
    "shop/cart.py": '''
        """The shopping cart."""
        from .models import Item
        from .payments import charge_card
        from .pricing import apply_discount, compute_tax


        class Cart:
            """A customer's basket of items with an optional coupon."""

            def __init__(self):
                self.items = []
                self.coupon = None

            def add_item(self, item: Item, quantity: int = 1) -> None:
                """Put an item in the basket (several times for a quantity)."""
                for _ in range(quantity):
                    self.items.append(item)

            def remove_item(self, item: Item) -> None:
                self.items.remove(item)

            def use_coupon(self, code: str) -> None:
                self.coupon = code

            def subtotal(self) -> float:
                return sum(i.price_cents for i in self.items) / 100

            def total(self) -> float:
                """What the customer pays: subtotal after discount, plus tax."""
                discounted = apply_discount(self.subtotal(), self.coupon)
                return discounted + compute_tax(discounted)

            def checkout(self, gateway) -> str:
                """Charge the customer's card for the total and empty the cart."""
                receipt = charge_card(gateway, self.total())
                self.items = []
                return receipt

            def __len__(self) -> int:
                return len(self.items)
    ''',
    "shop/payments.py": '''
        """Talking to the payment gateway."""
        import time


        def retry_with_backoff(action, attempts: int = 3):
            """Call action until it succeeds, sleeping twice as long after each failure."""
            delay = 0.1
            for attempt in range(attempts):
                try:
                    return action()
                except ConnectionError:
                    time.sleep(delay)
                    delay *= 2
            raise ConnectionError("gateway unreachable")


        def charge_card(gateway, amount: float) -> str:
            """Ask the gateway to charge the amount; returns the receipt id."""
            return retry_with_backoff(lambda: gateway.charge(amount))
    ''',
    "shop/alpha.py": '''
        from . import beta


        def ping():
            return beta.pong()
    ''',
    "shop/beta.py": '''
        from . import alpha


        def pong():
            return alpha.__name__
    ''',
    "shop/orphan.py": '''
        def lonely():
            """Nobody imports this module."""
            return 42
    ''',
    "tests/test_cart.py": '''
        from shop.cart import Cart
        from shop.models import Item


        def test_total_includes_tax():
            cart = Cart()
            cart.add_item(Item("pen", 100))
            assert cart.total() == 1.2
    ''',
    "README.md": '''
        # Shop

        A toy shop used to test NervaPack retrieval.

        ## Discounts

        Coupons are applied by `apply_discount` before the tax is added with `compute_tax`.
        Unknown codes are ignored.

        ## Payments

        `charge_card` retries failed gateway calls with exponential backoff.
    ''',
}


def write_repo(root: Path, files: dict[str, str] = FILES) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return root


def ingested_git_repo(root: Path, files: dict[str, str]) -> Path:
    """``files`` written under ``root``, committed to a new git repository and ingested without
    embeddings (one worker): a small real repository for a ranking test."""
    from nervapack_core.code.ingest.pipeline import ingest

    write_repo(root, files)
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.email=t@example.invalid", "-c", "user.name=t", "commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    ingest(root, embed=False, workers=1)
    return root


@pytest.fixture(scope="session")
def shop_repo(tmp_path_factory) -> Path:
    """The fixture repository, ingested with the hashing embedder (real SQLite, real Chroma)."""
    from nervapack_core.code.ingest.pipeline import ingest

    root = write_repo(tmp_path_factory.mktemp("shop"))
    ingest(root, embed=True, embedder="hashing", workers=1)
    return root


@pytest.fixture(scope="session")
def shop_retriever(shop_repo):
    from nervapack_core.code.retrieval.retriever import Retriever

    r = Retriever(shop_repo)
    yield r
    r.close()


@pytest.fixture(scope="session")
def make_shop():
    """``make_shop(root)`` writes a fresh copy of the fixture repository (not ingested)."""
    return write_repo
