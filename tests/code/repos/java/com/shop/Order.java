package com.shop;

import com.shop.Item;

/** An order of items. */
public class Order extends Base implements Payable {
    public int total(Item item) {
        return item.getPrice() + fee();
    }

    private int fee() {
        return 1;
    }
}

interface Payable {
    int total(Item item);
}

class Base {}
