/* branch_protection_aarch64.h — BTI for the hand-written code of 64-bit ARM (stub_aarch64.h,
 * trampolines_aarch64.S).
 *
 * On a CPU with BTI (Armv8.5), the loader maps the code of an object marked with the BTI
 * property (.note.gnu.property, GNU_PROPERTY_AARCH64_FEATURE_1_BTI) as guarded pages: an
 * indirect branch into them must land on a `bti` instruction, or the process gets SIGILL. An
 * object is marked only when every one of its inputs is, so the library is marked when its C
 * is compiled with -mbranch-protection=standard (the compiler puts the pads in the C and
 * defines __ARM_FEATURE_BTI_DEFAULT) and these files carry the pads and the note too
 * (scripts/build-aarch64.sh). Unmarked, the library still runs in a BTI-protected program:
 * its own pages are simply not guarded.
 *
 * The pad is `bti c` (hint #34, so an assembler for Armv8.0 takes it and a CPU without BTI
 * runs it as a no-op): it accepts `blr` from anywhere and `br` through x16 or x17, which are
 * the only ways in — a PLT entry's `br x17`, a call through a function pointer, and our own
 * `br x16` (ASP_TAIL) into a count_stats thunk or a lazy or slow entry. Pointer
 * authentication needs nothing here: no code of these files signs or checks x30; it keeps
 * the caller's (signed or not) and returns through it untouched. */

.macro ASP_LANDING_PAD
    hint #34 /* bti c */
.endm

/* The BTI property of this object file, when the build asks for branch protection. */
.macro ASPECTS_ARCH_NOTES
#if defined(__ARM_FEATURE_BTI_DEFAULT) && __ARM_FEATURE_BTI_DEFAULT
    .pushsection .note.gnu.property, "a"
    .balign 8
    .long 4                 /* n_namesz: "GNU\0" */
    .long 16                /* n_descsz: one property of 4 bytes, padded to 8 */
    .long 5                 /* n_type: NT_GNU_PROPERTY_TYPE_0 */
    .asciz "GNU"
    .long 0xc0000000        /* GNU_PROPERTY_AARCH64_FEATURE_1_AND */
    .long 4                 /* pr_datasz */
    .long 1                 /* GNU_PROPERTY_AARCH64_FEATURE_1_BTI */
    .long 0                 /* padding */
    .popsection
#endif
.endm
