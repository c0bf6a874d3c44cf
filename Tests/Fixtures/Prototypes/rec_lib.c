/* Area: prototype rules / re-entry.
 * Purpose: a recursive function in a shared library: built -fPIC, its call to itself goes
 * through the PLT (semantic interposition), so a prototype rule's stub sees every level, and
 * rec_via calls rec through a second function of the library (rec -> rec_step@plt ->
 * rec@plt). A test checks that each level is a call of its own: advised and counted. */
int rec_step(int n);
int rec(int n) { return n <= 0 ? 0 : 1 + rec_step(n - 1); }
int rec_step(int n) { return rec(n); }
