// solver.cpp - an ordinary C++ program that knows nothing of weft: a
// namespace, a class with methods, an overloaded function and a template.
// Compiled with -g -finstrument-functions and linked with
// libweft-instrument, its regions are named as a person reads them
// ("ns::Solver::step(int)") and point at their lines here (README:
// "Tracing a program without changing it").
//
//   solver [STEPS]
//
// tests/e2e_instrument_cxx.sh traces it and finds each function's first
// line by its name in this file: keep one definition per line.
#include <cstdio>
#include <cstdlib>

namespace ns {

class Solver {
public:
    explicit Solver(double start) : x_(start) {}
    double step(int i);
    double value() const { return x_; }

private:
    double x_;
};

double Solver::step(int i)
{
    x_ = x_ / 2 + i;
    return x_;
}

long scale(long v)
{
    return v * 3;
}

double scale(double v)
{
    return v * 1.5;
}

template <typename T>
T twice(T v)
{
    return v + v;
}

} // namespace ns

int main(int argc, char **argv)
{
    int steps = argc > 1 ? std::atoi(argv[1]) : 10;
    ns::Solver s(1.0);

    for (int i = 0; i < steps; i++)
        s.step(i);
    long a = ns::scale(static_cast<long>(steps));
    double b = ns::scale(s.value());
    std::printf("%ld %.3f %d %.3f\n", a, b, ns::twice(steps), ns::twice(b));
    return 0;
}
