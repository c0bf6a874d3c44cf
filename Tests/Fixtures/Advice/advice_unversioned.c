/* Area: advice as code (versions).
 * Purpose: an advice object built without aspects_advice.h: no aspects_advice_version, so no
 * one knows which record its function expects; check and the preload refuse it. */
__attribute__((visibility("default"))) void probe_describe(void *inv) { (void)inv; }
