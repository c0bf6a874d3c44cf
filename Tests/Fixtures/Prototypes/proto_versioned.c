/* Area: prototype rules / symbol versions.
 * Purpose: a library exporting two versions of fx_ver (V1 returns 1, the default V2 returns
 * 2), so a test can advise one version by name@VERSION. Built with proto_versioned.map. */
__asm__(".symver fx_ver_v1, fx_ver@V1");
__asm__(".symver fx_ver_v2, fx_ver@@V2");
int fx_ver_v1(void) { return 1; }
int fx_ver_v2(void) { return 2; }
