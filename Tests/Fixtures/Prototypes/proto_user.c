/* Area: prototype rules (GOT rewriting).
 * Purpose: a library that imports fx_add from libfx and is dlopened after start-up, so a
 * test can check that objects loaded later are rewritten too. */
int fx_add(int a, int b);
int fx_user(int a) { return fx_add(a, 100); }
