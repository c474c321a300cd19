mod shapes;

use crate::shapes::Area;

fn main() {
    let s = shapes::Square { side: 2.0 };
    println!("{}", s.area());
}
