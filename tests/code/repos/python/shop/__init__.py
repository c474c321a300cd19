from .cart import Cart
