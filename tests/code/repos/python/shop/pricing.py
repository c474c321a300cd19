"""Prices and discounts."""

TAX_RATE = 0.2


def apply_discount(amount, percent):
    """Return amount reduced by percent."""
    return amount * (1 - percent / 100)


class PriceRule:
    def matches(self, item):
        return True
