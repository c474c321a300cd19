import { add, double } from './math';
const util = require('./math.js');

class Calculator {
  constructor() {
    this.total = 0;
  }

  plus(n) {
    this.total = add(this.total, n);
    return this;
  }
}

class Scientific extends Calculator {
  square() {
    return double(this.total);
  }
}

module.exports = Calculator;
