/// Something with an area.
pub trait Area {
    fn area(&self) -> f64;
}

pub struct Square {
    pub side: f64,
}

impl Area for Square {
    fn area(&self) -> f64 {
        helper(self.side)
    }
}

fn helper(x: f64) -> f64 {
    x * x
}
