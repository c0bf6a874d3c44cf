/* Benchmarks/proto_bench_lib.c — functions outside the catalog, advised from prototypes. */
int fx_one(int a) { return a + 1; }
int fx_four(int a, int b, int c, int d) { return a + b + c + d; }
