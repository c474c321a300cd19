#pragma once

namespace geo {

class Shape {
public:
    virtual double area() const = 0;
};

class Square : public Shape {
public:
    double area() const override;
private:
    double side;
};

}
