// The symbolizer's C++ fixture: namespaced functions, overloads, a template and a method,
// whose mangled names the symbol tables hold and the reports show demangled, as nm -C did.
#include <cstdio>
#include <vector>

namespace shapes {
struct Square {
    int side;
    int area() const;
};

int __attribute__((noinline)) Square::area() const { return side * side; }

int __attribute__((noinline)) scaled(int x) { return x * 3; }
int __attribute__((noinline)) scaled(int x, int by) { return x * by; }

template <typename T> T __attribute__((noinline)) total(const std::vector<T> &v) {
    T s{};
    for (const T &x : v) s += x;
    return s;
}
template int total<int>(const std::vector<int> &);
}  // namespace shapes

int main(int argc, char **) {
    shapes::Square q{argc + 1};
    std::vector<int> v{q.area(), shapes::scaled(argc), shapes::scaled(argc, 5)};
    std::printf("%d\n", shapes::total(v));
    return 0;
}
