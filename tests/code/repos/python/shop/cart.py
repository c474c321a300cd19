from . import pricing
from .pricing import apply_discount, PriceRule


class BulkRule(PriceRule):
    """Discount for large orders."""

    def matches(self, item):
        return item.quantity > 10


class Cart:
    """A shopping cart."""

    def __init__(self):
        self.items = []

    def add(self, item):
        self.items.append(item)
        self._touch()

    def _touch(self):
        pass

    async def total(self, percent=0):
        def subtotal():
            return sum(i.price for i in self.items)

        return apply_discount(subtotal(), percent)
